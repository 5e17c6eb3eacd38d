// doppler-verify-placed accepts a function whose every op has a device and
// changes nothing; on a function alone (any(...)) it checks that function.

func.func @placed(%a: tensor<4xf32>) -> tensor<4xf32> {
  %x = doppler.einsum "i->i" join(exp) (%a) {doppler.device = #doppler.device<0>} : (tensor<4xf32>) -> tensor<4xf32>
  %t = doppler.transfer %x from <0> to <1> {doppler.device = #doppler.device<1>} : tensor<4xf32>
  %y = doppler.einsum "i->i" join(neg) (%t) {doppler.device = #doppler.device<1>} : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// A declaration has nothing to place.
func.func private @declared(tensor<4xf32>) -> tensor<4xf32>
