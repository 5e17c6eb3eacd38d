func.func @transfer_to_same_device(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = doppler.transfer %x from <2> to <2> : tensor<4xf32>
  %1 = doppler.transfer %x from <0> to <1> : tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}
