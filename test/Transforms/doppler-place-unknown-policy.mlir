// RUN: doppler-opt %s --verify-diagnostics --doppler-place="policy=clairvoyant"

// expected-error @+1 {{doppler-place: unknown policy 'clairvoyant' (known: doppler, critical-path, join-aware, heft, round-robin, random, single, critical-path-reference)}}
module {
  func.func @f() {
    return
  }
}
