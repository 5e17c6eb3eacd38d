func.func @single_block_assemble(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = doppler.assemble [1, 1] (%x) : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
