// RUN: doppler-opt %s --split-input-file --verify-diagnostics --doppler-lower-to-runtime

// expected-error @below {{function @f is not placed (no op has doppler.device)}}
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = doppler.einsum "i->i" join(exp) (%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = doppler.einsum "i->i" join(exp) (%a) {doppler.device = #doppler.device<0>} : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error @below {{'doppler.einsum' op on device 1 uses a value produced on device 0 without a doppler.transfer}}
  %1 = doppler.einsum "i->i" join(neg) (%0) {doppler.device = #doppler.device<1>} : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = doppler.einsum "i->i" join(exp) (%a) {doppler.device = #doppler.device<0>} : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error @below {{'doppler.einsum' op is not placed (no doppler.device)}}
  %1 = doppler.einsum "i->i" join(neg) (%0) : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{'arith.addf' op is not supported by the runtime}}
  %0 = arith.addf %a, %a {doppler.device = #doppler.device<0>} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @g() -> !doppler.value {
  // expected-error @below {{'doppler.task' op is cost-only (opaque values, no data); it can only run as a delay of its compute cost (delay-tasks=true)}}
  %0 = doppler.task "input" compute(100.0) transfer(50.0) {doppler.device = #doppler.device<0>}
  return %0 : !doppler.value
}

// -----

func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = doppler.einsum "i->i" join(exp) (%a) {doppler.device = #doppler.device<0>} : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error @below {{'doppler.transfer' op moves a value from device 2 but its producer is on device 0}}
  %1 = doppler.transfer %0 from <2> to <1> {doppler.device = #doppler.device<1>} : tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// expected-error @below {{argument 0 of @f has element type 'bf16', which the runtime does not support}}
func.func @f(%a: tensor<4xbf16>) -> tensor<4xbf16> {
  %0 = doppler.einsum "i->i" join(neg) (%a) {doppler.device = #doppler.device<0>} : (tensor<4xbf16>) -> tensor<4xbf16>
  return %0 : tensor<4xbf16>
}
