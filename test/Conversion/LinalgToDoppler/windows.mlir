// convert-linalg-to-doppler on convolutions and pools, named or generic,
// of any layout: one doppler.conv or doppler.pool each, with transposes
// (identity-join einsums) and reshapes around it where the layout is not
// channels first; a tensor.pad of the op's padding value feeding it becomes
// its padding; a sum pool divided by its volume becomes an average pool;
// an init other than the identity is combined by one more einsum.
// RUN: doppler-opt %s --split-input-file --convert-linalg-to-doppler="full=true" | FileCheck %s

// torch-mlir's form: a zero pad, a zero-filled init, the NCHW op.
// CHECK-LABEL: func.func @nchw_padded(
// CHECK-NEXT: %[[C:.*]] = doppler.conv %arg0, %arg1 strides [2, 2] dilations [1, 1] padding [1, 1, 1, 1] groups 1 : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32>
// CHECK-NEXT: return %[[C]]
func.func @nchw_padded(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<1x3x8x8xf32> to tensor<1x3x10x10xf32>
  %e = tensor.empty() : tensor<1x4x4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%p, %w : tensor<1x3x10x10xf32>, tensor<4x3x3x3xf32>) outs(%f : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  return %c : tensor<1x4x4x4xf32>
}

// -----

// NHWC input, HWCF weight: transposed to NCHW / FCHW and back.
// CHECK-LABEL: func.func @nhwc(
// CHECK-NEXT: %[[X:.*]] = doppler.einsum "ijkl->iljk" join(identity) (%arg0) : (tensor<2x9x9x6xf32>) -> tensor<2x6x9x9xf32>
// CHECK-NEXT: %[[W:.*]] = doppler.einsum "ijkl->lkij" join(identity) (%arg1) : (tensor<3x3x6x4xf32>) -> tensor<4x6x3x3xf32>
// CHECK-NEXT: %[[C:.*]] = doppler.conv %[[X]], %[[W]] strides [1, 1] dilations [1, 1] padding [1, 1, 1, 1] groups 1
// CHECK-NEXT: %[[Y:.*]] = doppler.einsum "ijkl->iklj" join(identity) (%[[C]]) : (tensor<2x4x9x9xf32>) -> tensor<2x9x9x4xf32>
// CHECK-NEXT: return %[[Y]]
func.func @nhwc(%x: tensor<2x9x9x6xf32>, %w: tensor<3x3x6x4xf32>) -> tensor<2x9x9x4xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<2x9x9x6xf32> to tensor<2x11x11x6xf32>
  %e = tensor.empty() : tensor<2x9x9x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x9x9x4xf32>) -> tensor<2x9x9x4xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%p, %w : tensor<2x11x11x6xf32>, tensor<3x3x6x4xf32>) outs(%f : tensor<2x9x9x4xf32>) -> tensor<2x9x9x4xf32>
  return %c : tensor<2x9x9x4xf32>
}

// -----

