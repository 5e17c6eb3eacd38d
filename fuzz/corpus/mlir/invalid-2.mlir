func.func @bad_character(%x: tensor<4x4xf32>) {
  %0 = doppler.einsum "i1->i" join(relu) (%x) : (tensor<4x4xf32>) -> tensor<4xf32>
  return
}
