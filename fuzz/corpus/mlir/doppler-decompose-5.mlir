// Glue between differently partitioned ops: rows in 4 -> a 2x2 grid takes
// the left / right halves of two row blocks each; the 2x2 grid -> rows in
// 3 (3, 3, 2) assembles the pieces each block overlaps.
func.func @glue(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %y = doppler.einsum "ij->ij" join(exp) (%x) {doppler.parts = array<i64: 4, 1>} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %z = doppler.einsum "ij->ij" join(neg) (%y) {doppler.parts = array<i64: 2, 2>} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %w = doppler.einsum "ij->ji" join(tanh) (%z) {doppler.parts = array<i64: 3, 1>} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %w : tensor<8x8xf32>
}
