// The pipeline runs the same check first, before anything changes:

// A placed program (one error per function, on the first placed op).
func.func @placed(%a: tensor<4xf32>) -> tensor<4xf32> {
  %x = doppler.einsum "i->i" join(exp) (%a) {doppler.device = #doppler.device<1>} : (tensor<4xf32>) -> tensor<4xf32>
  %y = doppler.einsum "i->i" join(neg) (%x) {doppler.device = #doppler.device<0>} : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
