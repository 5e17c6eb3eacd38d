// RUN: doppler-opt %s --split-input-file --verify-diagnostics --doppler-verify-transfers

func.func @missing_transfer(%a: tensor<4xf32>) -> tensor<4xf32> {
  %x = doppler.einsum "i->i" join(exp) (%a) {doppler.device = #doppler.device<0>} : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{on device 1 uses a value produced on device 0 without a doppler.transfer}}
  %y = doppler.einsum "i->i" join(neg) (%x) {doppler.device = #doppler.device<1>} : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @wrong_source(%a: tensor<4xf32>) -> tensor<4xf32> {
  %x = doppler.einsum "i->i" join(exp) (%a) {doppler.device = #doppler.device<0>} : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{moves a value from device 2 but its producer is on device 0}}
  %t = doppler.transfer %x from <2> to <1> {doppler.device = #doppler.device<1>} : tensor<4xf32>
  %y = doppler.einsum "i->i" join(neg) (%t) {doppler.device = #doppler.device<1>} : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @wrong_target(%a: tensor<4xf32>) -> tensor<4xf32> {
  %x = doppler.einsum "i->i" join(exp) (%a) {doppler.device = #doppler.device<0>} : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{moves to device 1 but is placed on device 3}}
  %t = doppler.transfer %x from <0> to <1> {doppler.device = #doppler.device<3>} : tensor<4xf32>
  %y = doppler.einsum "i->i" join(neg) (%t) {doppler.device = #doppler.device<3>} : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @unplaced(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{is not placed}}
  %x = doppler.einsum "i->i" join(exp) (%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %x : tensor<4xf32>
}
