// Cost-only values move too.
func.func @tasks() -> !doppler.value {
  %a = doppler.task "a" compute(1.0) transfer(1.0) {doppler.device = #doppler.device<0>}
  %b = doppler.task "b" (%a) compute(1.0) transfer(1.0) {doppler.device = #doppler.device<1>}
  return %b : !doppler.value
}
