// Errors a user can hit with the learned policy's options.
// Without the learning library the policy says so (and the heuristics still work).

module {
  func.func @f() -> !doppler.value {
    %a = doppler.task "a" compute(1.0) transfer(1.0)
    return %a : !doppler.value
  }
}
