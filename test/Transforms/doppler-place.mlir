// RUN: doppler-opt %s --split-input-file --doppler-place="devices=2 policy=critical-path" 2>/dev/null | FileCheck %s
// RUN: doppler-opt %s --split-input-file --doppler-place="devices=2 policy=critical-path" 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// RUN: doppler-opt %s --split-input-file --doppler-place="devices=3 policy=round-robin" 2>/dev/null | FileCheck %s --check-prefix=RR
// RUN: doppler-opt %s --split-input-file --doppler-place="devices=4 policy=single" 2>&1 >/dev/null | FileCheck %s --check-prefix=SINGLE
// RUN: doppler-opt %s --split-input-file --doppler-place="devices=2 policy=rollout" 2>&1 >/dev/null | FileCheck %s --check-prefix=ROLLOUT
// Randomised policies and refinement are deterministic for a seed.
// RUN: doppler-opt %s --split-input-file --doppler-place="devices=3 policy=random seed=7 budget-evaluations=200" -o %t.a 2>/dev/null
// RUN: doppler-opt %s --split-input-file --doppler-place="devices=3 policy=random seed=7 budget-evaluations=200" -o %t.b 2>/dev/null
// RUN: diff %t.a %t.b

// Two independent chains of two tasks: critical path puts one chain per
// device (est ties go to the lowest id), so the makespan is 2 + 3 = 5, the
// lower bound max(5, 10/2).
// REMARK: remark: placed 4 ops on 2 devices with critical-path: predicted makespan 5, lower bound 5 (1.000x); load per device [5, 5]
// CHECK-LABEL: func.func @two_chains
// CHECK: %[[A:.*]] = doppler.task "a" {{.*}} {doppler.device = #doppler.device<0>}
// CHECK: doppler.task "b" {{.*}} {doppler.device = #doppler.device<1>}
// CHECK: doppler.task "a2" (%[[A]]) {{.*}} {doppler.device = #doppler.device<0>}
// CHECK: doppler.task "b2" {{.*}} {doppler.device = #doppler.device<1>}
// RR-LABEL: func.func @two_chains
// RR: doppler.device<0>
// RR: doppler.device<1>
// RR: doppler.device<2>
// RR: doppler.device<0>
// SINGLE: predicted makespan 10, lower bound 5 (2.000x); load per device [10, 0, 0, 0]
// ROLLOUT: remark: placed 4 ops on 2 devices with rollout: predicted makespan 5, lower bound 5 (1.000x)
func.func @two_chains() -> (!doppler.value, !doppler.value) {
  %a = doppler.task "a" compute(2.0) transfer(100.0)
  %b = doppler.task "b" compute(2.0) transfer(100.0)
  %a2 = doppler.task "a2" (%a) compute(3.0) transfer(100.0)
  %b2 = doppler.task "b2" (%b) compute(3.0) transfer(100.0)
  return %a2, %b2 : !doppler.value, !doppler.value
}

// -----

// Every op of a function is placed, whatever its dialect; arguments are
// not ops and return stays unplaced.
// CHECK-LABEL: func.func @costed
// CHECK: doppler.einsum {{.*}}doppler.device = #doppler.device<
// CHECK: arith.addf {{.*}}doppler.device = #doppler.device<
// CHECK: return
// CHECK-NOT: doppler.device
func.func @costed(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = doppler.einsum "i->i" join(exp) (%x) {doppler.compute_cost = 1.0, doppler.transfer_cost = 1.0} : (tensor<4xf32>) -> tensor<4xf32>
  %z = arith.addf %y, %x {doppler.compute_cost = 1.0, doppler.transfer_cost = 1.0} : tensor<4xf32>
  return %z : tensor<4xf32>
}
