// doppler-translate --export-iree: evictions fold away (IREE manages its
// own memory); a reload onto another device than the evict's becomes a
// flow.tensor.transfer of the evicted value.

func.func @offload(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = doppler.einsum "ij->ij" join(exp) (%x) {doppler.device = #doppler.device<0>}
      : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %h = doppler.evict %e from <0> {doppler.device = #doppler.device<0>} : tensor<4x8xf32>
  %r = doppler.reload %h to <1> {doppler.device = #doppler.device<1>} : tensor<4x8xf32>
  %a = doppler.einsum "ij->ij" join(tanh) (%r) {doppler.device = #doppler.device<1>}
      : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %a : tensor<4x8xf32>
}
