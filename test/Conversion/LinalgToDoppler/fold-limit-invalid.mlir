// What the gather conversion refuses, as an error with full=true: a gather
// whose index is computed inside its body from data (neither one input
// element nor constants). A mask computed from constants over fold-limit
// elements is no longer refused: it is computed where the program runs,
// on floats (integer-carriers.mlir).
// RUN: doppler-opt %s --split-input-file --verify-diagnostics --convert-linalg-to-doppler="full=true fold-limit=4"

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
