// doppler-translate --export-iree: a placed doppler.fused op is one
// linalg.generic (one dispatch), named after the op and its device.

func.func @placed(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = doppler.fused "ij,j->ij" "add(in0, in1); gelu(s0)" (%x, %b) {doppler.device = #doppler.device<0>}
      : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = doppler.transfer %0 from <0> to <1> : tensor<4x8xf32>
  %2 = doppler.einsum "ij->ij" join(exp) (%1) {doppler.device = #doppler.device<1>}
      : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}
