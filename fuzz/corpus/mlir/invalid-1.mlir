func.func @two_arrows(%x: tensor<4x4xf32>) {
  %0 = doppler.einsum "ij->ij->ij" join(relu) (%x) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return
}
