// Randomised policies and refinement are deterministic for a seed.

// Two independent chains of two tasks: critical path puts one chain per
// device (est ties go to the lowest id), so the makespan is 2 + 3 = 5, the
// lower bound max(5, 10/2).
func.func @two_chains() -> (!doppler.value, !doppler.value) {
  %a = doppler.task "a" compute(2.0) transfer(100.0)
  %b = doppler.task "b" compute(2.0) transfer(100.0)
  %a2 = doppler.task "a2" (%a) compute(3.0) transfer(100.0)
  %b2 = doppler.task "b2" (%b) compute(3.0) transfer(100.0)
  return %a2, %b2 : !doppler.value, !doppler.value
}
