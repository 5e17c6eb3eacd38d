// Hand-written doppler equivalents of ../torch-forms.mlir (same names and
// arguments).

func.func @rms_norm(%x: tensor<2x16x64xf32>) -> tensor<2x16x64xf32> {
  %sq = doppler.einsum "btc->btc" join(square) (%x) : (tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
  %ss = doppler.einsum "btc->bt" join(identity) agg(add) (%sq) : (tensor<2x16x64xf32>) -> tensor<2x16xf32>
  %n = doppler.fill 64.0 : tensor<f32>
  %ms = doppler.einsum "bt,->bt" join(div) (%ss, %n) : (tensor<2x16xf32>, tensor<f32>) -> tensor<2x16xf32>
  %a = doppler.einsum "bt->bt" join(shift, 1.0e-05) (%ms) : (tensor<2x16xf32>) -> tensor<2x16xf32>
  %inv = doppler.einsum "bt->bt" join(rsqrt) (%a) : (tensor<2x16xf32>) -> tensor<2x16xf32>
  %y = doppler.einsum "btc,bt->btc" join(mul) (%x, %inv) : (tensor<2x16x64xf32>, tensor<2x16xf32>) -> tensor<2x16x64xf32>
  return %y : tensor<2x16x64xf32>
}

func.func @softmax_by_max_with_indices(%x: tensor<2x4x8xf32>, %acc: tensor<2x4x1xf32>)
    -> (tensor<2x4x8xf32>, tensor<2x4x1xf32>) {
  %m = doppler.einsum "abk->ab" join(identity) agg(max) (%x) : (tensor<2x4x8xf32>) -> tensor<2x4xf32>
  %d = doppler.einsum "abk,ab->abk" join(sub) (%x, %m) : (tensor<2x4x8xf32>, tensor<2x4xf32>) -> tensor<2x4x8xf32>
  %ex = doppler.einsum "abk->abk" join(exp) (%d) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  // sum + acc, kept as [2, 4, 1]: acc's unit dim is contracted away and
  // put back.
  %s = doppler.einsum "abk->ab" join(identity) agg(add) (%ex) : (tensor<2x4x8xf32>) -> tensor<2x4xf32>
  %acc2 = doppler.einsum "abu->ab" join(identity) agg(add) (%acc) : (tensor<2x4x1xf32>) -> tensor<2x4xf32>
  %tot = doppler.einsum "ab,ab->ab" join(add) (%s, %acc2) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %one = doppler.fill 1.0 : tensor<1xf32>
  %sum = doppler.einsum "ab,u->abu" join(mul) (%tot, %one) : (tensor<2x4xf32>, tensor<1xf32>) -> tensor<2x4x1xf32>
  %y = doppler.einsum "abk,ab->abk" join(div) (%ex, %tot) : (tensor<2x4x8xf32>, tensor<2x4xf32>) -> tensor<2x4x8xf32>
  return %y, %sum : tensor<2x4x8xf32>, tensor<2x4x1xf32>
}

func.func @through_f64(%x: tensor<2x4x8xf32>, %y: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %p = doppler.einsum "abk,abk->abk" join(mul) (%x, %y) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %r = doppler.einsum "abk->abk" join(shift, 0.5) (%p) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %r : tensor<2x4x8xf32>
}
