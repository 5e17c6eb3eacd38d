// doppler.conv and doppler.pool through linalg and back: every window op
// (1, 2 and 3 spatial dims; groups 1, grouped, depthwise, depthwise with a
// channel multiplier; strides, dilations, asymmetric padding; max and
// average pools; f32 and f64) lowered by convert-doppler-to-linalg (named
// ops, tensor.pad, the expanded grouped forms, generics, the average's
// division) and raised by convert-linalg-to-doppler gives back one
// doppler.conv or doppler.pool each and nothing else, computing exactly
// what the original computes (reference interpreter, tolerance 0, two
// seeds).
// RUN: doppler-opt %s --convert-doppler-to-linalg -o %t.linalg.mlir
// RUN: FileCheck %s --check-prefix=LINALG < %t.linalg.mlir
// RUN: not grep -E "doppler\.(conv|pool)" %t.linalg.mlir
// RUN: doppler-opt %t.linalg.mlir --convert-linalg-to-doppler=full=true -o %t.back.mlir
// RUN: FileCheck %s --check-prefix=BACK < %t.back.mlir
// RUN: doppler-interpret %t.back.mlir --compare %s --tolerance 0 | FileCheck %s --check-prefix=NUM
// RUN: doppler-interpret %t.back.mlir --compare %s --tolerance 0 --seed 7 | FileCheck %s --check-prefix=NUM
// NUM: max rel-error 0 <= tolerance 0: ok

// LINALG-DAG: linalg.conv_1d_ncw_fcw
// LINALG-DAG: linalg.depthwise_conv_1d_ncw_cw
// LINALG-DAG: linalg.pooling_ncw_max
// LINALG-DAG: linalg.pooling_ncw_sum
// LINALG-DAG: linalg.conv_2d_nchw_fchw
// LINALG-DAG: linalg.depthwise_conv_2d_nchw_chw
// LINALG-DAG: linalg.conv_2d_ngchw_gfchw
// LINALG-DAG: linalg.pooling_nchw_max
// LINALG-DAG: linalg.pooling_nchw_sum
// LINALG-DAG: linalg.conv_3d_ncdhw_fcdhw
// LINALG-DAG: linalg.depthwise_conv_3d_ncdhw_cdhw

// BACK-LABEL: func.func @windows(
// BACK-NEXT: doppler.conv %{{.*}}, %{{.*}} strides [2] dilations [2] padding [2, 1] groups 1
// BACK-NEXT: doppler.conv %{{.*}}, %{{.*}} strides [1] dilations [1] padding [1, 1] groups 4
// BACK-NEXT: doppler.conv %{{.*}}, %{{.*}} strides [2] dilations [1] padding [0, 0] groups 2
// BACK-NEXT: doppler.pool max %{{.*}} kernel [3] strides [2] dilations [1] padding [0, 1]
// BACK-NEXT: doppler.pool avg %{{.*}} kernel [3] strides [1] dilations [1] padding [1, 1]
// BACK-NEXT: doppler.conv %{{.*}}, %{{.*}} strides [2, 2] dilations [1, 2] padding [1, 0, 0, 1] groups 1
// BACK-NEXT: doppler.conv %{{.*}}, %{{.*}} strides [1, 1] dilations [1, 1] padding [1, 1, 1, 1] groups 6
// BACK-NEXT: doppler.conv %{{.*}}, %{{.*}} strides [2, 2] dilations [1, 1] padding [1, 1, 1, 1] groups 2
// BACK-NEXT: doppler.conv %{{.*}}, %{{.*}} strides [1, 1] dilations [1, 1] padding [0, 0, 0, 0] groups 6
// BACK-NEXT: doppler.pool max %{{.*}} kernel [3, 2] strides [2, 2] dilations [2, 1] padding [2, 0, 1, 1]
// BACK-NEXT: doppler.pool avg %{{.*}} kernel [3, 3] strides [2, 2] dilations [1, 1] padding [1, 1, 1, 0]
// BACK-NEXT: doppler.conv %{{.*}}, %{{.*}} strides [1, 1, 2] dilations [1, 1, 1] padding [1, 0, 0, 0, 1, 0] groups 1
// BACK-NEXT: doppler.conv %{{.*}}, %{{.*}} strides [1, 1, 1] dilations [1, 1, 1] padding [1, 1, 1, 1, 1, 1] groups 4
// BACK-NEXT: doppler.conv %{{.*}}, %{{.*}} strides [2, 2, 2] dilations [1, 1, 1] padding [0, 0, 0, 0, 0, 0] groups 2
// BACK-NEXT: doppler.pool max %{{.*}} kernel [2, 2, 2] strides [2, 2, 2] dilations [1, 1, 1] padding [0, 0, 0, 0, 0, 0]
// BACK-NEXT: doppler.pool avg %{{.*}} kernel [2, 3, 2] strides [2, 2, 2] dilations [1, 1, 1] padding [0, 1, 0, 0, 1, 0]
// BACK-NEXT: doppler.conv %{{.*}}, %{{.*}} strides [2, 1] dilations [1, 2] padding [1, 0, 0, 0] groups 1
// BACK-NEXT: return

