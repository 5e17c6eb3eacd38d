// With parts=1 (and with min-points above every op's size) automatic
// partitioning leaves einsums whole; explicit doppler.parts still apply.
// Every result verifies and computes what the original computes.

// i split in 2: %b is read whole by both blocks, nothing is aggregated.
func.func @matmul(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %c = doppler.einsum "ij,jk->ik" join(mul) agg(add) (%a, %b) {doppler.parts = array<i64: 2, 1, 1>}
      : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %c : tensor<8x8xf32>
}
