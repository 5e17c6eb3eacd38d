// Bad options are errors before any function is touched (the pass checks
// them once, in initialize()), with no location: they are not about the IR.
// RUN: not doppler-opt %s --split-input-file --allow-unregistered-dialect --doppler-place="devices=0" 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not doppler-opt %s --split-input-file --allow-unregistered-dialect --doppler-place="policy=clairvoyant" 2>&1 | FileCheck %s --check-prefix=POLICY
// RUN: not doppler-opt %s --split-input-file --allow-unregistered-dialect --doppler-place="devices=-3" 2>&1 | FileCheck %s --check-prefix=NEG
// RUN: not doppler-opt %s --split-input-file --allow-unregistered-dialect --doppler-place="budget-ms=-1" 2>&1 | FileCheck %s --check-prefix=BUDGET
// RUN: not doppler-opt %s --split-input-file --allow-unregistered-dialect --doppler-place="budget-ms=nan" 2>&1 | FileCheck %s --check-prefix=BUDGETNAN
// RUN: not doppler-opt %s --split-input-file --allow-unregistered-dialect --doppler-place="budget-evaluations=-2" 2>&1 | FileCheck %s --check-prefix=EVALS
// RUN: not doppler-opt %s --split-input-file --allow-unregistered-dialect --doppler-place="devices=5000" 2>&1 | FileCheck %s --check-prefix=MANY
// Errors about the IR are on the op, one per function:
// RUN: doppler-opt %s --split-input-file --allow-unregistered-dialect --verify-diagnostics --doppler-place="devices=2 policy=critical-path"

module {
  func.func @f() {
    return
  }
}
// ZERO: <unknown>:0: error: doppler-place: devices must be at least 1, got 0
// POLICY: error: doppler-place: unknown policy 'clairvoyant' (known: doppler, learned-moves, critical-path, join-aware, rollout, heft, round-robin, random, single, critical-path-reference)
// NEG: error: doppler-place: devices must be at least 1, got -3
// BUDGET: error: doppler-place: budget-ms must be a non-negative number of milliseconds, got -1
// BUDGETNAN: error: doppler-place: budget-ms must be a non-negative number of milliseconds, got nan
// EVALS: error: doppler-place: budget-evaluations must be -1 (the default), 0 (none) or a number of simulator runs, got -2
// MANY: <unknown>:0: error: doppler-place: devices must be at most 4096, got 5000

// -----

// expected-error @below {{'func.func' op has 2 blocks; doppler places straight-line functions only}}
func.func @branches(%a: tensor<4xf32>) -> tensor<4xf32> {
  "test.br"()[^next] : () -> ()
^next:
  return %a : tensor<4xf32>
}

// -----

func.func @uncosted(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{'doppler.einsum' op has no cost (doppler.compute_cost, doppler.transfer_cost); run doppler-annotate-costs first}}
  %0 = doppler.einsum "i->i" join(exp) (%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
