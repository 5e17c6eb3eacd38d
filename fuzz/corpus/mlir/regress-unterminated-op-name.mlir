// Errors of the entry point that doppler-lower-!to-runtime can add.


func.func private @helper(tensor<4xf32>) -> tensor<4xf32>

func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = doppler.einsum "i->i" join(exp) (%a) {doppler.device = #doppler.device<0>} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = doppler.transfer %0 from <0> to <1> {doppler.device = #doppler.device<1>} : tensor<4xf32>
  %2 = doppler.einsum "i->i" join(neg) (%1) {doppler.devicezzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz = #doppler.device<1>} : (tensor<4xf32>) -> tensor<4xf32>
  return %2 : tensor<4xf32>
}
func.cals