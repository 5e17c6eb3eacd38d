// The learned policy (policy=doppler, the pass's default) in the pass.
// Sampling is deterministic for a seed.
// A model file given explicitly: the committed default is the embedded one.

// Every op gets a device in range.
func.func @two_chains() -> (!doppler.value, !doppler.value) {
  %a = doppler.task "a" compute(2.0) transfer(100.0)
  %b = doppler.task "b" compute(2.0) transfer(100.0)
  %a2 = doppler.task "a2" (%a) compute(3.0) transfer(100.0)
  %b2 = doppler.task "b2" (%b) compute(3.0) transfer(100.0)
  return %a2, %b2 : !doppler.value, !doppler.value
}
