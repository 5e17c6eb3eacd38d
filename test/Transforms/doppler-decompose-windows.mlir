// RUN: doppler-opt %s --doppler-decompose="parts=4 min-points=1000" | FileCheck %s
// How doppler-decompose splits convolutions and pools by default: the
// split over the batch, channel groups and row tiles that reads the
// fewest input and weight elements. Numerics: Interpreter/decompose-windows.mlir.

// A depthwise convolution splits its channels (each block reads its own
// channels and weights once).
// CHECK-LABEL: func.func @depthwise
// CHECK-COUNT-4: doppler.conv %{{.*}}, %{{.*}} strides [1, 1] dilations [1, 1] padding [3, 3, 3, 3] groups 24 : (tensor<1x24x56x56xf32>, tensor<24x1x7x7xf32>) -> tensor<1x24x56x56xf32>
// CHECK: doppler.assemble [1, 4, 1, 1]

// An early layer (large activations, small weights, batch 1) splits its
// rows: each tile reads its rows and a one-row halo; the outer tiles keep
// the padding on their outer side only.
// CHECK-LABEL: func.func @early
// CHECK: doppler.slice %{{.*}} [0, 0, 0, 0] : tensor<1x64x56x56xf32> to tensor<1x64x15x56xf32>
// CHECK: doppler.conv {{.*}} padding [1, 1, 0, 1] groups 1 : (tensor<1x64x15x56xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x14x56xf32>
// CHECK: doppler.slice %{{.*}} [0, 0, 13, 0] : tensor<1x64x56x56xf32> to tensor<1x64x16x56xf32>
// CHECK: doppler.conv {{.*}} padding [0, 1, 0, 1] groups 1 : (tensor<1x64x16x56xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x14x56xf32>
// CHECK: doppler.conv {{.*}} padding [0, 1, 0, 1] groups 1
// CHECK: doppler.slice %{{.*}} [0, 0, 41, 0] : tensor<1x64x56x56xf32> to tensor<1x64x15x56xf32>
// CHECK: doppler.conv {{.*}} padding [0, 1, 1, 1] groups 1
// CHECK: doppler.assemble [1, 1, 4, 1]

// A late layer (small activations, large weights) splits its output
// channels: each block reads a quarter of the weights and all of the input.
// CHECK-LABEL: func.func @late
// CHECK-COUNT-4: doppler.conv %arg0, %{{.*}} padding [1, 1, 1, 1] groups 1 : (tensor<1x512x7x7xf32>, tensor<128x512x3x3xf32>) -> tensor<1x128x7x7xf32>
// CHECK: doppler.assemble [1, 4, 1, 1]

// With a batch, the batch splits (no halo, no replicated input).
// CHECK-LABEL: func.func @batched
// CHECK-COUNT-4: doppler.conv {{.*}} : (tensor<2x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<2x64x56x56xf32>
// CHECK: doppler.assemble [4, 1, 1, 1]

// Windows with fewer points than min-points stay whole.
// CHECK-LABEL: func.func @small
// CHECK-NEXT: doppler.pool max %arg0
// CHECK-NEXT: return
func.func @depthwise(%x: tensor<1x96x56x56xf32>, %w: tensor<96x1x7x7xf32>) -> tensor<1x96x56x56xf32> {
  %y = doppler.conv %x, %w strides [1, 1] dilations [1, 1] padding [3, 3, 3, 3] groups 96 : (tensor<1x96x56x56xf32>, tensor<96x1x7x7xf32>) -> tensor<1x96x56x56xf32>
  return %y : tensor<1x96x56x56xf32>
}
func.func @early(%x: tensor<1x64x56x56xf32>, %w: tensor<64x64x3x3xf32>) -> tensor<1x64x56x56xf32> {
  %y = doppler.conv %x, %w strides [1, 1] dilations [1, 1] padding [1, 1, 1, 1] groups 1 : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x56x56xf32>
  return %y : tensor<1x64x56x56xf32>
}
func.func @late(%x: tensor<1x512x7x7xf32>, %w: tensor<512x512x3x3xf32>) -> tensor<1x512x7x7xf32> {
  %y = doppler.conv %x, %w strides [1, 1] dilations [1, 1] padding [1, 1, 1, 1] groups 1 : (tensor<1x512x7x7xf32>, tensor<512x512x3x3xf32>) -> tensor<1x512x7x7xf32>
  return %y : tensor<1x512x7x7xf32>
}
func.func @batched(%x: tensor<8x64x56x56xf32>, %w: tensor<64x64x3x3xf32>) -> tensor<8x64x56x56xf32> {
  %y = doppler.conv %x, %w strides [1, 1] dilations [1, 1] padding [1, 1, 1, 1] groups 1 : (tensor<8x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<8x64x56x56xf32>
  return %y : tensor<8x64x56x56xf32>
}
func.func @small(%x: tensor<1x4x4x4xf32>) -> tensor<1x4x2x2xf32> {
  %y = doppler.pool max %x kernel [2, 2] strides [2, 2] dilations [1, 1] padding [0, 0, 0, 0] : tensor<1x4x4x4xf32> -> tensor<1x4x2x2xf32>
  return %y : tensor<1x4x2x2xf32>
}
