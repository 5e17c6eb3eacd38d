// convert-linalg-to-doppler on linalg.generic: maps that are projected
// permutations (broadcasts, transposes, constant 0 on unit dims), bodies of
// recognised scalar ops compiled into einsum chains, constants folded into
// scale/shift joins, the select/cmpf forms of relu and max, silu, sigmoid
// and gelu recognised as one join, reductions as aggregations, and the
// init kept exact.

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>

// linalg.generic add with a broadcast bias (a row vector).
func.func @bias_add(%x: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<8x16xf32> {
  %e = tensor.empty() : tensor<8x16xf32>
  %r = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : tensor<8x16xf32>, tensor<16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}
