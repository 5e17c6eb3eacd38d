// An offloaded program counts as placed, also without doppler.device.
func.func @offloaded(%x: tensor<4xf32>) -> tensor<4xf32> {
  %h = doppler.evict %x from <0> : tensor<4xf32>
  %r = doppler.reload %h to <0> : tensor<4xf32>
  return %r : tensor<4xf32>
}
