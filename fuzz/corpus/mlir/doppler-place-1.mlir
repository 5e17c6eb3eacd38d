// Every op of a function is placed, whatever its dialect; arguments are
// not ops and return stays unplaced.
func.func @costed(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = doppler.einsum "i->i" join(exp) (%x) {doppler.compute_cost = 1.0, doppler.transfer_cost = 1.0} : (tensor<4xf32>) -> tensor<4xf32>
  %z = arith.addf %y, %x {doppler.compute_cost = 1.0, doppler.transfer_cost = 1.0} : tensor<4xf32>
  return %z : tensor<4xf32>
}
