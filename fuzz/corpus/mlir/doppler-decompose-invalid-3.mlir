// Each count fits its extent, but the product (2^31 blocks) does not fit
// the cap of 4096 blocks per einsum: refused before anything is built.
func.func @too_many_blocks(%x: tensor<65536x65536xf32>) -> tensor<65536x65536xf32> {
  %y = doppler.einsum "ij->ij" join(exp) (%x) {doppler.parts = array<i64: 32768, 65536>} : (tensor<65536x65536xf32>) -> tensor<65536x65536xf32>
  return %y : tensor<65536x65536xf32>
}