// Depthwise NHWC: the weight [H, W, C] as [C, 1, H, W], groups C; with a
// channel multiplier M ([H, W, C, M]) as [C*M, 1, H, W] and the result
// [N, C*M, ..] split into [N, C, M, ..] before the transpose back.
// CHECK-LABEL: func.func @depthwise_nhwc(
// CHECK: %[[K:.*]] = doppler.einsum "ijk->kij" join(identity) (%arg1) : (tensor<3x3x6xf32>) -> tensor<6x3x3xf32>
// CHECK-NEXT: %[[K1:.*]] = doppler.reshape %[[K]] : tensor<6x3x3xf32> -> tensor<6x1x3x3xf32>
// CHECK-NEXT: doppler.conv %{{.*}}, %[[K1]] strides [1, 1] dilations [1, 1] padding [0, 0, 0, 0] groups 6 : (tensor<2x6x9x9xf32>, tensor<6x1x3x3xf32>) -> tensor<2x6x7x7xf32>
// CHECK: %[[M:.*]] = doppler.einsum "ijkl->klij" join(identity) (%arg2) : (tensor<3x3x6x2xf32>) -> tensor<6x2x3x3xf32>
// CHECK-NEXT: %[[M1:.*]] = doppler.reshape %[[M]] : tensor<6x2x3x3xf32> -> tensor<12x1x3x3xf32>
// CHECK-NEXT: %[[C:.*]] = doppler.conv %{{.*}}, %[[M1]] {{.*}} groups 6 : (tensor<2x6x9x9xf32>, tensor<12x1x3x3xf32>) -> tensor<2x12x7x7xf32>
// CHECK-NEXT: %[[S:.*]] = doppler.reshape %[[C]] : tensor<2x12x7x7xf32> -> tensor<2x6x2x7x7xf32>
// CHECK-NEXT: doppler.einsum "ijklm->ilmjk" join(identity) (%[[S]]) : (tensor<2x6x2x7x7xf32>) -> tensor<2x7x7x6x2xf32>
func.func @depthwise_nhwc(%x: tensor<2x9x9x6xf32>, %wd: tensor<3x3x6xf32>, %wm: tensor<3x3x6x2xf32>)
    -> (tensor<2x7x7x6xf32>, tensor<2x7x7x6x2xf32>) {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<2x7x7x6xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x7x7x6xf32>) -> tensor<2x7x7x6xf32>
  %c1 = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %wd : tensor<2x9x9x6xf32>, tensor<3x3x6xf32>) outs(%f1 : tensor<2x7x7x6xf32>) -> tensor<2x7x7x6xf32>
  %e4 = tensor.empty() : tensor<2x7x7x6x2xf32>
  %f4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<2x7x7x6x2xf32>) -> tensor<2x7x7x6x2xf32>
  %c4 = linalg.depthwise_conv_2d_nhwc_hwcm {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %wm : tensor<2x9x9x6xf32>, tensor<3x3x6x2xf32>) outs(%f4 : tensor<2x7x7x6x2xf32>) -> tensor<2x7x7x6x2xf32>
  return %c1, %c4 : tensor<2x7x7x6xf32>, tensor<2x7x7x6x2xf32>
}

// -----

// NHWC max pool padded with -inf. The padded image (11) holds a stride
// more than the windows read (9): the high padding is cut, so that doppler
// slides as often as linalg.
// CHECK-LABEL: func.func @pool_nhwc_max(
// CHECK-NEXT: %[[X:.*]] = doppler.einsum "ijkl->iljk" join(identity) (%arg0)
// CHECK-NEXT: %[[P:.*]] = doppler.pool max %[[X]] kernel [3, 3] strides [2, 2] dilations [1, 1] padding [1, 1, 0, 0] : tensor<2x6x9x9xf32> -> tensor<2x6x4x4xf32>
// CHECK-NEXT: doppler.einsum "ijkl->iklj" join(identity) (%[[P]])
func.func @pool_nhwc_max(%x: tensor<2x9x9x6xf32>) -> tensor<2x4x4x6xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %pm = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %ninf : f32
  } : tensor<2x9x9x6xf32> to tensor<2x11x11x6xf32>
  %win = tensor.empty() : tensor<3x3xf32>
  %e = tensor.empty() : tensor<2x4x4x6xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<2x4x4x6xf32>) -> tensor<2x4x4x6xf32>
  %c = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%pm, %win : tensor<2x11x11x6xf32>, tensor<3x3xf32>) outs(%f : tensor<2x4x4x6xf32>) -> tensor<2x4x4x6xf32>
  return %c : tensor<2x4x4x6xf32>
}

// -----

// A sum pool divided by its volume (torch's avg_pool2d: a linalg.generic;
// or the einsum the structured-op pattern makes of one): one average pool,
// the division and its divisor gone.
// CHECK-LABEL: func.func @avg_pool(
// CHECK-NEXT: %[[A:.*]] = doppler.pool avg %arg0 kernel [3, 3] strides [2, 2] dilations [1, 1] padding [1, 1, 1, 1]
// CHECK-NEXT: %[[B:.*]] = doppler.pool avg %arg1 kernel [3, 3] strides [2, 2] dilations [1, 1] padding [0, 0, 0, 0]
// CHECK-NEXT: return %[[A]], %[[B]]
#id = affine_map<(a, b, c, d) -> (a, b, c, d)>
func.func @avg_pool(%x: tensor<2x6x8x8xf32>, %y: tensor<2x6x9x9xf32>) -> (tensor<2x6x4x4xf32>, tensor<2x6x4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %nine = arith.constant 9.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<2x6x8x8xf32> to tensor<2x6x10x10xf32>
  %win = tensor.empty() : tensor<3x3xf32>
  %e = tensor.empty() : tensor<2x6x4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x6x4x4xf32>) -> tensor<2x6x4x4xf32>
  %s = linalg.pooling_nchw_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%p, %win : tensor<2x6x10x10xf32>, tensor<3x3xf32>) outs(%f : tensor<2x6x4x4xf32>) -> tensor<2x6x4x4xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x6x4x4xf32>) outs(%e : tensor<2x6x4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.divf %in, %nine : f32
    linalg.yield %d : f32
  } -> tensor<2x6x4x4xf32>
  %s2 = linalg.pooling_nchw_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%y, %win : tensor<2x6x9x9xf32>, tensor<3x3xf32>) outs(%f : tensor<2x6x4x4xf32>) -> tensor<2x6x4x4xf32>
  %v = doppler.fill 9.0 : tensor<f32>
  %a2 = doppler.einsum "ijkl,->ijkl" join(div) (%s2, %v) : (tensor<2x6x4x4xf32>, tensor<f32>) -> tensor<2x6x4x4xf32>
  return %a, %a2 : tensor<2x6x4x4xf32>, tensor<2x6x4x4xf32>
}

