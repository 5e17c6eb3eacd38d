// A malformed system file: the error names the file and the field.
// RUN: doppler-opt %s --verify-diagnostics --doppler-annotate-costs=system=%S/Inputs/bad-system.json

// expected-error @+1 {{bad-system.json: devices[0].memory_bandwidth: expected a positive number}}
module {
  func.func @f() {
    return
  }
}
