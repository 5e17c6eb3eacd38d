func.func @task() -> !doppler.value {
  %0 = doppler.task "input" compute(1.0) transfer(2.0) {doppler.device = #doppler.device<0>}
  return %0 : !doppler.value
}
