// einsum (scalar term): "ij,->ij" reads a rank-0 tensor at every point.
func.func @einsum_scalar_operand(%x: tensor<4x8xf32>, %s: tensor<f32>) -> tensor<4x8xf32> {
  %0 = doppler.einsum "ij,->ij" join(mul) (%x, %s)
      : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
