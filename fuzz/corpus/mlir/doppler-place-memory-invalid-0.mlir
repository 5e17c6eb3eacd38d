// Bad memory options are errors before any function is touched.
// A memory limit on a cost-only graph (no tensor sizes) cannot be checked:
// a warning, and the placement goes on.

func.func @cost_only() -> !doppler.value {
  %a = doppler.task "a" compute(1.0) transfer(1.0)
  return %a : !doppler.value
}
