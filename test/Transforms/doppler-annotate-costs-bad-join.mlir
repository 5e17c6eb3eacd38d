// A join throughput for a join kind the dialect does not have: the error
// names the file, the field and the known kinds.
// RUN: doppler-opt %s --verify-diagnostics --doppler-annotate-costs=system=%S/Inputs/bad-join-system.json

// expected-error @+1 {{bad-join-system.json: devices[0].join_throughput.expo: unknown join kind (known: identity, add, sub, mul, div}}
module {
  func.func @f() {
    return
  }
}
