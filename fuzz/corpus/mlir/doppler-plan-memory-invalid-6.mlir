// Cost-only graphs hold no bytes: nothing to plan; an explicit limit warns.
func.func @tasks() {
  %0 = doppler.task "input" compute(1.0) transfer(1.0) {doppler.device = #doppler.device<0>}
  %1 = doppler.task "sink" (%0) compute(1.0) transfer(1.0) {doppler.device = #doppler.device<0>}
  return
}
