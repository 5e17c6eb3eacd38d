// The same chain in f64.
func.func @bias_gelu_f64(%x: tensor<4x8xf64>, %b: tensor<8xf64>) -> tensor<4x8xf64> {
  %0 = doppler.einsum "bh,h->bh" join(add) (%x, %b) : (tensor<4x8xf64>, tensor<8xf64>) -> tensor<4x8xf64>
  %1 = doppler.einsum "bh->bh" join(gelu) (%0) : (tensor<4x8xf64>) -> tensor<4x8xf64>
  return %1 : tensor<4x8xf64>
}
