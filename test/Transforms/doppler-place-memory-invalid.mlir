// Bad memory options are errors before any function is touched.
// RUN: not doppler-opt %s --doppler-place="memory-limit=-1" 2>&1 | FileCheck %s --check-prefix=NEG
// RUN: not doppler-opt %s --doppler-place="memory-limit=nan" 2>&1 | FileCheck %s --check-prefix=NAN
// RUN: not doppler-opt %s --doppler-place="fit-evaluations=0" 2>&1 | FileCheck %s --check-prefix=EVALS
// RUN: not doppler-opt %s --doppler-place="system=no-such-system" 2>&1 | FileCheck %s --check-prefix=SYSTEM
// A memory limit on a cost-only graph (no tensor sizes) cannot be checked:
// a warning, and the placement goes on.
// RUN: doppler-opt %s --doppler-place="devices=2 policy=critical-path memory-limit=1e6" 2>&1 >/dev/null | FileCheck %s --check-prefix=COSTONLY

// NEG: error: doppler-place: memory-limit must be a non-negative number of bytes (0: the system's capacities), got -1
// NAN: error: doppler-place: memory-limit must be a non-negative number of bytes (0: the system's capacities), got nan
// EVALS: error: doppler-place: fit-evaluations must be at least 1, got 0
// SYSTEM: error: doppler-place: unknown system preset 'no-such-system'
// COSTONLY: warning: memory-limit ignored: the ops carry no byte sizes (cost-only graph)
// COSTONLY: remark: placed 1 ops on 2 devices
func.func @cost_only() -> !doppler.value {
  %a = doppler.task "a" compute(1.0) transfer(1.0)
  return %a : !doppler.value
}
