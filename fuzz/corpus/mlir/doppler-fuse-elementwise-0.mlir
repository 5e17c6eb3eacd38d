// Chains longer than max-steps are cut where the next merge would exceed it.
// With one step nothing can merge: the IR is unchanged.
// Every result verifies.

// Bias add then GELU: the broadcast bias keeps its term; costs of the
// consumer are dropped (doppler-annotate-costs recomputes them).
func.func @bias_gelu(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = doppler.einsum "bh,h->bh" join(add) (%x, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = doppler.einsum "bh->bh" join(gelu) (%0) {doppler.compute_cost = 1.0 : f64, doppler.transfer_cost = 2.0 : f64}
      : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}
