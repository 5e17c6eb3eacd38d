// Errors a user can hit with the learned policy's options.
// REQUIRES: learning
// RUN: not doppler-opt %s --doppler-place="policy=critical-path samples=4" 2>&1 | FileCheck %s --check-prefix=ONLY
// RUN: not doppler-opt %s --doppler-place="policy=heft model=x.pt" 2>&1 | FileCheck %s --check-prefix=ONLY
// RUN: not doppler-opt %s --doppler-place="samples=-2" 2>&1 | FileCheck %s --check-prefix=NEG
// RUN: not doppler-opt %s --doppler-place="model=%t.missing.pt" 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: echo "not a model" > %t.bad.pt
// RUN: not doppler-opt %s --doppler-place="model=%t.bad.pt" 2>&1 | FileCheck %s --check-prefix=BAD
// Without the learning library the policy says so (and the heuristics still work).
// RUN: env DOPPLER_LEARNING_LIBRARY=%t.nonexistent.so not doppler-opt %s --doppler-place 2>&1 | FileCheck %s --check-prefix=UNAVAILABLE
// RUN: env DOPPLER_LEARNING_LIBRARY=%t.nonexistent.so doppler-opt %s --doppler-place="policy=critical-path" -o /dev/null

module {
  func.func @f() -> !doppler.value {
    %a = doppler.task "a" compute(1.0) transfer(1.0)
    return %a : !doppler.value
  }
}
// ONLY: error: doppler-place: samples and model apply to policy doppler only
// NEG: error: doppler-place: samples must not be negative, got -2
// MISSING: error: 'func.func' op cannot be placed: {{.*}}missing.pt
// BAD: error: 'func.func' op cannot be placed: '{{.*}}bad.pt' is not a readable model file
// UNAVAILABLE: error: 'func.func' op cannot be placed: learned policy unavailable: cannot load libDopplerLearning.so
