func.func @repeated_input_index(%x: tensor<4x4xf32>) {
  %0 = doppler.einsum "ii->i" join(identity) (%x) : (tensor<4x4xf32>) -> tensor<4xf32>
  return
}
