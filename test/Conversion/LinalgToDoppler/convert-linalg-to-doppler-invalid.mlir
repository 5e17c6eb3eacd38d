// Every message of convert-linalg-to-doppler: the remark listing what was
// converted and left by kind (linalg.generic, linalg.matmul, tensor ops),
// the per-op reasons with report=true, and with full=true an error on each
// linalg op left (math.sin bodies, linalg.index, convolutions and pools
// doppler cannot hold, integer and dynamic tensors, a non-constant fill); a
// pad with a non-constant value is left (a remark) and its convolution
// converted.
// RUN: doppler-opt %s --split-input-file --verify-diagnostics --convert-linalg-to-doppler="full=true"
// RUN: doppler-opt %s --split-input-file --convert-linalg-to-doppler="report=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// REPORT: remark: left as is: the body's 'math.sin' has no doppler join
// REPORT: remark: left as is: its body uses linalg.index
// REPORT: remark: left as is: it is not a convolution or pooling doppler can take: its result is not a float tensor of static shape
// REPORT: remark: left as is: it is not a convolution or pooling doppler can take: its body is not a multiply-accumulate
// REPORT: remark: left as is: it is not a convolution or pooling doppler can take: its body is not a multiply-accumulate
// REPORT: remark: left as is: it is not a convolution or pooling doppler can take: the image's index 1 is not a loop
// REPORT: remark: left as is: it does not pad with a constant
// REPORT: remark: left as is: scalar operand 0 is not a constant
// REPORT: remark: left as is: it has a dynamic shape
// REPORT: remark: left as is: it has dynamic offsets, sizes or strides
// REPORT: remark: converted 1 op(s) to doppler (linalg.exp: 1); left 0

#id = affine_map<(d0, d1) -> (d0, d1)>

// expected-remark @below {{converted 1 op(s) to doppler (linalg.matmul: 1); left 1 (linalg.generic: 1)}}
func.func @sin(%x: tensor<8x16xf32>, %w: tensor<16x16xf32>) -> tensor<8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %m = linalg.matmul ins(%x, %w : tensor<8x16xf32>, tensor<16x16xf32>) outs(%f : tensor<8x16xf32>) -> tensor<8x16xf32>
  // expected-error @below {{could not be converted to doppler: the body's 'math.sin' has no doppler join}}
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.sin %a : f32
    linalg.yield %r : f32
  } -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// expected-remark @below {{converted 0 op(s) to doppler; left 1 (linalg.generic: 1)}}
func.func @index(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %e = tensor.empty() : tensor<8x16xf32>
  // expected-error @below {{could not be converted to doppler: its body uses linalg.index}}
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %i = linalg.index 0 : index
    %c = arith.index_cast %i : index to i32
    %f = arith.sitofp %c : i32 to f32
    %r = arith.addf %a, %f : f32
    linalg.yield %r : f32
  } -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// Convolutions and pools: what doppler.conv / doppler.pool cannot hold
// stays. Dynamic shapes:
// expected-remark @below {{converted 0 op(s) to doppler; left 1 (linalg.conv_2d_nchw_fchw: 1)}}
func.func @conv_dynamic(%x: tensor<?x3x8x8xf32>, %k: tensor<4x3x3x3xf32>, %o: tensor<?x4x6x6xf32>) -> tensor<?x4x6x6xf32> {
  // expected-error @below {{could not be converted to doppler: it is not a convolution or pooling doppler can take: its result is not a float tensor of static shape}}
  %0 = linalg.conv_2d_nchw_fchw ins(%x, %k : tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) outs(%o : tensor<?x4x6x6xf32>) -> tensor<?x4x6x6xf32>
  return %0 : tensor<?x4x6x6xf32>
}

// -----

