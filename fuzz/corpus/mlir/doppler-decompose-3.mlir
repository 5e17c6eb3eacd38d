// A max aggregation is combined with join(max); three partials make the
// tree (p0 max p1) max p2. Two output blocks, each with its own tree.
func.func @max_tree(%x: tensor<4x9xf32>) -> tensor<4xf32> {
  %m = doppler.einsum "ij->i" join(identity) agg(max) (%x) {doppler.parts = array<i64: 2, 3>}
      : (tensor<4x9xf32>) -> tensor<4xf32>
  return %m : tensor<4xf32>
}
