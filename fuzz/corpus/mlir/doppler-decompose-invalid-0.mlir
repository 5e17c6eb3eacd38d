// Bad options are reported once, on the module, and change nothing.

func.func @too_few_parts(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %c = doppler.einsum "ij,jk->ik" join(mul) agg(add) (%a, %b) {doppler.parts = array<i64: 2, 2>}
      : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %c : tensor<8x8xf32>
}
