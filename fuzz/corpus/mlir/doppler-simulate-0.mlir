// a (2) on device 0 feeds b (3) on device 1 (transfer 10) and c (4) on
// device 0. b starts at 2 + 10 = 12 and ends at 15; c runs 2..6.
// After transfer insertion the schedule is the same; the transfer runs
// from a's end to b's start.
func.func @cross_device() -> (!doppler.value, !doppler.value) {
  %a = doppler.task "a" compute(2.0) transfer(10.0) {doppler.device = #doppler.device<0>}
  %b = doppler.task "b" (%a) compute(3.0) transfer(1.0) {doppler.device = #doppler.device<1>}
  %c = doppler.task "c" (%a) compute(4.0) transfer(1.0) {doppler.device = #doppler.device<0>}
  return %b, %c : !doppler.value, !doppler.value
}
