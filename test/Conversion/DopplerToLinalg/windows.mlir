// doppler.conv and doppler.pool lowered to linalg: a tensor.pad where they
// pad (zeros; -inf for a max pool), an init filled with the identity, and
// the named op of the layout (a linalg.generic where MLIR has none);
// placements (doppler.device) carry over to every op made.
// RUN: doppler-opt %s --split-input-file --convert-doppler-to-linalg | FileCheck %s

// groups 1, 2-d, padded: pad + fill + conv_2d_nchw_fchw, all placed.
// CHECK-LABEL: func.func @conv2d(
// CHECK-SAME: %[[X:.*]]: tensor<2x3x8x8xf32>, %[[W:.*]]: tensor<4x3x3x3xf32>
// CHECK: %[[Z:.*]] = arith.constant {doppler.device = #doppler.device<1>} 0.000000e+00 : f32
// CHECK: %[[P:.*]] = tensor.pad %[[X]] low[0, 0, 1, 2] high[0, 0, 1, 0]
// CHECK: tensor.yield %[[Z]] : f32
// CHECK: } {doppler.device = #doppler.device<1>} : tensor<2x3x8x8xf32> to tensor<2x3x10x10xf32>
// CHECK: %[[E:.*]] = tensor.empty() {doppler.device = #doppler.device<1>} : tensor<2x4x4x8xf32>
// CHECK: %[[F:.*]] = linalg.fill {doppler.device = #doppler.device<1>} ins(%{{.*}} : f32) outs(%[[E]] : tensor<2x4x4x8xf32>)
// CHECK: %[[C:.*]] = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, doppler.device = #doppler.device<1>, strides = dense<[2, 1]> : tensor<2xi64>} ins(%[[P]], %[[W]] : tensor<2x3x10x10xf32>, tensor<4x3x3x3xf32>) outs(%[[F]] : tensor<2x4x4x8xf32>)
// CHECK: return %[[C]]
func.func @conv2d(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x4x4x8xf32> {
  %0 = doppler.conv %x, %w strides [2, 1] dilations [1, 1] padding [1, 2, 1, 0] groups 1 {doppler.device = #doppler.device<1>}
      : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x4x8xf32>
  return %0 : tensor<2x4x4x8xf32>
}

// -----

// No padding: no tensor.pad. 1-d and 3-d, groups 1.
// CHECK-LABEL: func.func @conv1d_3d(
// CHECK-NOT: tensor.pad
// CHECK: linalg.conv_1d_ncw_fcw {dilations = dense<2> : tensor<1xi64>, strides = dense<3> : tensor<1xi64>} ins(%arg0, %arg1 : tensor<1x4x11xf32>, tensor<8x4x2xf32>)
// CHECK-NOT: tensor.pad
// CHECK: linalg.conv_3d_ncdhw_fcdhw {dilations = dense<1> : tensor<3xi64>, strides = dense<[2, 1, 1]> : tensor<3xi64>} ins(%arg2, %arg3 : tensor<1x2x5x4x4xf32>, tensor<3x2x3x2x2xf32>)
func.func @conv1d_3d(%s: tensor<1x4x11xf32>, %k: tensor<8x4x2xf32>, %v: tensor<1x2x5x4x4xf32>, %kv: tensor<3x2x3x2x2xf32>)
    -> (tensor<1x8x3xf32>, tensor<1x3x2x3x3xf32>) {
  %0 = doppler.conv %s, %k strides [3] dilations [2] padding [0, 0] groups 1
      : (tensor<1x4x11xf32>, tensor<8x4x2xf32>) -> tensor<1x8x3xf32>
  %1 = doppler.conv %v, %kv strides [2, 1, 1] dilations [1, 1, 1] padding [0, 0, 0, 0, 0, 0] groups 1
      : (tensor<1x2x5x4x4xf32>, tensor<3x2x3x2x2xf32>) -> tensor<1x3x2x3x3xf32>
  return %0, %1 : tensor<1x8x3xf32>, tensor<1x3x2x3x3xf32>
}

// -----

// Depthwise (F == C == groups): the weight [C, 1, K..] collapsed to [C, K..].
// CHECK-LABEL: func.func @depthwise(
// CHECK: %[[K:.*]] = tensor.collapse_shape %arg1 {{\[}}[0, 1], [2], [3]] : tensor<6x1x3x3xf32> into tensor<6x3x3xf32>
// CHECK: %[[P:.*]] = tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%[[P]], %[[K]] : tensor<2x6x11x11xf32>, tensor<6x3x3xf32>)
// CHECK: %[[K1:.*]] = tensor.collapse_shape %arg3 {{\[}}[0, 1], [2]] : tensor<4x1x3xf32> into tensor<4x3xf32>
// CHECK: linalg.depthwise_conv_1d_ncw_cw {{.*}} ins(%arg2, %[[K1]] : tensor<1x4x9xf32>, tensor<4x3xf32>)
func.func @depthwise(%x: tensor<2x6x9x9xf32>, %w: tensor<6x1x3x3xf32>, %s: tensor<1x4x9xf32>, %k: tensor<4x1x3xf32>)
    -> (tensor<2x6x9x9xf32>, tensor<1x4x7xf32>) {
  %0 = doppler.conv %x, %w strides [1, 1] dilations [1, 1] padding [1, 1, 1, 1] groups 6
      : (tensor<2x6x9x9xf32>, tensor<6x1x3x3xf32>) -> tensor<2x6x9x9xf32>
  %1 = doppler.conv %s, %k strides [1] dilations [1] padding [0, 0] groups 4
      : (tensor<1x4x9xf32>, tensor<4x1x3xf32>) -> tensor<1x4x7xf32>
  return %0, %1 : tensor<2x6x9x9xf32>, tensor<1x4x7xf32>
}

// -----

// Other groups, 2-d: input and weight expanded to [N, G, C, ..] and
// [G, F, C, ..] (the pad after the expand, so that it feeds the
// convolution), conv_2d_ngchw_gfchw, the result collapsed.
// CHECK-LABEL: func.func @grouped2d(
// CHECK: %[[XE:.*]] = tensor.expand_shape %arg0 {{\[}}[0], [1, 2], [3], [4]] output_shape [2, 3, 2, 9, 9] {doppler.device = #doppler.device<0>}
// CHECK: %[[P:.*]] = tensor.pad %[[XE]] low[0, 0, 0, 2, 0] high[0, 0, 0, 1, 1]
// CHECK: %[[WE:.*]] = tensor.expand_shape %arg1 {{\[}}[0, 1], [2], [3], [4]] output_shape [3, 2, 2, 3, 3]
// CHECK: %[[C:.*]] = linalg.conv_2d_ngchw_gfchw {dilations = dense<[2, 1]> : tensor<2xi64>, doppler.device = #doppler.device<0>, strides = dense<2> : tensor<2xi64>} ins(%[[P]], %[[WE]] : tensor<2x3x2x12x10xf32>, tensor<3x2x2x3x3xf32>) outs(%{{.*}} : tensor<2x3x2x4x4xf32>)
// CHECK: tensor.collapse_shape %[[C]] {{\[}}[0], [1, 2], [3], [4]] {doppler.device = #doppler.device<0>} : tensor<2x3x2x4x4xf32> into tensor<2x6x4x4xf32>
func.func @grouped2d(%x: tensor<2x6x9x9xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<2x6x4x4xf32> {
  %0 = doppler.conv %x, %w strides [2, 2] dilations [2, 1] padding [2, 0, 1, 1] groups 3 {doppler.device = #doppler.device<0>}
      : (tensor<2x6x9x9xf32>, tensor<6x2x3x3xf32>) -> tensor<2x6x4x4xf32>
  return %0 : tensor<2x6x4x4xf32>
}

// -----

// Other groups, 1-d: the same expanded form as a linalg.generic (loops n,
// g, f, o, c, k).
// CHECK-DAG: #[[$IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d3 * 3 + d5)>
// CHECK-DAG: #[[$W:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d2, d4, d5)>
// CHECK-DAG: #[[$OUT:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @grouped1d(
// CHECK: tensor.expand_shape %arg0 {{\[}}[0], [1, 2], [3]] output_shape [1, 2, 2, 11]
// CHECK: tensor.expand_shape %arg1 {{\[}}[0, 1], [2], [3]] output_shape [2, 4, 2, 5]
// CHECK: linalg.generic {indexing_maps = [#[[$IN]], #[[$W]], #[[$OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
// CHECK: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK:   %[[M:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK:   %[[S:.*]] = arith.addf %[[ACC]], %[[M]] : f32
// CHECK:   linalg.yield %[[S]] : f32
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2], [3]] : tensor<1x2x4x3xf32> into tensor<1x8x3xf32>
func.func @grouped1d(%s: tensor<1x4x11xf32>, %k: tensor<8x2x5xf32>) -> tensor<1x8x3xf32> {
  %0 = doppler.conv %s, %k strides [3] dilations [1] padding [0, 0] groups 2
      : (tensor<1x4x11xf32>, tensor<8x2x5xf32>) -> tensor<1x8x3xf32>
  return %0 : tensor<1x8x3xf32>
}

// -----

// Max pool: pad with -inf, a window operand of the kernel's shape, an init
// of -inf, pooling_nchw_max.
// CHECK-LABEL: func.func @max_pool(
// CHECK: %[[NINF:.*]] = arith.constant {doppler.device = #doppler.device<1>} 0xFF800000 : f32
// CHECK: %[[P:.*]] = tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: tensor.yield %[[NINF]] : f32
// CHECK: %[[WIN:.*]] = tensor.empty() {doppler.device = #doppler.device<1>} : tensor<3x3xf32>
// CHECK: %[[I:.*]] = arith.constant {doppler.device = #doppler.device<1>} 0xFF800000 : f32
// CHECK: %[[F:.*]] = linalg.fill {doppler.device = #doppler.device<1>} ins(%[[I]] : f32)
// CHECK: linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, doppler.device = #doppler.device<1>, strides = dense<2> : tensor<2xi64>} ins(%[[P]], %[[WIN]] : tensor<2x4x10x10xf32>, tensor<3x3xf32>) outs(%[[F]] : tensor<2x4x4x4xf32>)
func.func @max_pool(%x: tensor<2x4x8x8xf32>) -> tensor<2x4x4x4xf32> {
  %0 = doppler.pool max %x kernel [3, 3] strides [2, 2] dilations [1, 1] padding [1, 1, 1, 1] {doppler.device = #doppler.device<1>}
      : tensor<2x4x8x8xf32> -> tensor<2x4x4x4xf32>
  return %0 : tensor<2x4x4x4xf32>
}

// -----

// Average pool, 1-d: pad with 0, pooling_ncw_sum into zeros, then a
// linalg.generic dividing by the kernel's volume (3).
// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @avg_pool1d(
// CHECK: %[[P:.*]] = tensor.pad %arg0 low[0, 0, 1] high[0, 0, 1]
// CHECK: %[[WIN:.*]] = tensor.empty() : tensor<3xf32>
// CHECK: %[[S:.*]] = linalg.pooling_ncw_sum {dilations = dense<1> : tensor<1xi64>, strides = dense<1> : tensor<1xi64>} ins(%[[P]], %[[WIN]] : tensor<1x4x13xf32>, tensor<3xf32>)
// CHECK: %[[V:.*]] = arith.constant 3.000000e+00 : f32
// CHECK: linalg.generic {indexing_maps = [#[[$ID]], #[[$ID]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[S]] : tensor<1x4x11xf32>)
// CHECK: arith.divf %{{.*}}, %[[V]] : f32
func.func @avg_pool1d(%s: tensor<1x4x11xf32>) -> tensor<1x4x11xf32> {
  %0 = doppler.pool avg %s kernel [3] strides [1] dilations [1] padding [1, 1]
      : tensor<1x4x11xf32> -> tensor<1x4x11xf32>
  return %0 : tensor<1x4x11xf32>
}

// -----

// 3-d pools: a linalg.generic (loops n, c, o1..o3, k1..k3) over the input
// and the window.
// CHECK-DAG: #[[$IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2 * 2 + d5, d3 * 2 + d6, d4 * 2 + d7)>
// CHECK-DAG: #[[$WIN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d5, d6, d7)>
// CHECK-DAG: #[[$OUT:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>
// CHECK-LABEL: func.func @pool3d(
// CHECK: linalg.generic {indexing_maps = [#[[$IN]], #[[$WIN]], #[[$OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
// CHECK: ^bb0(%[[A:.*]]: f32, %{{.*}}: f32, %[[ACC:.*]]: f32):
// CHECK:   arith.maximumf %[[ACC]], %[[A]] : f32
// CHECK: linalg.generic {indexing_maps = [#[[$IN]], #[[$WIN]], #[[$OUT]]]
// CHECK: ^bb0(%[[B:.*]]: f32, %{{.*}}: f32, %[[ACC2:.*]]: f32):
// CHECK:   arith.addf %[[ACC2]], %[[B]] : f32
// CHECK: arith.constant 8.000000e+00 : f32
// CHECK: arith.divf
func.func @pool3d(%v: tensor<1x2x6x6x6xf32>) -> (tensor<1x2x3x3x3xf32>, tensor<1x2x3x3x3xf32>) {
  %0 = doppler.pool max %v kernel [2, 2, 2] strides [2, 2, 2] dilations [1, 1, 1] padding [0, 0, 0, 0, 0, 0]
      : tensor<1x2x6x6x6xf32> -> tensor<1x2x3x3x3xf32>
  %1 = doppler.pool avg %v kernel [2, 2, 2] strides [2, 2, 2] dilations [1, 1, 1] padding [0, 0, 0, 0, 0, 0]
      : tensor<1x2x6x6x6xf32> -> tensor<1x2x3x3x3xf32>
  return %0, %1 : tensor<1x2x3x3x3xf32>, tensor<1x2x3x3x3xf32>
}
