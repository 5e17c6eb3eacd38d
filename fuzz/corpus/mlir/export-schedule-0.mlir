// Four ops on three devices; %a moves to devices 1 and 2 (a copy lane each).
func.func @graph() -> (!doppler.value, !doppler.value, !doppler.value) {
  %a = doppler.task "a" compute(2.0) transfer(10.0) {doppler.device = #doppler.device<0>}
  %b = doppler.task "b" (%a) compute(3.0) transfer(1.0) {doppler.device = #doppler.device<1>}
  %c = doppler.task "c" (%a) compute(4.0) transfer(1.0) {doppler.device = #doppler.device<0>}
  %d = doppler.task "d" (%a) compute(1.0) transfer(1.0) {doppler.device = #doppler.device<2>}
  return %b, %c, %d : !doppler.value, !doppler.value, !doppler.value
}
