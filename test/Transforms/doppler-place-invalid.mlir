// RUN: doppler-opt %s --split-input-file --verify-diagnostics --doppler-place="devices=0"
// RUN: not doppler-opt %s --doppler-place="policy=clairvoyant" 2>&1 | FileCheck %s --check-prefix=POLICY
// RUN: not doppler-opt %s --doppler-place="devices=-3" 2>&1 | FileCheck %s --check-prefix=NEG

// expected-error @+1 {{doppler-place: devices must be at least 1, got 0}}
module {
  func.func @f() {
    return
  }
}
// POLICY: error: doppler-place: unknown policy 'clairvoyant' (known: doppler, critical-path,
// NEG: error: doppler-place: devices must be at least 1, got -3
