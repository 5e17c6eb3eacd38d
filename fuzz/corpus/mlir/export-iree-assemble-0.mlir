// --export-iree writes doppler.assemble as nested tensor.concat ops, after
// moving each block to the assemble's device.

func.func @assemble(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x16xf32> {
  %0 = doppler.einsum "ij->ij" join(exp) (%a) {doppler.device = #doppler.device<0>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = doppler.einsum "ij->ij" join(tanh) (%b) {doppler.device = #doppler.device<1>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = doppler.transfer %0 from <0> to <1> : tensor<4x8xf32>
  %3 = doppler.assemble [1, 2] (%2, %1) {doppler.device = #doppler.device<1>} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x16xf32>
  return %3 : tensor<4x16xf32>
}
