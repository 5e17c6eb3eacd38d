// Every unplaced op gets its own error, in every function.

func.func @two_unplaced(%a: tensor<4xf32>) -> tensor<4xf32> {
  %x = doppler.einsum "i->i" join(exp) (%a) : (tensor<4xf32>) -> tensor<4xf32>
  %y = doppler.einsum "i->i" join(neg) (%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
