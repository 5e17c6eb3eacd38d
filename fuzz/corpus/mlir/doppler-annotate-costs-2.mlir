// Imported cost-only ops keep their costs; ops of other dialects are costed
// as copies of their operands and results.
func.func @mixed(%x: tensor<16xf32>) -> (!doppler.value, tensor<16xf32>) {
  %t = doppler.task "input" compute(7.0) transfer(3.0)
  %s = arith.addf %x, %x : tensor<16xf32>
  return %t, %s : !doppler.value, tensor<16xf32>
}
