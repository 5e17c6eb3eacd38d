func.func @no_arrow(%x: tensor<4x4xf32>) {
  %0 = doppler.einsum "ij" join(relu) (%x) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return
}
