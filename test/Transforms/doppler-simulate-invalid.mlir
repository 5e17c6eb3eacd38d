// RUN: doppler-opt %s --split-input-file --verify-diagnostics --doppler-simulate

func.func @unplaced() {
  %a = doppler.task "a" compute(2.0) transfer(10.0) {doppler.device = #doppler.device<0>}
  // expected-error @+1 {{is not placed (no doppler.device); run doppler-place before doppler-simulate}}
  %b = doppler.task "b" (%a) compute(3.0) transfer(1.0)
  return
}

// -----

// doppler-plan-memory's output has its own predicted schedule; the
// placement graph refuses evictions rather than drop the copies.
func.func @offloaded(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = doppler.einsum "i->i" join(exp) (%x) {doppler.device = #doppler.device<0>, doppler.compute_cost = 1.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{'doppler.evict' op is an offload (doppler-plan-memory's output): the program cannot be placed or simulated again; use the program from before doppler-plan-memory}}
  %h = doppler.evict %a from <0> {doppler.device = #doppler.device<0>} : tensor<4xf32>
  %r = doppler.reload %h to <0> {doppler.device = #doppler.device<0>} : tensor<4xf32>
  return %r : tensor<4xf32>
}
