// Errors of doppler-annotate-costs are about its `system` option: it is
// loaded and checked once, before any op is costed (initialize()), and a
// bad one is one error with no location in the IR.
// A malformed system file: the error names the file and the field.
// A join throughput for a join kind the dialect does not have: the error
// names the file, the field and the known kinds.

module {
  func.func @f() {
    return
  }
}
