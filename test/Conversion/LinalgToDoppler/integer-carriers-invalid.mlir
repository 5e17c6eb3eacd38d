// What integer carriers (IntegerCarriers.cpp) leave, as errors with
// full=true: an integer tensor computed from data that leaves the function
// (the function's results keep their types, and the dialect has no float
// -> integer conversion), and integer ops without an exact float form
// (an unsigned comparison, a bitwise and of wide integers).
// RUN: doppler-opt %s --split-input-file --verify-diagnostics --convert-linalg-to-doppler="full=true"

#id = affine_map<(d0) -> (d0)>

// expected-remark @below {{converted 0 op(s) to doppler; left 1 (linalg.generic: 1)}}
func.func @mask_returned(%ids: tensor<4xi64>) -> tensor<4xi1> {
  %c0 = arith.constant 0 : i64
  %e = tensor.empty() : tensor<4xi1>
  // expected-error @below {{could not be converted to doppler: its result is not a float tensor of static shape}}
  %m = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%ids : tensor<4xi64>) outs(%e : tensor<4xi1>) {
  ^bb0(%i: i64, %o: i1):
    %ne = arith.cmpi ne, %i, %c0 : i64
    linalg.yield %ne : i1
  } -> tensor<4xi1>
  return %m : tensor<4xi1>
}

// -----

#id = affine_map<(d0) -> (d0)>

// expected-remark @below {{converted 0 op(s) to doppler; left 2 (linalg.generic: 2)}}
func.func @unsigned_compare(%ids: tensor<4xi64>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %c3 = arith.constant 3 : i64
  %e = tensor.empty() : tensor<4xi1>
  // expected-error @below {{could not be converted to doppler: its result is not a float tensor of static shape}}
  %m = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%ids : tensor<4xi64>) outs(%e : tensor<4xi1>) {
  ^bb0(%i: i64, %o: i1):
    %lt = arith.cmpi ult, %i, %c3 : i64
    linalg.yield %lt : i1
  } -> tensor<4xi1>
  %ef = tensor.empty() : tensor<4xf32>
  // expected-error @below {{could not be converted to doppler: operand 0 is not a static tensor of the result's element type}}
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%m, %x : tensor<4xi1>, tensor<4xf32>) outs(%ef : tensor<4xf32>) {
  ^bb0(%c: i1, %v: f32, %o: f32):
    %z = arith.constant 0.0 : f32
    %s = arith.select %c, %v, %z : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>

// expected-remark @below {{converted 0 op(s) to doppler; left 1 (linalg.generic: 1)}}
func.func @bitwise_and(%ids: tensor<4xi64>) -> tensor<4xf32> {
  %c6 = arith.constant 6 : i64
  %e = tensor.empty() : tensor<4xf32>
  // expected-error @below {{could not be converted to doppler: operand 0 is not a static tensor of the result's element type}}
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%ids : tensor<4xi64>) outs(%e : tensor<4xf32>) {
  ^bb0(%i: i64, %o: f32):
    %a = arith.andi %i, %c6 : i64
    %f = arith.sitofp %a : i64 to f32
    linalg.yield %f : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
