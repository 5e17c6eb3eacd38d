// --export-iree moves every operand that lives elsewhere, not only
// doppler.transfer results: an argument read on two devices, a value used
// across devices without a transfer, and a placed op of another dialect.
// A device kind that is not a name is refused.

func.func @cross(%x: tensor<8xf32>) -> tensor<4xf32> {
  %0 = doppler.einsum "i->i" join(exp) (%x) {doppler.device = #doppler.device<1>} : (tensor<8xf32>) -> tensor<8xf32>
  %1 = doppler.einsum "i,i->i" join(add) (%x, %0) {doppler.device = #doppler.device<0>} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %2 = doppler.slice %1 [0] {doppler.device = #doppler.device<2>} : tensor<8xf32> to tensor<4xf32>
  %3 = doppler.slice %1 [4] {doppler.device = #doppler.device<2>} : tensor<8xf32> to tensor<4xf32>
  %4 = linalg.add {doppler.device = #doppler.device<2>} ins(%2, %3 : tensor<4xf32>, tensor<4xf32>) outs(%2 : tensor<4xf32>) -> tensor<4xf32>
  return %4 : tensor<4xf32>
}

// The second slice reuses the transfer made for the first.
// linalg.add is generalised (iree-compile rejects it).
