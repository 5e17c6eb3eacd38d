// Schedule exports label a doppler.fused op with its spec and its joins in
// order, like an einsum with its one join.
func.func @placed(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = doppler.fused "ij,j->ij" "add(in0, in1); gelu(s0)" (%x, %b) {doppler.device = #doppler.device<0>}
      : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = doppler.einsum "ij->ij" join(exp) (%0) {doppler.device = #doppler.device<1>}
      : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}
