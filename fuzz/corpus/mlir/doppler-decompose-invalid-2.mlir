// Nothing is rewritten when one einsum is invalid: the first stays whole.
func.func @beyond_extent(%x: tensor<3x8xf32>) -> tensor<3x8xf32> {
  %y = doppler.einsum "ij->ij" join(exp) (%x) {doppler.parts = array<i64: 1, 2>} : (tensor<3x8xf32>) -> tensor<3x8xf32>
  %z = doppler.einsum "ij->ij" join(neg) (%y) {doppler.parts = array<i64: 4, 1>} : (tensor<3x8xf32>) -> tensor<3x8xf32>
  return %z : tensor<3x8xf32>
}
