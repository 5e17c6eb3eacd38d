// Extents need not divide: 10 in 4 parts is 3, 3, 2, 2.
func.func @uneven(%x: tensor<10xf32>) -> tensor<10xf32> {
  %y = doppler.einsum "i->i" join(relu) (%x) {doppler.parts = array<i64: 4>} : (tensor<10xf32>) -> tensor<10xf32>
  return %y : tensor<10xf32>
}
