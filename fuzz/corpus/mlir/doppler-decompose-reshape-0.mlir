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
