// assemble with assemble-with-concat (a readable form; --export-iree writes a pinned tensor.empty and insert_slices instead, docs/IREE.md): nested
// tensor.concat ops, the innermost grid dimension first.
// RUN: doppler-opt %s --split-input-file --convert-doppler-to-linalg="assemble-with-concat=true" | FileCheck %s

func.func @assemble_2x2(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>, %c: tensor<4x3xf32>, %d: tensor<4x5xf32>) -> tensor<6x8xf32> {
  %0 = doppler.assemble [2, 2] (%a, %b, %c, %d) {doppler.device = #doppler.device<1>}
      : tensor<2x3xf32>, tensor<2x5xf32>, tensor<4x3xf32>, tensor<4x5xf32> -> tensor<6x8xf32>
  return %0 : tensor<6x8xf32>
}

// CHECK-LABEL: func.func @assemble_2x2
// CHECK-SAME: (%[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<2x5xf32>, %[[C:.*]]: tensor<4x3xf32>, %[[D:.*]]: tensor<4x5xf32>)
// CHECK: %[[TOP:.*]] = tensor.concat dim(1) %[[A]], %[[B]] {doppler.device = #doppler.device<1>} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
// CHECK: %[[BOTTOM:.*]] = tensor.concat dim(1) %[[C]], %[[D]] {doppler.device = #doppler.device<1>} : (tensor<4x3xf32>, tensor<4x5xf32>) -> tensor<4x8xf32>
// CHECK: %[[ALL:.*]] = tensor.concat dim(0) %[[TOP]], %[[BOTTOM]] {doppler.device = #doppler.device<1>} : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<6x8xf32>
// CHECK: return %[[ALL]]

// -----

// A grid of one block along a dimension adds no concat there.
func.func @assemble_1x1x2(%a: tensor<2x4x3xf32>, %b: tensor<2x4x3xf32>) -> tensor<2x4x6xf32> {
  %0 = doppler.assemble [1, 1, 2] (%a, %b) : tensor<2x4x3xf32>, tensor<2x4x3xf32> -> tensor<2x4x6xf32>
  return %0 : tensor<2x4x6xf32>
}

// CHECK-LABEL: func.func @assemble_1x1x2
// CHECK: %[[R:.*]] = tensor.concat dim(2) %{{.*}}, %{{.*}} : (tensor<2x4x3xf32>, tensor<2x4x3xf32>) -> tensor<2x4x6xf32>
// CHECK-NOT: tensor.concat
// CHECK: return %[[R]]
