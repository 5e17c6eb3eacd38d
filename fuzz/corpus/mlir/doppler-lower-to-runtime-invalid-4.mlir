func.func @g() -> !doppler.value {
  %0 = doppler.task "input" compute(100.0) transfer(50.0) {doppler.device = #doppler.device<0>}
  return %0 : !doppler.value
}
