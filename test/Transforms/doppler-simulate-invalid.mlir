// RUN: doppler-opt %s --verify-diagnostics --doppler-simulate

func.func @unplaced() {
  %a = doppler.task "a" compute(2.0) transfer(10.0) {doppler.device = #doppler.device<0>}
  // expected-error @+1 {{is not placed (no doppler.device); run doppler-place before doppler-simulate}}
  %b = doppler.task "b" (%a) compute(3.0) transfer(1.0)
  return
}
