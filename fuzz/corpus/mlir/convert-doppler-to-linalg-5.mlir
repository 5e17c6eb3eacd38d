// slice: tensor.extract_slice at the offsets, unit strides.
func.func @slice(%x: tensor<8x16xf32>) -> tensor<4x8xf32> {
  %0 = doppler.slice %x [4, 8] {doppler.device = #doppler.device<2>} : tensor<8x16xf32> to tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
