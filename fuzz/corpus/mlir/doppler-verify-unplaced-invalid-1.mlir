// A transfer alone marks a placed program too.
func.func @transfer(%a: tensor<4xf32>) -> tensor<4xf32> {
  %x = doppler.einsum "i->i" join(exp) (%a) : (tensor<4xf32>) -> tensor<4xf32>
  %y = doppler.transfer %x from <0> to <1> : tensor<4xf32>
  return %y : tensor<4xf32>
}