// -----

// Sum pools left as sums: over 9 elements a depthwise convolution with a
// weight of ones (exact); over 4 (a power of two) an average scaled by 4.
// CHECK-LABEL: func.func @sum_pools(
// CHECK-NEXT: %[[ONES:.*]] = doppler.fill 1.0 : tensor<6x1x3x3xf32>
// CHECK-NEXT: %[[S:.*]] = doppler.conv %arg0, %[[ONES]] strides [2, 2] dilations [1, 1] padding [0, 0, 0, 0] groups 6
// CHECK-NEXT: %[[T:.*]] = doppler.slice %arg0 [0, 0, 0, 0] : tensor<2x6x10x9xf32> to tensor<2x6x9x9xf32>
// CHECK-NEXT: %[[A:.*]] = doppler.pool avg %[[T]] kernel [2, 2]
// CHECK-NEXT: %[[S2:.*]] = doppler.einsum "ijkl->ijkl" join(scale, 4.0) (%[[A]])
// CHECK-NEXT: return %[[S]], %[[S2]]
func.func @sum_pools(%x: tensor<2x6x10x9xf32>) -> (tensor<2x6x4x4xf32>, tensor<2x6x4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %win = tensor.empty() : tensor<3x3xf32>
  %win2 = tensor.empty() : tensor<2x2xf32>
  %e = tensor.empty() : tensor<2x6x4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x6x4x4xf32>) -> tensor<2x6x4x4xf32>
  %s = linalg.pooling_nchw_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%x, %win : tensor<2x6x10x9xf32>, tensor<3x3xf32>) outs(%f : tensor<2x6x4x4xf32>) -> tensor<2x6x4x4xf32>
  %s2 = linalg.pooling_nchw_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%x, %win2 : tensor<2x6x10x9xf32>, tensor<2x2xf32>) outs(%f : tensor<2x6x4x4xf32>) -> tensor<2x6x4x4xf32>
  return %s, %s2 : tensor<2x6x4x4xf32>, tensor<2x6x4x4xf32>
}

// -----

// linalg.conv_2d (no batch, no channels): reshaped to [1, 1, H, W].
// CHECK-LABEL: func.func @conv_2d(
// CHECK-NEXT: %[[X:.*]] = doppler.reshape %arg0 : tensor<10x10xf32> -> tensor<1x1x10x10xf32>
// CHECK-NEXT: %[[W:.*]] = doppler.reshape %arg1 : tensor<3x3xf32> -> tensor<1x1x3x3xf32>
// CHECK-NEXT: %[[C:.*]] = doppler.conv %[[X]], %[[W]] {{.*}} groups 1
// CHECK-NEXT: doppler.reshape %[[C]] : tensor<1x1x8x8xf32> -> tensor<8x8xf32>
func.func @conv_2d(%img: tensor<10x10xf32>, %k: tensor<3x3xf32>) -> tensor<8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %c = linalg.conv_2d ins(%img, %k : tensor<10x10xf32>, tensor<3x3xf32>) outs(%f : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %c : tensor<8x8xf32>
}

// -----

// torch-mlir's bias: the convolution accumulates into the broadcast bias,
// added by one more einsum.
// CHECK-LABEL: func.func @bias(
// CHECK: %[[B:.*]] = doppler.einsum "j,ikl->ijkl" join(add)
// CHECK-NEXT: %[[C:.*]] = doppler.conv %arg0, %arg1
// CHECK-NEXT: doppler.einsum "ijkl,ijkl->ijkl" join(add) (%[[C]], %[[B]])
func.func @bias(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %bias: tensor<4xf32>) -> tensor<1x4x6x6xf32> {
  %e = tensor.empty() : tensor<1x4x6x6xf32>
  %bb = linalg.broadcast ins(%bias : tensor<4xf32>) outs(%e : tensor<1x4x6x6xf32>) dimensions = [0, 2, 3]
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) outs(%bb : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  return %c : tensor<1x4x6x6xf32>
}

