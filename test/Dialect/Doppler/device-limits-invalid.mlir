// RUN: doppler-opt %s --split-input-file --verify-diagnostics
// Device ids are capped where the attribute is parsed or built (the cap the
// tools, passes and the runtime share: 4096 devices), so that nothing that
// reads a placement sizes a table by an id, or narrows one to 32 bits.

func.func @placed_past_the_limit(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{device id 4096 is past the limit of 4096 devices}}
  %0 = doppler.einsum "i->i" join(relu) (%x) {doppler.device = #doppler.device<4096>} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @placed_past_32_bits(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{device id 4294967297 is past the limit of 4096 devices}}
  %0 = doppler.einsum "i->i" join(relu) (%x) {doppler.device = #doppler.device<4294967297>} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @transfer_past_the_limit(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{device id 1000000 is past the limit of 4096 devices}}
  %0 = doppler.transfer %x from <0> to <1000000> : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// The last device is accepted.
func.func @last_device(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = doppler.einsum "i->i" join(relu) (%x) {doppler.device = #doppler.device<4095>} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = doppler.transfer %0 from <4095> to <0> : tensor<4xf32>
  return %1 : tensor<4xf32>
}
