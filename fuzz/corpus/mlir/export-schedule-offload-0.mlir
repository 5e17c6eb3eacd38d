// Schedule exports draw doppler-plan-memory's copies with the transfers of
// their device (a copy lane), labelled after the evicted value's producer,
// at the times the pass predicted (the program of doppler-plan-memory.mlir's
// @mid, where no order avoids the eviction: evict 10 -> 11, reload
// 40 -> 41).

func.func @mid(%x: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %a = doppler.einsum "ij->ij" join(exp) (%x) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %b = doppler.einsum "ij->ij" join(tanh) (%a) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %c = doppler.einsum "ij->ij" join(neg) (%x) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %d = doppler.einsum "ij,ij->ij" join(add) (%b, %c) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %e = doppler.einsum "ij->ij" join(relu) (%d) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %f = doppler.einsum "ij,ij->ij" join(add) (%a, %e) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  return %f : tensor<32x32xf32>
}
