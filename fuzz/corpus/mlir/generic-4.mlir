#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// linalg.generic with several recognised computations: (x - m) * r, with
// m and r broadcast per row, then exp of it: a chain of einsums. The
// intermediate (x - m) is shared by both uses.
func.func @chain(%x: tensor<8x16xf32>, %m: tensor<8xf32>, %r: tensor<8xf32>) -> tensor<8x16xf32> {
  %e = tensor.empty() : tensor<8x16xf32>
  %0 = linalg.generic {indexing_maps = [#id, #row, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m, %r : tensor<8x16xf32>, tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    %s = arith.mulf %d, %c : f32
    %x1 = math.exp %s : f32
    %y = arith.addf %x1, %d : f32
    linalg.yield %y : f32
  } -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
