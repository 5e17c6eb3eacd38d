// Every unplaced op gets its own error, in every function.
// RUN: doppler-opt %s --split-input-file --verify-diagnostics --doppler-verify-placed

func.func @two_unplaced(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'doppler.einsum' op is not placed (no doppler.device); run doppler-place first}}
  %x = doppler.einsum "i->i" join(exp) (%a) : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{'doppler.einsum' op is not placed (no doppler.device); run doppler-place first}}
  %y = doppler.einsum "i->i" join(neg) (%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Ops of other dialects need a device too.
func.func @other_dialect(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'arith.addf' op is not placed (no doppler.device); run doppler-place first}}
  %x = arith.addf %a, %a : tensor<4xf32>
  return %x : tensor<4xf32>
}
