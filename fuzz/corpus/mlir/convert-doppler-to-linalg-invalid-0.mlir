// What convert-doppler-to-linalg cannot lower: one error per op.

// doppler.task: cost-only, opaque values.
func.func @task() -> !doppler.value {
  %0 = doppler.task "input" compute(1.0) transfer(2.0)
  return %0 : !doppler.value
}
