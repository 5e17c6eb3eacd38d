// Two ready ops on one device run one after the other, in readiness order.
func.func @one_device() {
  %a = doppler.task "a" compute(2.0) transfer(10.0) {doppler.device = #doppler.device<0>}
  %b = doppler.task "b" compute(3.0) transfer(10.0) {doppler.device = #doppler.device<0>}
  return
}