func.func @windows(%s: tensor<2x4x11xf32>, %k1: tensor<6x4x3xf32>, %kd1: tensor<4x1x3xf32>, %kg1: tensor<6x2x2xf32>,
                   %x: tensor<2x6x9x8xf32>, %k2: tensor<4x6x3x2xf32>, %kd2: tensor<6x1x3x3xf32>,
                   %kg2: tensor<4x3x3x3xf32>, %km2: tensor<12x1x2x2xf32>,
                   %v: tensor<1x4x6x5x6xf32>, %k3: tensor<3x4x2x2x3xf32>, %kd3: tensor<4x1x3x3x3xf32>,
                   %kg3: tensor<6x2x2x2x2xf32>, %d: tensor<1x2x7x7xf64>, %kf: tensor<3x2x3x3xf64>)
    -> (tensor<2x6x5xf32>, tensor<2x4x11xf32>, tensor<2x6x5xf32>, tensor<2x4x5xf32>, tensor<2x4x11xf32>,
        tensor<2x4x4x4xf32>, tensor<2x6x9x8xf32>, tensor<2x4x5x4xf32>, tensor<2x12x8x7xf32>,
        tensor<2x6x4x4xf32>, tensor<2x6x5x4xf32>,
        tensor<1x3x6x5x2xf32>, tensor<1x4x6x5x6xf32>, tensor<1x6x3x2x3xf32>, tensor<1x4x3x2x3xf32>,
        tensor<1x4x3x3x3xf32>, tensor<1x3x3x3xf64>) {
  // 1-d: groups 1 (strided, dilated, asymmetric), depthwise, grouped; pools.
  %c1 = doppler.conv %s, %k1 strides [2] dilations [2] padding [2, 1] groups 1 {doppler.device = #doppler.device<1>}
      : (tensor<2x4x11xf32>, tensor<6x4x3xf32>) -> tensor<2x6x5xf32>
  %d1 = doppler.conv %s, %kd1 strides [1] dilations [1] padding [1, 1] groups 4
      : (tensor<2x4x11xf32>, tensor<4x1x3xf32>) -> tensor<2x4x11xf32>
  %g1 = doppler.conv %s, %kg1 strides [2] dilations [1] padding [0, 0] groups 2
      : (tensor<2x4x11xf32>, tensor<6x2x2xf32>) -> tensor<2x6x5xf32>
  %m1 = doppler.pool max %s kernel [3] strides [2] dilations [1] padding [0, 1]
      : tensor<2x4x11xf32> -> tensor<2x4x5xf32>
  %a1 = doppler.pool avg %s kernel [3] strides [1] dilations [1] padding [1, 1]
      : tensor<2x4x11xf32> -> tensor<2x4x11xf32>
  // 2-d: groups 1, depthwise, grouped, depthwise with multiplier 2; pools.
  %c2 = doppler.conv %x, %k2 strides [2, 2] dilations [1, 2] padding [1, 0, 0, 1] groups 1 {doppler.device = #doppler.device<0>}
      : (tensor<2x6x9x8xf32>, tensor<4x6x3x2xf32>) -> tensor<2x4x4x4xf32>
  %d2 = doppler.conv %x, %kd2 strides [1, 1] dilations [1, 1] padding [1, 1, 1, 1] groups 6
      : (tensor<2x6x9x8xf32>, tensor<6x1x3x3xf32>) -> tensor<2x6x9x8xf32>
  %g2 = doppler.conv %x, %kg2 strides [2, 2] dilations [1, 1] padding [1, 1, 1, 1] groups 2
      : (tensor<2x6x9x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x5x4xf32>
  %mu2 = doppler.conv %x, %km2 strides [1, 1] dilations [1, 1] padding [0, 0, 0, 0] groups 6
      : (tensor<2x6x9x8xf32>, tensor<12x1x2x2xf32>) -> tensor<2x12x8x7xf32>
  %m2 = doppler.pool max %x kernel [3, 2] strides [2, 2] dilations [2, 1] padding [2, 0, 1, 1]
      : tensor<2x6x9x8xf32> -> tensor<2x6x4x4xf32>
  %a2 = doppler.pool avg %x kernel [3, 3] strides [2, 2] dilations [1, 1] padding [1, 1, 1, 0] {doppler.device = #doppler.device<1>}
      : tensor<2x6x9x8xf32> -> tensor<2x6x5x4xf32>
  // 3-d: groups 1, depthwise, grouped; pools.
  %c3 = doppler.conv %v, %k3 strides [1, 1, 2] dilations [1, 1, 1] padding [1, 0, 0, 0, 1, 0] groups 1
      : (tensor<1x4x6x5x6xf32>, tensor<3x4x2x2x3xf32>) -> tensor<1x3x6x5x2xf32>
  %d3 = doppler.conv %v, %kd3 strides [1, 1, 1] dilations [1, 1, 1] padding [1, 1, 1, 1, 1, 1] groups 4
      : (tensor<1x4x6x5x6xf32>, tensor<4x1x3x3x3xf32>) -> tensor<1x4x6x5x6xf32>
  %g3 = doppler.conv %v, %kg3 strides [2, 2, 2] dilations [1, 1, 1] padding [0, 0, 0, 0, 0, 0] groups 2
      : (tensor<1x4x6x5x6xf32>, tensor<6x2x2x2x2xf32>) -> tensor<1x6x3x2x3xf32>
  %m3 = doppler.pool max %v kernel [2, 2, 2] strides [2, 2, 2] dilations [1, 1, 1] padding [0, 0, 0, 0, 0, 0]
      : tensor<1x4x6x5x6xf32> -> tensor<1x4x3x2x3xf32>
  %a3 = doppler.pool avg %v kernel [2, 3, 2] strides [2, 2, 2] dilations [1, 1, 1] padding [0, 1, 0, 0, 1, 0]
      : tensor<1x4x6x5x6xf32> -> tensor<1x4x3x3x3xf32>
  // f64, dilated, asymmetric.
  %f = doppler.conv %d, %kf strides [2, 1] dilations [1, 2] padding [1, 0, 0, 0] groups 1
      : (tensor<1x2x7x7xf64>, tensor<3x2x3x3xf64>) -> tensor<1x3x3x3xf64>
  return %c1, %d1, %g1, %m1, %a1, %c2, %d2, %g2, %mu2, %m2, %a2, %c3, %d3, %g3, %m3, %a3, %f
      : tensor<2x6x5xf32>, tensor<2x4x11xf32>, tensor<2x6x5xf32>, tensor<2x4x5xf32>, tensor<2x4x11xf32>,
        tensor<2x4x4x4xf32>, tensor<2x6x9x8xf32>, tensor<2x4x5x4xf32>, tensor<2x12x8x7xf32>,
        tensor<2x6x4x4xf32>, tensor<2x6x5x4xf32>,
        tensor<1x3x6x5x2xf32>, tensor<1x4x6x5x6xf32>, tensor<1x6x3x2x3xf32>, tensor<1x4x3x2x3xf32>,
        tensor<1x4x3x3x3xf32>, tensor<1x3x3x3xf64>
}
