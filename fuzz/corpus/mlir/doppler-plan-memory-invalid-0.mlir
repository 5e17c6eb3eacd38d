// Bad options are errors before any function is touched, with no location.
// Errors about the IR are at the function or the op, one per function:


// A limit below what one op needs at once: 16384 bytes, 4096 of them for
// the argument, leave 12288, and the add needs its two inputs and its
// output (3 x 8192 bytes) at once.
func.func @too_big(%x: tensor<32x64xf32>) -> tensor<32x64xf32> {
  %a = doppler.einsum "ij->ij" join(exp) (%x) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x64xf32>) -> tensor<32x64xf32>
  %b = doppler.einsum "ij,ij->ij" join(add) (%a, %x) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x64xf32>, tensor<32x64xf32>) -> tensor<32x64xf32>
  return %b : tensor<32x64xf32>
}