// -----

// Padding and init of -FLT_MAX (torch-mlir without non-finites) are not
// the identity of max: the pad converts as any pad (an assemble of fills),
// the init is combined by a max einsum.
// CHECK-LABEL: func.func @finite_max_pool(
// CHECK: %[[P:.*]] = doppler.assemble [1, 1, 3, 3]
// CHECK: %[[I:.*]] = doppler.fill -3.4028234663852886e+38 : tensor<1x2x3x3xf32>
// CHECK-NEXT: %[[M:.*]] = doppler.pool max %[[P]] kernel [3, 3] strides [2, 2] dilations [1, 1] padding [0, 0, 0, 0]
// CHECK-NEXT: doppler.einsum "ijkl,ijkl->ijkl" join(max) (%[[M]], %[[I]])
func.func @finite_max_pool(%x: tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32> {
  %lowest = arith.constant -3.40282347E+38 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %lowest : f32
  } : tensor<1x2x6x6xf32> to tensor<1x2x8x8xf32>
  %win = tensor.empty() : tensor<3x3xf32>
  %e = tensor.empty() : tensor<1x2x3x3xf32>
  %f = linalg.fill ins(%lowest : f32) outs(%e : tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %c = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%p, %win : tensor<1x2x8x8xf32>, tensor<3x3xf32>) outs(%f : tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  return %c : tensor<1x2x3x3xf32>
}

// -----

// Rows no window reads, a stride or more past the last one, are sliced off.
// CHECK-LABEL: func.func @trimmed(
// CHECK-NEXT: %[[T:.*]] = doppler.slice %arg0 [0, 0, 0, 0] : tensor<2x6x10x9xf32> to tensor<2x6x8x9xf32>
// CHECK-NEXT: doppler.pool max %[[T]] kernel [2, 2] strides [2, 2] dilations [2, 1] padding [0, 0, 0, 0] : tensor<2x6x8x9xf32> -> tensor<2x6x3x4xf32>
func.func @trimmed(%x: tensor<2x6x10x9xf32>) -> tensor<2x6x3x4xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<2x6x3x4xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<2x6x3x4xf32>) -> tensor<2x6x3x4xf32>
  %win = tensor.empty() : tensor<2x2xf32>
  %c = linalg.pooling_nchw_max {dilations = dense<[2, 1]> : tensor<2xi64>, strides = dense<[2, 2]> : tensor<2xi64>}
      ins(%x, %win : tensor<2x6x10x9xf32>, tensor<2x2xf32>) outs(%f : tensor<2x6x3x4xf32>) -> tensor<2x6x3x4xf32>
  return %c : tensor<2x6x3x4xf32>
}

// -----

// A linalg.generic convolution: the weight first, its dims [K, C, F], the
// product and the sum in either order, accumulating into an argument.
// CHECK-LABEL: func.func @generic_conv1d(
// CHECK-NEXT: %[[W:.*]] = doppler.einsum "ijk->kji" join(identity) (%arg1) : (tensor<3x3x5xf32>) -> tensor<5x3x3xf32>
// CHECK-NEXT: %[[C:.*]] = doppler.conv %arg0, %[[W]] strides [2] dilations [3] padding [0, 0] groups 1 : (tensor<2x3x20xf32>, tensor<5x3x3xf32>) -> tensor<2x5x7xf32>
// CHECK-NEXT: doppler.einsum "ijk,ijk->ijk" join(add) (%[[C]], %arg2)
#in = affine_map<(n, f, o, c, k) -> (n, c, o * 2 + k * 3)>
#w = affine_map<(n, f, o, c, k) -> (k, c, f)>
#out = affine_map<(n, f, o, c, k) -> (n, f, o)>
func.func @generic_conv1d(%x: tensor<2x3x20xf32>, %w: tensor<3x3x5xf32>, %o: tensor<2x5x7xf32>) -> tensor<2x5x7xf32> {
  %c = linalg.generic {indexing_maps = [#w, #in, #out], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%w, %x : tensor<3x3x5xf32>, tensor<2x3x20xf32>) outs(%o : tensor<2x5x7xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %b, %a : f32
    %s = arith.addf %m, %acc : f32
    linalg.yield %s : f32
  } -> tensor<2x5x7xf32>
  return %c : tensor<2x5x7xf32>
}
