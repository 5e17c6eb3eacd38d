func.func @unplaced(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = doppler.einsum "i->i" join(exp) (%x) {doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<4xf32>) -> tensor<4xf32>
  return %a : tensor<4xf32>
}
