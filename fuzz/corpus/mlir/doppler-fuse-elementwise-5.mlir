// RMSNorm: the row-wise chain over %ms (scale, shift, rsqrt) fuses into one
// op over b; it is broadcast into x * r, which would recompute it per
// element, so it stays apart; x * r then * w fuse into one op of three
// inputs.
func.func @rmsnorm(%x: tensor<4x8xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  %sq = doppler.einsum "bh->b" join(square) agg(add) (%x) : (tensor<4x8xf32>) -> tensor<4xf32>
  %ms = doppler.einsum "b->b" join(scale, 1.250000e-01) (%sq) : (tensor<4xf32>) -> tensor<4xf32>
  %eps = doppler.einsum "b->b" join(shift, 1.000000e-05) (%ms) : (tensor<4xf32>) -> tensor<4xf32>
  %r = doppler.einsum "b->b" join(rsqrt) (%eps) : (tensor<4xf32>) -> tensor<4xf32>
  %n = doppler.einsum "bh,b->bh" join(mul) (%x, %r) : (tensor<4x8xf32>, tensor<4xf32>) -> tensor<4x8xf32>
  %y = doppler.einsum "bh,h->bh" join(mul) (%n, %w) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
