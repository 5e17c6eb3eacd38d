// What the constant folding and the gather conversion refuse, as errors
// with full=true: a mask computed from constants over fold-limit elements
// (here 4; 16 elements), the select on it, and a gather whose index is
// computed from data (neither one input element nor constants).
// RUN: doppler-opt %s --split-input-file --verify-diagnostics --convert-linalg-to-doppler="full=true fold-limit=4"

#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>

// expected-remark @below {{converted 1 op(s) to doppler (linalg.generic: 1); left 2 (linalg.generic: 2)}}
func.func @mask_over_the_limit(%scores: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %e = tensor.empty() : tensor<4xi64>
  %pos = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      outs(%e : tensor<4xi64>) {
  ^bb0(%o: i64):
    %i = linalg.index 0 : index
    %c = arith.index_cast %i : index to i64
    linalg.yield %c : i64
  } -> tensor<4xi64>
  %em = tensor.empty() : tensor<4x4xi1>
  // expected-error @below {{could not be converted to doppler: its operands are all constants, but it was not folded: its result has 16 elements, over the fold limit of 4 (option fold-limit)}}
  %mask = linalg.generic {indexing_maps = [#row, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%pos, %pos : tensor<4xi64>, tensor<4xi64>) outs(%em : tensor<4x4xi1>) {
  ^bb0(%q: i64, %k: i64, %o: i1):
    %le = arith.cmpi sle, %k, %q : i64
    linalg.yield %le : i1
  } -> tensor<4x4xi1>
  %ninf = arith.constant 0xFF800000 : f32
  %ef = tensor.empty() : tensor<4x4xf32>
  // expected-error @below {{could not be converted to doppler: operand 0 is not a static tensor of the result's element type}}
  %r = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mask, %scores : tensor<4x4xi1>, tensor<4x4xf32>) outs(%ef : tensor<4x4xf32>) {
  ^bb0(%m: i1, %s: f32, %o: f32):
    %v = arith.select %m, %s, %ninf : f32
    linalg.yield %v : f32
  } -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

// -----

#ids = affine_map<(d0, d1) -> (d0)>
#out = affine_map<(d0, d1) -> (d0, d1)>

// expected-remark @below {{converted 0 op(s) to doppler; left 1 (linalg.generic: 1)}}
func.func @gather_at_computed_index(%ids: tensor<3xi64>, %table: tensor<10x4xf32>) -> tensor<3x4xf32> {
  %c2 = arith.constant 2 : i64
  %e = tensor.empty() : tensor<3x4xf32>
  // expected-error @below {{could not be converted to doppler: a gather (an index is neither a loop nor one integer input element) whose indices are computed from tensors that are not constants}}
  %r = linalg.generic {indexing_maps = [#ids, #out], iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<3xi64>) outs(%e : tensor<3x4xf32>) {
  ^bb0(%i: i64, %o: f32):
    %twice = arith.muli %i, %c2 : i64
    %r = arith.index_cast %twice : i64 to index
    %d = linalg.index 1 : index
    %v = tensor.extract %table[%r, %d] : tensor<10x4xf32>
    linalg.yield %v : f32
  } -> tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}
