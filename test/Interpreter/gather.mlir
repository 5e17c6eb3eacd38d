// doppler.gather in the interpreter: i32/i64 arguments seeded in
// [0, smallest gathered extent), integer tables, and two identities checked
// with --compare on the same seeded inputs: gathering twice equals gathering
// once at the gathered indices, and a gather along axis 1 equals a gather
// along axis 0 of the transpose, transposed back.
// RUN: split-file %s %t
// RUN: doppler-interpret %t/twice.mlir --seed 3 --compare %t/once.mlir --tolerance 0 | FileCheck %s --check-prefix=TWICE
// RUN: doppler-interpret %t/axis1.mlir --seed 5 --compare %t/transposed.mlir --tolerance 0 | FileCheck %s --check-prefix=AXIS
// Seeded indices of a table with one row are all 0: every row is row 0.
// RUN: doppler-interpret %t/one-row.mlir --seed 2 --compare %t/broadcast.mlir --tolerance 0 | FileCheck %s --check-prefix=ONEROW
// RUN: doppler-interpret %t/twice.mlir --seed 3 --json | FileCheck %s --check-prefix=JSON

// TWICE: output 0: tensor<2x3x4xf32>
// TWICE: output 1: tensor<2x3xi64> sum {{[0-9]+}} l2
// TWICE: ok
// AXIS: output 0: tensor<2x4x2xf64>
// AXIS: ok
// ONEROW: ok
// JSON: "type": "tensor<2x3xi64>"

//--- twice.mlir
func.func @f(%w: tensor<7x4xf32>, %a: tensor<5xi64>, %b: tensor<2x3xi32>) -> (tensor<2x3x4xf32>, tensor<2x3xi64>) {
  %r = doppler.gather %w[%a] axis 0 : tensor<7x4xf32>, tensor<5xi64> -> tensor<5x4xf32>
  %e = doppler.gather %r[%b] axis 0 : tensor<5x4xf32>, tensor<2x3xi32> -> tensor<2x3x4xf32>
  %i = doppler.gather %a[%b] axis 0 : tensor<5xi64>, tensor<2x3xi32> -> tensor<2x3xi64>
  return %e, %i : tensor<2x3x4xf32>, tensor<2x3xi64>
}

//--- once.mlir
func.func @f(%w: tensor<7x4xf32>, %a: tensor<5xi64>, %b: tensor<2x3xi32>) -> (tensor<2x3x4xf32>, tensor<2x3xi64>) {
  %i = doppler.gather %a[%b] axis 0 : tensor<5xi64>, tensor<2x3xi32> -> tensor<2x3xi64>
  %e = doppler.gather %w[%i] axis 0 : tensor<7x4xf32>, tensor<2x3xi64> -> tensor<2x3x4xf32>
  return %e, %i : tensor<2x3x4xf32>, tensor<2x3xi64>
}

//--- axis1.mlir
func.func @f(%x: tensor<2x6x2xf64>, %j: tensor<4xi32>) -> tensor<2x4x2xf64> {
  %s = doppler.gather %x[%j] axis 1 : tensor<2x6x2xf64>, tensor<4xi32> -> tensor<2x4x2xf64>
  return %s : tensor<2x4x2xf64>
}

//--- transposed.mlir
func.func @f(%x: tensor<2x6x2xf64>, %j: tensor<4xi32>) -> tensor<2x4x2xf64> {
  %t = doppler.einsum "avb->vab" join(identity) (%x) : (tensor<2x6x2xf64>) -> tensor<6x2x2xf64>
  %g = doppler.gather %t[%j] axis 0 : tensor<6x2x2xf64>, tensor<4xi32> -> tensor<4x2x2xf64>
  %s = doppler.einsum "iab->aib" join(identity) (%g) : (tensor<4x2x2xf64>) -> tensor<2x4x2xf64>
  return %s : tensor<2x4x2xf64>
}

//--- one-row.mlir
func.func @f(%w: tensor<1x3xf32>, %ids: tensor<4xi64>) -> tensor<4x3xf32> {
  %e = doppler.gather %w[%ids] axis 0 : tensor<1x3xf32>, tensor<4xi64> -> tensor<4x3xf32>
  return %e : tensor<4x3xf32>
}

//--- broadcast.mlir
func.func @f(%w: tensor<1x3xf32>, %ids: tensor<4xi64>) -> tensor<4x3xf32> {
  %r = doppler.assemble [4, 1] (%w, %w, %w, %w) : tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}
