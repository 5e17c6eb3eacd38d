// Bad options are errors before any function is touched (the pass checks
// them once, in initialize()), with no location: they are not about the IR.
// Errors about the IR are on the op, one per function:

module {
  func.func @f() {
    return
  }
}
