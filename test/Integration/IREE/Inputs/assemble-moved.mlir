// A placed program with the pattern of concat-moved.mlir: four blocks made
// on device 0 and assembled there twice; one assemble is moved to device 1
// and returned there, the other stays. Exported with the assembles as
// tensor.concat (--export-iree before issue 34 item 6), iree-compile 3.13
// segfaulted on it; the export now pins each assemble's empty tensor to
// its device (assemble-moved.test).
func.func @assemble_moved(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %s0 = doppler.slice %x [0, 0] {doppler.device = #doppler.device<0>} : tensor<4x8xf32> to tensor<2x4xf32>
  %s1 = doppler.slice %x [0, 4] {doppler.device = #doppler.device<0>} : tensor<4x8xf32> to tensor<2x4xf32>
  %s2 = doppler.slice %x [2, 0] {doppler.device = #doppler.device<0>} : tensor<4x8xf32> to tensor<2x4xf32>
  %s3 = doppler.slice %x [2, 4] {doppler.device = #doppler.device<0>} : tensor<4x8xf32> to tensor<2x4xf32>
  %b0 = doppler.einsum "ij->ij" join(tanh) (%s0) {doppler.device = #doppler.device<0>} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %b1 = doppler.einsum "ij->ij" join(tanh) (%s1) {doppler.device = #doppler.device<0>} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %b2 = doppler.einsum "ij->ij" join(tanh) (%s2) {doppler.device = #doppler.device<0>} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %b3 = doppler.einsum "ij->ij" join(tanh) (%s3) {doppler.device = #doppler.device<0>} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %a = doppler.assemble [2, 2] (%b0, %b1, %b2, %b3) {doppler.device = #doppler.device<0>} : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32> -> tensor<4x8xf32>
  %m = doppler.transfer %a from <0> to <1> : tensor<4x8xf32>
  %r = doppler.assemble [2, 2] (%b3, %b2, %b1, %b0) {doppler.device = #doppler.device<0>} : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32> -> tensor<4x8xf32>
  return %m, %r : tensor<4x8xf32>, tensor<4x8xf32>
}
