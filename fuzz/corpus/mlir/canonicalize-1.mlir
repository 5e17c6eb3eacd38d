// A transposition and a relu are not copies.
func.func @not_identity(%x: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %0 = doppler.einsum "ij->ji" join(identity) (%x) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %1 = doppler.einsum "ij->ij" join(relu) (%x) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0, %1 : tensor<4x4xf32>, tensor<4x4xf32>
}
