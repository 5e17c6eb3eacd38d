// RUN: doppler-opt %s --split-input-file --allow-unregistered-dialect --verify-diagnostics --doppler-lower-to-runtime

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

// -----

// expected-error @below {{function @f has several blocks; the runtime runs straight-line functions only}}
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  "test.br"()[^next] : () -> ()
^next:
  return %a : tensor<4xf32>
}

// -----

func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = doppler.einsum "i->i" join(exp) (%a) {doppler.device = #doppler.device<0>} : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error @below {{'doppler.transfer' op moves to device 1 but is placed on device 2}}
  %1 = doppler.transfer %0 from <0> to <1> {doppler.device = #doppler.device<2>} : tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// expected-error @below {{argument 0 has type 'tensor<?xf32>'; the runtime needs statically shaped tensors}}
func.func @f(%a: tensor<?xf32>) -> tensor<?xf32> {
  return %a : tensor<?xf32>
}

// -----

func.func @f(%a: tensor<4xf32>) -> tensor<4xbf16> {
  // expected-error @below {{'doppler.fill' op has element type 'bf16', which the runtime does not support (f16, f32, f64, i32, i64)}}
  %0 = doppler.fill 1.0 {doppler.device = #doppler.device<0>} : tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// -----

// The pass's own errors: options checked once, before any function; the
// entry point's errors on the module.
// RUN: not doppler-opt %s --split-input-file --doppler-lower-to-runtime="inputs=nowhere" 2>&1 | FileCheck %s --check-prefix=INPUTS
// RUN: not doppler-opt %s --split-input-file --doppler-lower-to-runtime="devices=-1" 2>&1 | FileCheck %s --check-prefix=DEVICES
// INPUTS: error: doppler-lower-to-runtime: inputs must be every-user or first-user, not 'nowhere'
// DEVICES: error: doppler-lower-to-runtime: devices must be >= 0
