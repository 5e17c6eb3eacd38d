// RUN: doppler-opt %s --split-input-file --verify-diagnostics --allow-unregistered-dialect --doppler-verify-unplaced
// The pipeline runs the same check first, before anything changes:
// RUN: doppler-opt %s --split-input-file --verify-diagnostics --allow-unregistered-dialect --doppler-pipeline="devices=2"

// A placed program (one error per function, on the first placed op).
func.func @placed(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'doppler.einsum' op is already placed (doppler.device = 1); 2 op(s) of @placed carry a placement or are transfers. The placement phases take an unplaced program: run them on the program before placement}}
  %x = doppler.einsum "i->i" join(exp) (%a) {doppler.device = #doppler.device<1>} : (tensor<4xf32>) -> tensor<4xf32>
  %y = doppler.einsum "i->i" join(neg) (%x) {doppler.device = #doppler.device<0>} : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// A transfer alone marks a placed program too.
func.func @transfer(%a: tensor<4xf32>) -> tensor<4xf32> {
  %x = doppler.einsum "i->i" join(exp) (%a) : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{'doppler.transfer' op is already placed; 1 op(s) of @transfer carry a placement or are transfers}}
  %y = doppler.transfer %x from <0> to <1> : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Einsums nested in an op's region would be neither costed nor placed.
func.func @nested(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'test.wrapper' op holds 'doppler.einsum' in a region: the placement phases place the ops directly in a function body, so nested Doppler ops would be neither costed nor placed; inline the region first}}
  %r = "test.wrapper"() ({
    // expected-note @+1 {{the nested op}}
    %x = doppler.einsum "i->i" join(exp) (%a) : (tensor<4xf32>) -> tensor<4xf32>
    "test.yield"(%x) : (tensor<4xf32>) -> ()
  }) : () -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// An offloaded program counts as placed, also without doppler.device.
func.func @offloaded(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'doppler.evict' op is already placed; 2 op(s) of @offloaded carry a placement or are transfers}}
  %h = doppler.evict %x from <0> : tensor<4xf32>
  %r = doppler.reload %h to <0> : tensor<4xf32>
  return %r : tensor<4xf32>
}
