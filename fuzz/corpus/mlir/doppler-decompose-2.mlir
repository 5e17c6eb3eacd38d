// The contracted j split in 4: four partial products, added as a balanced
// tree ((p0 + p1) + (p2 + p3)); the sum is the result, no assemble needed.
func.func @split_contraction(%a: tensor<4x8xf32>, %b: tensor<8x6xf32>) -> tensor<4x6xf32> {
  %c = doppler.einsum "ij,jk->ik" join(mul) agg(add) (%a, %b) {doppler.parts = array<i64: 1, 4, 1>}
      : (tensor<4x8xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>
  return %c : tensor<4x6xf32>
}
