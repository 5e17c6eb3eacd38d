func.func @identity_einsum(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = doppler.einsum "ij->ij" join(identity) (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
