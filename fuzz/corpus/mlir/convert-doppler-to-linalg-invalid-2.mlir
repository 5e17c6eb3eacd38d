// doppler.transfer of a dynamically shaped tensor.
func.func @transfer_dynamic(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %0 = doppler.transfer %x from <0> to <1> : tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}