// A min pool (no doppler.pool kind), a window whose body is no
// multiply-accumulate, an index that is not `o * stride + k * dilation`.
#in = affine_map<(n, o, k) -> (n, o + k)>
#win = affine_map<(n, o, k) -> (k)>
#out = affine_map<(n, o, k) -> (n, o)>
#in3 = affine_map<(n, o, k) -> (n, o * 2 + k + n)>
// expected-remark @below {{converted 0 op(s) to doppler; left 3 (linalg.generic: 2, linalg.pooling_nhwc_min: 1)}}
func.func @windows_refused(%x: tensor<1x8x8x2xf32>, %o: tensor<1x6x6x2xf32>, %s: tensor<4x10xf32>,
                           %w: tensor<3xf32>, %r: tensor<4x8xf32>, %r3: tensor<4x2xf32>)
    -> (tensor<1x6x6x2xf32>, tensor<4x8xf32>, tensor<4x2xf32>) {
  %win = tensor.empty() : tensor<3x3xf32>
  // expected-error @below {{could not be converted to doppler: it is not a convolution or pooling doppler can take: its body is not a multiply-accumulate (a convolution) nor a max or sum (a pooling)}}
  %0 = linalg.pooling_nhwc_min {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %win : tensor<1x8x8x2xf32>, tensor<3x3xf32>) outs(%o : tensor<1x6x6x2xf32>) -> tensor<1x6x6x2xf32>
  // expected-error @below {{could not be converted to doppler: it is not a convolution or pooling doppler can take: its body is not a multiply-accumulate (a convolution) nor a max or sum (a pooling)}}
  %1 = linalg.generic {indexing_maps = [#in, #win, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%s, %w : tensor<4x10xf32>, tensor<3xf32>) outs(%r : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.subf %a, %b : f32
    %t = arith.addf %acc, %m : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  // expected-error @below {{could not be converted to doppler: it is not a convolution or pooling doppler can take: the image's index 1 is not a loop nor `o * stride + k * dilation`}}
  %2 = linalg.generic {indexing_maps = [#in3, #win, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%s, %w : tensor<4x10xf32>, tensor<3xf32>) outs(%r3 : tensor<4x2xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %t = arith.addf %acc, %m : f32
    linalg.yield %t : f32
  } -> tensor<4x2xf32>
  return %0, %1, %2 : tensor<1x6x6x2xf32>, tensor<4x8xf32>, tensor<4x2xf32>
}

// -----

// A convolution whose input is padded with a value that is not a constant:
// the convolution converts (without padding), the pad stays as it is.
// expected-remark @below {{converted 1 op(s) to doppler (linalg.conv_2d_nchw_fchw: 1); left 1 (tensor.pad: 1)}}
func.func @conv_pad_not_constant(%x: tensor<1x3x8x8xf32>, %k: tensor<4x3x3x3xf32>, %v: f32) -> tensor<1x4x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %v : f32
  } : tensor<1x3x8x8xf32> to tensor<1x3x10x10xf32>
  %e = tensor.empty() : tensor<1x4x8x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %0 = linalg.conv_2d_nchw_fchw ins(%p, %k : tensor<1x3x10x10xf32>, tensor<4x3x3x3xf32>) outs(%f : tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  return %0 : tensor<1x4x8x8xf32>
}

// -----

// expected-remark @below {{converted 0 op(s) to doppler; left 2 (linalg.add: 1, linalg.exp: 1)}}
func.func @types(%x: tensor<8xi32>, %y: tensor<?xf32>) -> (tensor<8xi32>, tensor<?xf32>) {
  // expected-error @below {{could not be converted to doppler: its result is not a float tensor of static shape}}
  %0 = linalg.add ins(%x, %x : tensor<8xi32>, tensor<8xi32>) outs(%x : tensor<8xi32>) -> tensor<8xi32>
  // expected-error @below {{could not be converted to doppler: its result is not a float tensor of static shape}}
  %1 = linalg.exp ins(%y : tensor<?xf32>) outs(%y : tensor<?xf32>) -> tensor<?xf32>
  return %0, %1 : tensor<8xi32>, tensor<?xf32>
}

// -----

// expected-remark @below {{converted 0 op(s) to doppler; left 1 (linalg.fill: 1)}}
func.func @fill(%v: f32) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  // expected-error @below {{could not be converted to doppler: scalar operand 0 is not a constant}}
  %0 = linalg.fill ins(%v : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// A cast through a type narrower than the element type (a deliberate
// rounding) is not computed through.
// expected-remark @below {{converted 0 op(s) to doppler; left 1 (linalg.generic: 1)}}
func.func @narrowing_cast(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %e = tensor.empty() : tensor<8x16xf32>
  // expected-error @below {{could not be converted to doppler: the body casts f16 to f32: doppler einsums compute in one element type (here f32)}}
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %h = arith.truncf %a : f32 to f16
    %r = arith.extf %h : f16 to f32
    linalg.yield %r : f32
  } -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// Of an op with several results only one may be used.
// expected-remark @below {{converted 0 op(s) to doppler; left 1 (linalg.generic: 1)}}
func.func @two_used_results(%x: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %e = tensor.empty() : tensor<8x16xf32>
  // expected-error @below {{could not be converted to doppler: it has 2 used results; one is supported}}
  %0:2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x16xf32>) outs(%e, %e : tensor<8x16xf32>, tensor<8x16xf32>) {
  ^bb0(%a: f32, %o: f32, %p: f32):
    %r = math.exp %a : f32
    linalg.yield %a, %r : f32, f32
  } -> (tensor<8x16xf32>, tensor<8x16xf32>)
  return %0#0, %0#1 : tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// Tensor ops left are in the remark, never errors.
// expected-remark @below {{converted 0 op(s) to doppler; left 2 (tensor.collapse_shape: 1, tensor.extract_slice: 1)}}
func.func @tensor_ops(%x: tensor<8x16xf32>, %y: tensor<?x2xf32>, %i: index) -> (tensor<?xf32>, tensor<4x8xf32>) {
  %0 = tensor.collapse_shape %y [[0, 1]] : tensor<?x2xf32> into tensor<?xf32>
  %1 = tensor.extract_slice %x[%i, 0] [4, 8] [1, 1] : tensor<8x16xf32> to tensor<4x8xf32>
  return %0, %1 : tensor<?xf32>, tensor<4x8xf32>
}

// -----

// With report=true (second RUN line) a function with nothing left is reported
// too; with full=true alone it is not.
func.func @nothing_left(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %0 = linalg.exp ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
