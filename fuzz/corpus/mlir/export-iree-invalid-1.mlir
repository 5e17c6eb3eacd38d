func.func @dynamic_argument(%a: tensor<?xf32>) -> tensor<?xf32> {
  %0 = doppler.transfer %a from <0> to <1> : tensor<?xf32>
  return %0 : tensor<?xf32>
}
