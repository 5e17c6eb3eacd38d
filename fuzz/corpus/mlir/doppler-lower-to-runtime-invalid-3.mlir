func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %a {doppler.device = #doppler.device<0>} : tensor<4xf32>
  return %0 : tensor<4xf32>
}
