// Bad options are errors before any function is touched (the pass checks
// them once, in initialize()), with no location: they are not about the IR.
// RUN: not doppler-opt %s --doppler-place="devices=0" 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not doppler-opt %s --doppler-place="policy=clairvoyant" 2>&1 | FileCheck %s --check-prefix=POLICY
// RUN: not doppler-opt %s --doppler-place="devices=-3" 2>&1 | FileCheck %s --check-prefix=NEG
// RUN: not doppler-opt %s --doppler-place="refine-seconds=-1" 2>&1 | FileCheck %s --check-prefix=BUDGET

module {
  func.func @f() {
    return
  }
}
// ZERO: <unknown>:0: error: doppler-place: devices must be at least 1, got 0
// POLICY: error: doppler-place: unknown policy 'clairvoyant' (known: doppler, critical-path, join-aware, heft, round-robin, random, single, critical-path-reference)
// NEG: error: doppler-place: devices must be at least 1, got -3
// BUDGET: error: doppler-place: refinement budgets must not be negative
