func.func @full_slice(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = doppler.slice %x [0, 0] : tensor<4x8xf32> to tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
