// Explicit doppler.parts exercising every aggregation, uneven splits, glue
// between mismatched grids and looking through existing slices and
// assembles: each decomposed function computes what the original does.
// RUN: doppler-opt %s --doppler-decompose > %t.mlir
// RUN: doppler-interpret %t.mlir --compare %s --function aggregations | FileCheck %s
// RUN: doppler-interpret %t.mlir --compare %s --function batched | FileCheck %s
// RUN: doppler-interpret %t.mlir --compare %s --function glue | FileCheck %s
// RUN: doppler-interpret %t.mlir --compare %s --function look_through | FileCheck %s
// RUN: doppler-interpret %t.mlir --compare %s --function scalar | FileCheck %s
// The automatic choice too, at several block counts.
// RUN: sed -e 's/ {doppler.parts = array<i64: [0-9, ]*>}//' %s > %t.auto.mlir
// RUN: doppler-opt %t.auto.mlir --doppler-decompose=parts=3 > %t.3.mlir
// RUN: doppler-interpret %t.3.mlir --compare %s --function aggregations | FileCheck %s
// RUN: doppler-interpret %t.3.mlir --compare %s --function batched | FileCheck %s
// RUN: doppler-interpret %t.3.mlir --compare %s --function glue | FileCheck %s
// RUN: doppler-opt %t.auto.mlir --doppler-decompose=parts=6 > %t.6.mlir
// RUN: doppler-interpret %t.6.mlir --compare %s --function look_through | FileCheck %s
// RUN: doppler-interpret %t.6.mlir --compare %s --function scalar | FileCheck %s
// CHECK: max rel-error {{.*}} <= tolerance 1e-05: ok

// Contracted j split in 3 (uneven 3/3/2... of 7) under each aggregation.
func.func @aggregations(%x: tensor<5x7xf32>) -> (tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>) {
  %add = doppler.einsum "ij->i" join(identity) agg(add) (%x) {doppler.parts = array<i64: 2, 3>} : (tensor<5x7xf32>) -> tensor<5xf32>
  %e = doppler.einsum "ij->ij" join(exp) (%x) {doppler.parts = array<i64: 1, 7>} : (tensor<5x7xf32>) -> tensor<5x7xf32>
  %mul = doppler.einsum "ij->i" join(identity) agg(mul) (%e) {doppler.parts = array<i64: 1, 3>} : (tensor<5x7xf32>) -> tensor<5xf32>
  %max = doppler.einsum "ij->i" join(identity) agg(max) (%x) {doppler.parts = array<i64: 5, 2>} : (tensor<5x7xf32>) -> tensor<5xf32>
  %min = doppler.einsum "ij->i" join(sigmoid) agg(min) (%x) {doppler.parts = array<i64: 1, 4>} : (tensor<5x7xf32>) -> tensor<5xf32>
  return %add, %mul, %max, %min : tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>
}

// A batched product split along the batch, the contraction and columns.
func.func @batched(%a: tensor<3x6x10xf32>, %b: tensor<3x10x5xf32>) -> tensor<3x5x6xf32> {
  %c = doppler.einsum "bij,bjk->bki" join(mul) agg(add) (%a, %b) {doppler.parts = array<i64: 3, 1, 4, 2>}
      : (tensor<3x6x10xf32>, tensor<3x10x5xf32>) -> tensor<3x5x6xf32>
  %d = doppler.einsum "bki->bki" join(tanh) (%c) {doppler.parts = array<i64: 1, 3, 2>} : (tensor<3x5x6xf32>) -> tensor<3x5x6xf32>
  return %d : tensor<3x5x6xf32>
}

// Rows in 4, then a 2x2 grid, then a transposition with rows in 3.
func.func @glue(%x: tensor<9x8xf32>) -> tensor<8x9xf32> {
  %y = doppler.einsum "ij->ij" join(gelu) (%x) {doppler.parts = array<i64: 4, 1>} : (tensor<9x8xf32>) -> tensor<9x8xf32>
  %z = doppler.einsum "ij->ij" join(square) (%y) {doppler.parts = array<i64: 2, 2>} : (tensor<9x8xf32>) -> tensor<9x8xf32>
  %w = doppler.einsum "ij->ji" join(silu) (%z) {doppler.parts = array<i64: 3, 1>} : (tensor<9x8xf32>) -> tensor<8x9xf32>
  return %w : tensor<8x9xf32>
}

// Rotary-style halves: slices of a decomposed value, swapped and
// re-assembled, then consumed by a differently split einsum.
func.func @look_through(%x: tensor<6x8xf32>, %c: tensor<6x4xf32>) -> tensor<6x8xf32> {
  %y = doppler.einsum "ij->ij" join(tanh) (%x) {doppler.parts = array<i64: 3, 2>} : (tensor<6x8xf32>) -> tensor<6x8xf32>
  %lo = doppler.slice %y [0, 0] : tensor<6x8xf32> to tensor<6x4xf32>
  %hi = doppler.slice %y [0, 4] : tensor<6x8xf32> to tensor<6x4xf32>
  %a = doppler.einsum "ij,ij->ij" join(mul) (%lo, %c) {doppler.parts = array<i64: 2, 2>} : (tensor<6x4xf32>, tensor<6x4xf32>) -> tensor<6x4xf32>
  %r = doppler.assemble [1, 2] (%hi, %a) : tensor<6x4xf32>, tensor<6x4xf32> -> tensor<6x8xf32>
  %s = doppler.slice %r [1, 2] : tensor<6x8xf32> to tensor<5x6xf32>
  %z = doppler.einsum "ij->ji" join(neg) (%s) {doppler.parts = array<i64: 2, 3>} : (tensor<5x6xf32>) -> tensor<6x5xf32>
  %t = doppler.einsum "ij->ji" join(identity) (%z) : (tensor<6x5xf32>) -> tensor<5x6xf32>
  %f = doppler.fill 0.0 : tensor<1x6xf32>
  %u = doppler.assemble [2, 1] (%f, %t) : tensor<1x6xf32>, tensor<5x6xf32> -> tensor<6x6xf32>
  %g = doppler.fill 1.0 : tensor<6x2xf32>
  %v = doppler.assemble [1, 2] (%u, %g) : tensor<6x6xf32>, tensor<6x2xf32> -> tensor<6x8xf32>
  %out = doppler.einsum "ij,ij->ij" join(add) (%v, %y) {doppler.parts = array<i64: 6, 4>} : (tensor<6x8xf32>, tensor<6x8xf32>) -> tensor<6x8xf32>
  return %out : tensor<6x8xf32>
}

// A full reduction to a scalar, and a broadcast of it back.
func.func @scalar(%x: tensor<6x5xf32>) -> (tensor<f32>, tensor<6x5xf32>) {
  %s = doppler.einsum "ij->" join(square) agg(add) (%x) {doppler.parts = array<i64: 3, 2>} : (tensor<6x5xf32>) -> tensor<f32>
  %r = doppler.einsum "ij,->ij" join(div) (%x, %s) {doppler.parts = array<i64: 2, 2>} : (tensor<6x5xf32>, tensor<f32>) -> tensor<6x5xf32>
  return %s, %r : tensor<f32>, tensor<6x5xf32>
}
