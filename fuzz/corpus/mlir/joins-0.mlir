// Every join becomes the scalar expression ::doppler::applyJoin computes.

func.func @join_identity(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %0 = doppler.einsum "ij->ji" join(identity) (%x) : (tensor<4x8xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}
