// Elementwise chains of the kinds doppler-fuse-elementwise merges (bias add
// then GELU, softmax, SwiGLU's gate, RMSNorm, a transposing producer, f64),
// shaped so that doppler-decompose splits them too.
func.func @chains(%x: tensor<6x10xf32>, %b: tensor<10xf32>, %u: tensor<6x10xf32>,
                  %w: tensor<10xf32>, %c: tensor<6xf32>, %d: tensor<6x10xf64>)
    -> (tensor<6x10xf32>, tensor<6x10xf32>, tensor<6x10xf32>, tensor<6x10xf32>,
        tensor<10x6xf32>, tensor<6x10xf64>) {
  // bias add, GELU
  %0 = doppler.einsum "bh,h->bh" join(add) (%x, %b) : (tensor<6x10xf32>, tensor<10xf32>) -> tensor<6x10xf32>
  %gelu = doppler.einsum "bh->bh" join(gelu) (%0) : (tensor<6x10xf32>) -> tensor<6x10xf32>
  // softmax
  %m = doppler.einsum "ij->i" join(identity) agg(max) (%x) : (tensor<6x10xf32>) -> tensor<6xf32>
  %1 = doppler.einsum "ij,i->ij" join(sub) (%x, %m) : (tensor<6x10xf32>, tensor<6xf32>) -> tensor<6x10xf32>
  %e = doppler.einsum "ij->ij" join(exp) (%1) : (tensor<6x10xf32>) -> tensor<6x10xf32>
  %s = doppler.einsum "ij->i" join(identity) agg(add) (%e) : (tensor<6x10xf32>) -> tensor<6xf32>
  %soft = doppler.einsum "ij,i->ij" join(div) (%e, %s) : (tensor<6x10xf32>, tensor<6xf32>) -> tensor<6x10xf32>
  // SwiGLU's gate
  %2 = doppler.einsum "ij->ij" join(silu) (%x) : (tensor<6x10xf32>) -> tensor<6x10xf32>
  %gate = doppler.einsum "ij,ij->ij" join(mul) (%2, %u) : (tensor<6x10xf32>, tensor<6x10xf32>) -> tensor<6x10xf32>
  // RMSNorm
  %sq = doppler.einsum "bh->b" join(square) agg(add) (%x) : (tensor<6x10xf32>) -> tensor<6xf32>
  %ms = doppler.einsum "b->b" join(scale, 1.000000e-01) (%sq) : (tensor<6xf32>) -> tensor<6xf32>
  %eps = doppler.einsum "b->b" join(shift, 1.000000e-05) (%ms) : (tensor<6xf32>) -> tensor<6xf32>
  %r = doppler.einsum "b->b" join(rsqrt) (%eps) : (tensor<6xf32>) -> tensor<6xf32>
  %3 = doppler.einsum "bh,b->bh" join(mul) (%x, %r) : (tensor<6x10xf32>, tensor<6xf32>) -> tensor<6x10xf32>
  %norm = doppler.einsum "bh,h->bh" join(mul) (%3, %w) : (tensor<6x10xf32>, tensor<10xf32>) -> tensor<6x10xf32>
  // a transposing producer, renamed by its consumer
  %t = doppler.einsum "ij->ji" join(tanh) (%u) : (tensor<6x10xf32>) -> tensor<10x6xf32>
  %tr = doppler.einsum "ab,b->ab" join(add) (%t, %c) : (tensor<10x6xf32>, tensor<6xf32>) -> tensor<10x6xf32>
  // f64, a shared input read once
  %4 = doppler.einsum "ij,ij->ij" join(sub) (%d, %d) : (tensor<6x10xf64>, tensor<6x10xf64>) -> tensor<6x10xf64>
  %5 = doppler.einsum "ij->ij" join(sigmoid) (%d) : (tensor<6x10xf64>) -> tensor<6x10xf64>
  %6 = doppler.einsum "ij,ij->ij" join(add) (%5, %d) : (tensor<6x10xf64>, tensor<6x10xf64>) -> tensor<6x10xf64>
  %f64 = doppler.einsum "ij,ij->ij" join(max) (%4, %6) : (tensor<6x10xf64>, tensor<6x10xf64>) -> tensor<6x10xf64>
  return %gelu, %soft, %gate, %norm, %tr, %f64
      : tensor<6x10xf32>, tensor<6x10xf32>, tensor<6x10xf32>, tensor<6x10xf32>,
        tensor<10x6xf32>, tensor<6x10xf64>
}
