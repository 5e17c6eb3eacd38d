// One transfer per (value, destination device), shared by every consumer
// there, inserted after the producer and placed on the destination.
func.func @fan_out(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %x = doppler.einsum "i->i" join(exp) (%a) {doppler.device = #doppler.device<0>} : (tensor<4xf32>) -> tensor<4xf32>
  %n = doppler.einsum "i->i" join(neg) (%x) {doppler.device = #doppler.device<0>} : (tensor<4xf32>) -> tensor<4xf32>
  %r = doppler.einsum "i->i" join(relu) (%x) {doppler.device = #doppler.device<1>} : (tensor<4xf32>) -> tensor<4xf32>
  %s = doppler.einsum "i,i->i" join(add) (%x, %x) {doppler.device = #doppler.device<1>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %t = doppler.einsum "i->i" join(tanh) (%x) {doppler.device = #doppler.device<2>} : (tensor<4xf32>) -> tensor<4xf32>
  return %n, %r, %s, %t : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
