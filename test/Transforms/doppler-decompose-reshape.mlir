// RUN: doppler-opt %s --split-input-file --doppler-decompose | FileCheck %s
// RUN: doppler-opt %s --split-input-file --doppler-decompose --verify-each -o /dev/null
// A doppler.reshape follows its input's blocks: one reshape per block where
// every block is a contiguous run of the result, else whole on the gathered
// input. (The interpreter checks the meaning: test/Interpreter/decompose-reshape.mlir.)

// A head split of a value cut along the batch: two block reshapes, and the
// consumer cut the same way reads them with no glue between.
// CHECK-LABEL: func.func @split_batch
// CHECK: %[[Q0:.*]] = doppler.einsum "btc->btc" join(relu) (%{{.*}}) : (tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
// CHECK: %[[Q1:.*]] = doppler.einsum "btc->btc" join(relu) (%{{.*}}) : (tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
// CHECK-NEXT: %[[H0:.*]] = doppler.reshape %[[Q0]] {doppler.device = #doppler.device<1>} : tensor<2x8x32xf32> -> tensor<2x8x4x8xf32>
// CHECK-NEXT: %[[H1:.*]] = doppler.reshape %[[Q1]] {doppler.device = #doppler.device<1>} : tensor<2x8x32xf32> -> tensor<2x8x4x8xf32>
// CHECK-NEXT: %[[E0:.*]] = doppler.einsum "bthe->bthe" join(exp) (%[[H0]])
// CHECK-NEXT: %[[E1:.*]] = doppler.einsum "bthe->bthe" join(exp) (%[[H1]])
// CHECK-NEXT: %[[E:.*]] = doppler.assemble [2, 1, 1, 1] (%[[E0]], %[[E1]])
// CHECK-NEXT: return %[[E]]
// CHECK-NOT: doppler.slice
func.func @split_batch(%x: tensor<4x8x32xf32>) -> tensor<4x8x4x8xf32> {
  %q = doppler.einsum "btc->btc" join(relu) (%x) {doppler.parts = array<i64: 2, 1, 1>}
      : (tensor<4x8x32xf32>) -> tensor<4x8x32xf32>
  %h = doppler.reshape %q {doppler.device = #doppler.device<1>, doppler.compute_cost = 1.0 : f64} : tensor<4x8x32xf32> -> tensor<4x8x4x8xf32>
  %e = doppler.einsum "bthe->bthe" join(exp) (%h) {doppler.parts = array<i64: 2, 1, 1, 1>}
      : (tensor<4x8x4x8xf32>) -> tensor<4x8x4x8xf32>
  return %e : tensor<4x8x4x8xf32>
}

// -----

// Cut along the channels at multiples of the head size: a reshape per head.
// CHECK-LABEL: func.func @split_channels
// CHECK-COUNT-4: doppler.reshape %{{.*}} : tensor<4x8x8xf32> -> tensor<4x8x1x8xf32>
// CHECK-NEXT: %[[H:.*]] = doppler.assemble [1, 1, 4, 1]
// CHECK-NEXT: return %[[H]]
func.func @split_channels(%x: tensor<4x8x32xf32>) -> tensor<4x8x4x8xf32> {
  %q = doppler.einsum "btc->btc" join(relu) (%x) {doppler.parts = array<i64: 1, 1, 4>}
      : (tensor<4x8x32xf32>) -> tensor<4x8x32xf32>
  %h = doppler.reshape %q : tensor<4x8x32xf32> -> tensor<4x8x4x8xf32>
  return %h : tensor<4x8x4x8xf32>
}

// -----

// A flatten of a value cut along the batch and the channels: the batch
// blocks are row blocks of the result.
// CHECK-LABEL: func.func @flatten_batch
// CHECK-COUNT-4: doppler.reshape %{{.*}} : tensor<2x8x16xf32> -> tensor<16x16xf32>
// CHECK-NEXT: %[[F:.*]] = doppler.assemble [2, 2]
// CHECK-NEXT: return %[[F]]
func.func @flatten_batch(%x: tensor<4x8x32xf32>) -> tensor<32x32xf32> {
  %q = doppler.einsum "btc->btc" join(relu) (%x) {doppler.parts = array<i64: 2, 1, 2>}
      : (tensor<4x8x32xf32>) -> tensor<4x8x32xf32>
  %f = doppler.reshape %q : tensor<4x8x32xf32> -> tensor<32x32xf32>
  return %f : tensor<32x32xf32>
}

// -----

// Unit dims do not count: [4, 1, 8] cut along its last dim drops the unit
// dim block by block.
// CHECK-LABEL: func.func @drop_unit
// CHECK-COUNT-2: doppler.reshape %{{.*}} : tensor<4x1x4xf32> -> tensor<4x4xf32>
// CHECK-NEXT: doppler.assemble [1, 2]
func.func @drop_unit(%x: tensor<4x1x8xf32>) -> tensor<4x8xf32> {
  %q = doppler.einsum "iuj->iuj" join(relu) (%x) {doppler.parts = array<i64: 1, 1, 2>}
      : (tensor<4x1x8xf32>) -> tensor<4x1x8xf32>
  %f = doppler.reshape %q : tensor<4x1x8xf32> -> tensor<4x8xf32>
  return %f : tensor<4x8xf32>
}

// -----

// A flatten of a value cut along the sequence: a block is not a contiguous
// run of rows, so the input is gathered, the reshape stays whole, and the
// consumer slices it.
// CHECK-LABEL: func.func @flatten_sequence
// CHECK: %[[Q:.*]] = doppler.assemble [1, 2, 1]
// CHECK-NEXT: %[[F:.*]] = doppler.reshape %[[Q]] : tensor<4x8x32xf32> -> tensor<32x32xf32>
// CHECK-NEXT: doppler.slice %[[F]] [0, 0] : tensor<32x32xf32> to tensor<16x32xf32>
// CHECK: doppler.slice %[[F]] [16, 0] : tensor<32x32xf32> to tensor<16x32xf32>
func.func @flatten_sequence(%x: tensor<4x8x32xf32>) -> tensor<32x32xf32> {
  %q = doppler.einsum "btc->btc" join(relu) (%x) {doppler.parts = array<i64: 1, 2, 1>}
      : (tensor<4x8x32xf32>) -> tensor<4x8x32xf32>
  %f = doppler.reshape %q : tensor<4x8x32xf32> -> tensor<32x32xf32>
  %e = doppler.einsum "ij->ij" join(exp) (%f) {doppler.parts = array<i64: 2, 1>}
      : (tensor<32x32xf32>) -> tensor<32x32xf32>
  return %e : tensor<32x32xf32>
}

// -----

// Channels cut in 3 (11, 11, 10) do not fall on head boundaries (8): whole.
// CHECK-LABEL: func.func @split_uneven
// CHECK: %[[Q:.*]] = doppler.assemble [1, 1, 3]
// CHECK-NEXT: doppler.reshape %[[Q]] : tensor<4x8x32xf32> -> tensor<4x8x4x8xf32>
func.func @split_uneven(%x: tensor<4x8x32xf32>) -> tensor<4x8x4x8xf32> {
  %q = doppler.einsum "btc->btc" join(relu) (%x) {doppler.parts = array<i64: 1, 1, 3>}
      : (tensor<4x8x32xf32>) -> tensor<4x8x32xf32>
  %h = doppler.reshape %q : tensor<4x8x32xf32> -> tensor<4x8x4x8xf32>
  return %h : tensor<4x8x4x8xf32>
}

// -----

// An argument (no blocks) and a whole einsum result: nothing to follow.
// CHECK-LABEL: func.func @whole
// CHECK: %[[R:.*]] = doppler.reshape %{{.*}} : tensor<6x4xf32> -> tensor<24xf32>
// CHECK: doppler.reshape %{{.*}} : tensor<6x4xf32> -> tensor<2x3x4xf32>
func.func @whole(%x: tensor<6x4xf32>) -> (tensor<24xf32>, tensor<2x3x4xf32>) {
  %r = doppler.reshape %x : tensor<6x4xf32> -> tensor<24xf32>
  %q = doppler.einsum "ij->ij" join(relu) (%x) {doppler.parts = array<i64: 1, 1>}
      : (tensor<6x4xf32>) -> tensor<6x4xf32>
  %s = doppler.reshape %q : tensor<6x4xf32> -> tensor<2x3x4xf32>
  return %r, %s : tensor<24xf32>, tensor<2x3x4xf32>
}
