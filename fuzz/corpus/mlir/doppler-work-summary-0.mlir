// With split input, each chunk rewrites the file: the last one remains.

// 2 * 64 * 128 * 32 = 524288
// (64*128 + 128*32) * 4 bytes read, 64*32*4 written.
func.func @matmul(%a: tensor<64x128xf32>, %b: tensor<128x32xf32>) -> tensor<64x32xf32> {
  %c = doppler.einsum "ij,jk->ik" join(mul) agg(add) (%a, %b) : (tensor<64x128xf32>, tensor<128x32xf32>) -> tensor<64x32xf32>
  return %c : tensor<64x32xf32>
}
