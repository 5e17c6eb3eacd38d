// Bad options are reported once, on the module, and change nothing.
// The bounds themselves are accepted.

func.func @chain(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = doppler.einsum "i->i" join(exp) (%x) : (tensor<8xf32>) -> tensor<8xf32>
  %1 = doppler.einsum "i->i" join(neg) (%0) : (tensor<8xf32>) -> tensor<8xf32>
  return %1 : tensor<8xf32>
}
