// Every doppler op kind with tensor semantics, lowered to linalg on tensors;
// placements (doppler.device) and locations carry over.

// einsum (contraction): loops (i, k, j), the output filled with 0.
func.func @einsum_matmul(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>) -> tensor<4x2xf32> {
  %0 = doppler.einsum "ij,jk->ik" join(mul) agg(add) (%a, %b) {doppler.device = #doppler.device<1>}
      : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}
