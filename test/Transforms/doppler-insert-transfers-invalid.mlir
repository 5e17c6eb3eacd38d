// RUN: doppler-opt %s --split-input-file --verify-diagnostics --doppler-insert-transfers
// RUN: doppler-opt %s --split-input-file --verify-diagnostics --doppler-verify-placed

func.func @unplaced(%a: tensor<4xf32>) -> tensor<4xf32> {
  %x = doppler.einsum "i->i" join(exp) (%a) {doppler.device = #doppler.device<0>} : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{is not placed (no doppler.device); run doppler-place first}}
  %y = doppler.einsum "i->i" join(neg) (%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
