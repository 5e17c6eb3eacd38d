// What --export-iree refuses: one error per op.

func.func @unplaced(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = doppler.einsum "i->i" join(exp) (%a) {doppler.device = #doppler.device<0>} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = doppler.einsum "i->i" join(neg) (%0) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = doppler.fill 1.0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}
