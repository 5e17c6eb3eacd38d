func.func @diamond() -> !doppler.value {
  %a = doppler.task "a" compute(1.0) transfer(0.5)
  %b = doppler.task "b" (%a) compute(4.0) transfer(0.5)
  %c = doppler.task "c" (%a) compute(4.0) transfer(0.5)
  %d = doppler.task "d" (%b, %c) compute(1.0) transfer(0.5)
  return %d : !doppler.value
}
