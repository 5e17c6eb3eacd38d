// Every message of convert-linalg-to-doppler: the remark listing what was
// converted and left by kind (linalg.generic, linalg.matmul, tensor ops),
// the per-op reasons with report=true, and with full=true an error on each
// linalg op left (math.erf bodies, linalg.index, convolutions, integer and
// dynamic tensors, a non-constant fill).
// RUN: doppler-opt %s --split-input-file --verify-diagnostics --convert-linalg-to-doppler="full=true"
// RUN: doppler-opt %s --split-input-file --convert-linalg-to-doppler="report=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// REPORT: remark: left as is: the body's 'math.erf' has no doppler join
// REPORT: remark: left as is: its body uses linalg.index
// REPORT: remark: left as is: indexing map 0 is not a projected permutation
// REPORT: remark: left as is: scalar operand 0 is not a constant
// REPORT: remark: left as is: it has a dynamic shape
// REPORT: remark: left as is: it has dynamic offsets, sizes or strides
// REPORT: remark: converted 1 op(s) to doppler (linalg.exp: 1); left 0

#id = affine_map<(d0, d1) -> (d0, d1)>

// expected-remark @below {{converted 1 op(s) to doppler (linalg.matmul: 1); left 1 (linalg.generic: 1)}}
func.func @erf(%x: tensor<8x16xf32>, %w: tensor<16x16xf32>) -> tensor<8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %m = linalg.matmul ins(%x, %w : tensor<8x16xf32>, tensor<16x16xf32>) outs(%f : tensor<8x16xf32>) -> tensor<8x16xf32>
  // expected-error @below {{could not be converted to doppler: the body's 'math.erf' has no doppler join}}
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.erf %a : f32
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

// expected-remark @below {{converted 0 op(s) to doppler; left 1 (linalg.conv_2d: 1)}}
func.func @conv(%x: tensor<8x8xf32>, %k: tensor<3x3xf32>, %o: tensor<6x6xf32>) -> tensor<6x6xf32> {
  // expected-error @below {{could not be converted to doppler: indexing map 0 is not a projected permutation}}
  %0 = linalg.conv_2d ins(%x, %k : tensor<8x8xf32>, tensor<3x3xf32>) outs(%o : tensor<6x6xf32>) -> tensor<6x6xf32>
  return %0 : tensor<6x6xf32>
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
