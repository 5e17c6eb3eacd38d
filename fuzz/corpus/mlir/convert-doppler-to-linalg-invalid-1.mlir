// doppler.transfer of an opaque !doppler.value.
func.func @transfer_opaque(%x: !doppler.value) -> !doppler.value {
  %0 = doppler.transfer %x from <0> to <1> : !doppler.value
  return %0 : !doppler.value
}
