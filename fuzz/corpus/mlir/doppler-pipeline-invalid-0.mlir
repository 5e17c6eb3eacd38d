// The pipeline's options reach its passes, which check them once before
// any function is touched: one error each, no location in the IR.
// Device counts are capped at the 4096 the doppler-place tool allows
// (Doppler/Support/Limits.h), before anything is allocated per device.
// More devices than the system description has: placed, with a warning.

func.func @f(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = doppler.einsum "ij,jk->ik" join(mul) agg(add) (%a, %a) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
