func.func @output_index_not_in_inputs(%x: tensor<4x4xf32>) {
  %0 = doppler.einsum "ij->ik" join(identity) (%x) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return
}
