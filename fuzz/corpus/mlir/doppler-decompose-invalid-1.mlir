func.func @too_many_parts(%x: tensor<8xf32>) -> tensor<8xf32> {
  %y = doppler.einsum "i->i" join(exp) (%x) {doppler.parts = array<i64: 2, 2>} : (tensor<8xf32>) -> tensor<8xf32>
  return %y : tensor<8xf32>
}
