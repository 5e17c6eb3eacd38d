// Every phase that works on a function body's top-level ops refuses Doppler
// ops nested in a region, run one by one as in the pipeline (and in a stock
// mlir-opt with the plugins): a nested einsum would otherwise be left
// uncosted and unplaced while the checks passed.
// RUN: doppler-opt %s --allow-unregistered-dialect --verify-diagnostics --doppler-annotate-costs
// RUN: doppler-opt %s --allow-unregistered-dialect --verify-diagnostics --doppler-simulate
// RUN: doppler-opt %s --allow-unregistered-dialect --verify-diagnostics --doppler-verify-placed
// RUN: doppler-opt %s --allow-unregistered-dialect --verify-diagnostics --doppler-plan-memory

func.func @nested(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'test.wrapper' op holds 'doppler.einsum' in a region: the placement phases place the ops directly in a function body, so nested Doppler ops would be neither costed nor placed; inline the region first}}
  %r = "test.wrapper"() ({
    // expected-note @+1 {{the nested op}}
    %x = doppler.einsum "i->i" join(exp) (%a) : (tensor<4xf32>) -> tensor<4xf32>
    "test.yield"(%x) : (tensor<4xf32>) -> ()
  }) {doppler.device = #doppler.device<0>, doppler.compute_cost = 1.0 : f64, doppler.transfer_cost = 1.0 : f64} : () -> tensor<4xf32>
  return %r : tensor<4xf32>
}
