// einsum (elementwise with broadcast, permuted input), no reduction: no fill.
func.func @einsum_broadcast(%x: tensor<4x8xf32>, %m: tensor<8xf32>) -> tensor<8x4xf32> {
  %0 = doppler.einsum "ij,j->ji" join(sub) (%x, %m) {doppler.device = #doppler.device<0>}
      : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}
