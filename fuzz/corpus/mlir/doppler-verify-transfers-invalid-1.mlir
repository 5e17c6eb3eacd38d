func.func @wrong_source(%a: tensor<4xf32>) -> tensor<4xf32> {
  %x = doppler.einsum "i->i" join(exp) (%a) {doppler.device = #doppler.device<0>} : (tensor<4xf32>) -> tensor<4xf32>
  %t = doppler.transfer %x from <2> to <1> {doppler.device = #doppler.device<1>} : tensor<4xf32>
  %y = doppler.einsum "i->i" join(neg) (%t) {doppler.device = #doppler.device<1>} : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
