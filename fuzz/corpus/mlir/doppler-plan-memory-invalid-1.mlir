// The host's memory holds what is evicted at once: here 1000 bytes, and the
// one eviction @mid needs (doppler-plan-memory.mlir: %a, read early by %b
// and late by %f, is live across %d's step in every order) stashes 4096.
func.func @small_host(%x: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %a = doppler.einsum "ij->ij" join(exp) (%x) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %b = doppler.einsum "ij->ij" join(tanh) (%a) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %c = doppler.einsum "ij->ij" join(neg) (%x) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %d = doppler.einsum "ij,ij->ij" join(add) (%b, %c) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %e = doppler.einsum "ij->ij" join(relu) (%d) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %f = doppler.einsum "ij,ij->ij" join(add) (%a, %e) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  return %f : tensor<32x32xf32>
}
