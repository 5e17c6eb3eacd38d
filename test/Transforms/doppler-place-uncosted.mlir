// RUN: doppler-opt %s --verify-diagnostics --doppler-place

func.func @uncosted(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{has no cost (doppler.compute_cost, doppler.transfer_cost); run doppler-annotate-costs first}}
  %y = doppler.einsum "i->i" join(exp) (%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
