func.func @repeated_output_index(%x: tensor<4x4xf32>) {
  %0 = doppler.einsum "ij->ii" join(identity) (%x) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return
}
