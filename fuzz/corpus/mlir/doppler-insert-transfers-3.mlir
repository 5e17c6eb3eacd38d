// A reload reads a host value and waits for values on any device: no
// transfer for it; its result is an ordinary value on its device.
func.func @reload_elsewhere(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = doppler.einsum "i->i" join(exp) (%x) {doppler.device = #doppler.device<0>} : (tensor<4xf32>) -> tensor<4xf32>
  %h = doppler.evict %a from <0> {doppler.device = #doppler.device<0>} : tensor<4xf32>
  %t = doppler.einsum "i->i" join(neg) (%x) {doppler.device = #doppler.device<1>} : (tensor<4xf32>) -> tensor<4xf32>
  %r = doppler.reload %h to <1> after(%a : tensor<4xf32>) {doppler.device = #doppler.device<1>} : tensor<4xf32>
  %b = doppler.einsum "i,i->i" join(add) (%r, %t) {doppler.device = #doppler.device<1>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %c = doppler.einsum "i->i" join(relu) (%b) {doppler.device = #doppler.device<0>} : (tensor<4xf32>) -> tensor<4xf32>
  return %c : tensor<4xf32>
}
