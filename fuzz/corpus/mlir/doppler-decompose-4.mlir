// A full reduction: the partial scalars meet in a rank-0 einsum.
func.func @scalar(%x: tensor<4x4xf32>) -> tensor<f32> {
  %s = doppler.einsum "ij->" join(square) agg(min) (%x) {doppler.parts = array<i64: 2, 1>}
      : (tensor<4x4xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
