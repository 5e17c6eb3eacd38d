// doppler.reshape to tensor ops: tensor.collapse_shape or
// tensor.expand_shape where it merges or splits groups of dims, else a
// collapse to one dim and an expand from it; its placement carries over.
// Back through convert-linalg-to-doppler, the program computes the same
// (the interpreter, exactly: a reshape moves no value).
// RUN: doppler-opt %s --convert-doppler-to-linalg -o %t.linalg.mlir
// RUN: FileCheck %s < %t.linalg.mlir
// RUN: doppler-opt %t.linalg.mlir --convert-linalg-to-doppler=full=true -o %t.back.mlir
// RUN: FileCheck %s --check-prefix=BACK < %t.back.mlir
// RUN: doppler-interpret %t.back.mlir --compare %s --tolerance 0 | FileCheck %s --check-prefix=NUM
// NUM: max rel-error 0 <= tolerance 0: ok
// BACK-NOT: tensor.
// BACK-COUNT-6: doppler.reshape
// BACK-NOT: tensor.

// CHECK-LABEL: func.func @reshapes(
// CHECK-NEXT: %[[S:.*]] = tensor.expand_shape %arg0 {{\[}}[0], [1], [2, 3]] output_shape [2, 8, 4, 8] {doppler.device = #doppler.device<1>} : tensor<2x8x32xf32> into tensor<2x8x4x8xf32>
// CHECK-NEXT: %[[M:.*]] = tensor.collapse_shape %arg0 {{\[}}[0, 1], [2]] : tensor<2x8x32xf32> into tensor<16x32xf32>
// CHECK-NEXT: %[[F:.*]] = tensor.collapse_shape %arg1 {{\[}}[0, 1]] : tensor<6x4xf32> into tensor<24xf32>
// CHECK-NEXT: %[[T:.*]] = tensor.expand_shape %[[F]] {{\[}}[0, 1]] output_shape [4, 6] : tensor<24xf32> into tensor<4x6xf32>
// CHECK-NEXT: %[[F2:.*]] = tensor.collapse_shape %arg1 {{\[}}[0, 1]] : tensor<6x4xf32> into tensor<24xf32>
// CHECK-NEXT: %[[T2:.*]] = tensor.expand_shape %[[F2]] {{\[}}[0, 1, 2]] output_shape [4, 3, 2] : tensor<24xf32> into tensor<4x3x2xf32>
// CHECK-NEXT: %[[Z:.*]] = tensor.collapse_shape %arg2 [] : tensor<1x1xf32> into tensor<f32>
// CHECK-NEXT: %[[U:.*]] = tensor.expand_shape %arg3 [] output_shape [1, 1, 1] : tensor<f32> into tensor<1x1x1xf32>
// CHECK-NEXT: return %[[S]], %[[M]], %[[T]], %[[T2]], %[[Z]], %[[U]]
func.func @reshapes(%x: tensor<2x8x32xf32>, %y: tensor<6x4xf32>, %s: tensor<1x1xf32>, %t: tensor<f32>)
    -> (tensor<2x8x4x8xf32>, tensor<16x32xf32>, tensor<4x6xf32>, tensor<4x3x2xf32>, tensor<f32>, tensor<1x1x1xf32>) {
  %0 = doppler.reshape %x {doppler.device = #doppler.device<1>} : tensor<2x8x32xf32> -> tensor<2x8x4x8xf32>
  %1 = doppler.reshape %x : tensor<2x8x32xf32> -> tensor<16x32xf32>
  %2 = doppler.reshape %y : tensor<6x4xf32> -> tensor<4x6xf32>
  %3 = doppler.reshape %y : tensor<6x4xf32> -> tensor<4x3x2xf32>
  %4 = doppler.reshape %s : tensor<1x1xf32> -> tensor<f32>
  %5 = doppler.reshape %t : tensor<f32> -> tensor<1x1x1xf32>
  return %0, %1, %2, %3, %4, %5
      : tensor<2x8x4x8xf32>, tensor<16x32xf32>, tensor<4x6xf32>, tensor<4x3x2xf32>, tensor<f32>, tensor<1x1x1xf32>
}
