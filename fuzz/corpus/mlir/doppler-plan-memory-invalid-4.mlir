// The pass runs once: a program with evictions is refused.
func.func @twice(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = doppler.einsum "i->i" join(exp) (%x) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<4xf32>) -> tensor<4xf32>
  %h = doppler.evict %a from <0> {doppler.device = #doppler.device<0>} : tensor<4xf32>
  %r = doppler.reload %h to <0> {doppler.device = #doppler.device<0>} : tensor<4xf32>
  return %r : tensor<4xf32>
}
