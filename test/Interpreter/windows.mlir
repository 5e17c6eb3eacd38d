// doppler.conv and doppler.pool compute what their definition says: each
// against the same window written out as slices and einsums (one per
// kernel offset), on seeded random inputs.
// RUN: doppler-interpret %s --compare %S/Inputs/windows-reference.mlir --function conv | FileCheck %s
// RUN: doppler-interpret %s --compare %S/Inputs/windows-reference.mlir --function pools | FileCheck %s
// CHECK: max rel-error {{.*}} <= tolerance 1e-05: ok

func.func @conv(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x2x2xf32>) -> tensor<1x3x3x3xf32> {
  %y = doppler.conv %x, %w strides [1, 1] dilations [1, 1] padding [0, 0, 0, 0] groups 1
      : (tensor<1x2x4x4xf32>, tensor<3x2x2x2xf32>) -> tensor<1x3x3x3xf32>
  return %y : tensor<1x3x3x3xf32>
}

func.func @pools(%x: tensor<1x2x4x4xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) {
  %m = doppler.pool max %x kernel [2, 2] strides [1, 1] dilations [1, 1] padding [0, 0, 0, 0]
      : tensor<1x2x4x4xf32> -> tensor<1x2x3x3xf32>
  %a = doppler.pool avg %x kernel [2, 2] strides [1, 1] dilations [1, 1] padding [0, 0, 0, 0]
      : tensor<1x2x4x4xf32> -> tensor<1x2x3x3xf32>
  return %m, %a : tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>
}
