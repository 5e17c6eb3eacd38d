// The learned policy (policy=doppler, the pass's default) in the pass.
// REQUIRES: learning
// RUN: doppler-opt %s --split-input-file --doppler-place="devices=2" 2>/dev/null | FileCheck %s
// RUN: doppler-opt %s --split-input-file --doppler-place="devices=2 budget-evaluations=0" 2>&1 >/dev/null | FileCheck %s --check-prefix=GREEDY
// By default the pass spends a budget counted in simulator runs: the
// greedy rollout and both heuristic priors as starts, the best refined.
// The same placement on every run; a wall-clock budget works too.
// RUN: doppler-opt %s --split-input-file --doppler-place="devices=2" 2>&1 >/dev/null | FileCheck %s --check-prefix=BUDGET
// RUN: doppler-opt %s --split-input-file --doppler-place="devices=2" -o %t.e 2>/dev/null
// RUN: doppler-opt %s --split-input-file --doppler-place="devices=2" -o %t.f 2>/dev/null
// RUN: diff %t.e %t.f
// RUN: doppler-opt %s --split-input-file --doppler-place="devices=2 budget-ms=50 budget-evaluations=0" 2>&1 >/dev/null | FileCheck %s --check-prefix=TIMED
// RUN: doppler-opt %s --split-input-file --doppler-place="devices=3 policy=doppler samples=6 seed=4" 2>&1 >/dev/null | FileCheck %s --check-prefix=SAMPLED
// Sampling is deterministic for a seed.
// RUN: doppler-opt %s --split-input-file --doppler-place="devices=3 samples=6 seed=4" -o %t.a 2>/dev/null
// RUN: doppler-opt %s --split-input-file --doppler-place="devices=3 samples=6 seed=4" -o %t.b 2>/dev/null
// RUN: diff %t.a %t.b
// A model file given explicitly: the committed default is the embedded one.
// RUN: doppler-opt %s --split-input-file --doppler-place="devices=2 model=%doppler_src/models/doppler-default.pt" -o %t.c 2>/dev/null
// RUN: doppler-opt %s --split-input-file --doppler-place="devices=2" -o %t.d 2>/dev/null
// RUN: diff %t.c %t.d

// Every op gets a device in range.
// CHECK-LABEL: func.func @two_chains
// CHECK-COUNT-4: doppler.task {{.*}}{doppler.device = #doppler.device<{{[01]}}>}
// CHECK-LABEL: func.func @diamond
// CHECK-COUNT-4: doppler.task {{.*}}{doppler.device = #doppler.device<{{[01]}}>}
// GREEDY: remark: placed 4 ops on 2 devices with doppler (greedy, embedded model): predicted makespan
// GREEDY: remark: placed 4 ops on 2 devices with doppler (greedy, embedded model): predicted makespan
// The first function's greedy placement is at the lower bound (the search
// stops after its first run); the second's 1600 runs are 200 per (op,
// device). Everything on one device ("single", the serial time 10) is a
// start too.
// BUDGET: remark: placed 4 ops on 2 devices with doppler (greedy, embedded model, within 1 simulator run): predicted makespan 5, lower bound 5
// BUDGET: remark: budget: doppler greedy 5 (best), critical-path 5, join-aware 5, single 10; refined 5 -> 5 in 1 run,
// BUDGET: remark: placed 4 ops on 2 devices with doppler (greedy, embedded model, within 1600 simulator runs): predicted makespan 6.5, lower bound 6
// BUDGET: remark: budget: doppler greedy 6.5 (best), critical-path 6.5, join-aware 6.5, single 10; refined 6.5 -> 6.5 in 1600 runs
// TIMED-COUNT-2: remark: budget: doppler greedy
// SAMPLED: remark: placed 4 ops on 3 devices with doppler (best of 6 rollouts, embedded model, within {{[0-9]+}} simulator runs)
func.func @two_chains() -> (!doppler.value, !doppler.value) {
  %a = doppler.task "a" compute(2.0) transfer(100.0)
  %b = doppler.task "b" compute(2.0) transfer(100.0)
  %a2 = doppler.task "a2" (%a) compute(3.0) transfer(100.0)
  %b2 = doppler.task "b2" (%b) compute(3.0) transfer(100.0)
  return %a2, %b2 : !doppler.value, !doppler.value
}

// -----

func.func @diamond() -> !doppler.value {
  %a = doppler.task "a" compute(1.0) transfer(0.5)
  %b = doppler.task "b" (%a) compute(4.0) transfer(0.5)
  %c = doppler.task "c" (%a) compute(4.0) transfer(0.5)
  %d = doppler.task "d" (%b, %c) compute(1.0) transfer(0.5)
  return %d : !doppler.value
}
