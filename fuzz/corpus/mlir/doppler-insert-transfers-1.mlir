// Function arguments are everywhere and returned values stay put: no
// transfer. Running the pass twice adds nothing.
func.func @no_moves(%a: tensor<4xf32>) -> tensor<4xf32> {
  %x = doppler.einsum "i->i" join(exp) (%a) {doppler.device = #doppler.device<3>} : (tensor<4xf32>) -> tensor<4xf32>
  %y = doppler.einsum "i->i" join(exp) (%a) {doppler.device = #doppler.device<1>} : (tensor<4xf32>) -> tensor<4xf32>
  return %x : tensor<4xf32>
}
