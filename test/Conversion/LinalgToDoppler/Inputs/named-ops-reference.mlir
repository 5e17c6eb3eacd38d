// Hand-written doppler equivalents of the functions of
// ../numeric-named-ops.mlir (same names, same arguments): what each linalg
// op computes, written directly as einsums, fills and joins.

func.func @contractions(%a: tensor<6x5xf32>, %b: tensor<5x7xf32>, %c: tensor<6x7xf32>,
                        %at: tensor<5x6xf32>, %bt: tensor<7x5xf32>, %x: tensor<5xf32>,
                        %y: tensor<6xf32>)
    -> (tensor<6x7xf32>, tensor<6x7xf32>, tensor<6x7xf32>, tensor<6x7xf32>,
        tensor<6xf32>, tensor<5xf32>, tensor<f32>) {
  %0 = doppler.einsum "mk,kn->mn" join(mul) agg(add) (%a, %b) : (tensor<6x5xf32>, tensor<5x7xf32>) -> tensor<6x7xf32>
  %1 = doppler.einsum "mn,mn->mn" join(add) (%c, %0) : (tensor<6x7xf32>, tensor<6x7xf32>) -> tensor<6x7xf32>
  // A^T: transpose first, then a plain matmul.
  %a2 = doppler.einsum "km->mk" join(identity) (%at) : (tensor<5x6xf32>) -> tensor<6x5xf32>
  %2 = doppler.einsum "mk,kn->mn" join(mul) agg(add) (%a2, %b) : (tensor<6x5xf32>, tensor<5x7xf32>) -> tensor<6x7xf32>
  %b3 = doppler.einsum "nk->kn" join(identity) (%bt) : (tensor<7x5xf32>) -> tensor<5x7xf32>
  %p3 = doppler.einsum "mk,kn->mn" join(mul) agg(add) (%a, %b3) : (tensor<6x5xf32>, tensor<5x7xf32>) -> tensor<6x7xf32>
  %3 = doppler.einsum "mn,mn->mn" join(add) (%p3, %c) : (tensor<6x7xf32>, tensor<6x7xf32>) -> tensor<6x7xf32>
  %4 = doppler.einsum "mk,k->m" join(mul) agg(add) (%a, %x) : (tensor<6x5xf32>, tensor<5xf32>) -> tensor<6xf32>
  %5 = doppler.einsum "m,mk->k" join(mul) agg(add) (%y, %a) : (tensor<6xf32>, tensor<6x5xf32>) -> tensor<5xf32>
  %sq = doppler.einsum "k->k" join(square) (%x) : (tensor<5xf32>) -> tensor<5xf32>
  %6 = doppler.einsum "k->" join(identity) agg(add) (%sq) : (tensor<5xf32>) -> tensor<f32>
  return %0, %1, %2, %3, %4, %5, %6
      : tensor<6x7xf32>, tensor<6x7xf32>, tensor<6x7xf32>, tensor<6x7xf32>,
        tensor<6xf32>, tensor<5xf32>, tensor<f32>
}

func.func @batched(%a: tensor<3x4x5xf32>, %b: tensor<3x5x6xf32>, %bt: tensor<3x6x5xf32>)
    -> (tensor<3x4x6xf32>, tensor<3x4x6xf32>, tensor<4x6xf32>) {
  %0 = doppler.einsum "bmk,bkn->bmn" join(mul) agg(add) (%a, %b) : (tensor<3x4x5xf32>, tensor<3x5x6xf32>) -> tensor<3x4x6xf32>
  %1 = doppler.einsum "bmk,bnk->bmn" join(mul) agg(add) (%a, %bt) : (tensor<3x4x5xf32>, tensor<3x6x5xf32>) -> tensor<3x4x6xf32>
  %2 = doppler.einsum "bmn->mn" join(identity) agg(add) (%0) : (tensor<3x4x6xf32>) -> tensor<4x6xf32>
  return %0, %1, %2 : tensor<3x4x6xf32>, tensor<3x4x6xf32>, tensor<4x6xf32>
}

func.func @reductions(%x: tensor<6x8xf32>, %acc: tensor<6xf32>)
    -> (tensor<6xf32>, tensor<8xf32>, tensor<6xf32>, tensor<8xf32>) {
  %s = doppler.einsum "ij->i" join(identity) agg(add) (%x) : (tensor<6x8xf32>) -> tensor<6xf32>
  %0 = doppler.einsum "i,i->i" join(add) (%acc, %s) : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
  %1 = doppler.einsum "ij->j" join(identity) agg(max) (%x) : (tensor<6x8xf32>) -> tensor<8xf32>
  %2 = doppler.einsum "ij->i" join(identity) agg(mul) (%x) : (tensor<6x8xf32>) -> tensor<6xf32>
  %half = doppler.fill 0.5 : tensor<6x8xf32>
  %m = doppler.einsum "ij,ij->ij" join(min) (%x, %half) : (tensor<6x8xf32>, tensor<6x8xf32>) -> tensor<6x8xf32>
  %3 = doppler.einsum "ij->j" join(identity) agg(min) (%m) : (tensor<6x8xf32>) -> tensor<8xf32>
  return %0, %1, %2, %3 : tensor<6xf32>, tensor<8xf32>, tensor<6xf32>, tensor<8xf32>
}

func.func @elementwise(%x: tensor<6x8xf32>, %y: tensor<6x8xf32>, %yt: tensor<8x6xf32>)
    -> (tensor<6x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>) {
  // ((x + y - y) * y) is x * y up to rounding; max/min/abs of it.
  %0 = doppler.einsum "ij,ij->ij" join(add) (%x, %y) : (tensor<6x8xf32>, tensor<6x8xf32>) -> tensor<6x8xf32>
  %1 = doppler.einsum "ij,ij->ij" join(sub) (%0, %y) : (tensor<6x8xf32>, tensor<6x8xf32>) -> tensor<6x8xf32>
  %2 = doppler.einsum "ij,ij->ij" join(mul) (%1, %y) : (tensor<6x8xf32>, tensor<6x8xf32>) -> tensor<6x8xf32>
  %3 = doppler.einsum "ij,ij->ij" join(max) (%2, %x) : (tensor<6x8xf32>, tensor<6x8xf32>) -> tensor<6x8xf32>
  %4 = doppler.einsum "ij,ij->ij" join(min) (%3, %y) : (tensor<6x8xf32>, tensor<6x8xf32>) -> tensor<6x8xf32>
  %5 = doppler.einsum "ij->ij" join(abs) (%4) : (tensor<6x8xf32>) -> tensor<6x8xf32>
  %6 = doppler.einsum "ij->ij" join(exp) (%5) : (tensor<6x8xf32>) -> tensor<6x8xf32>
  // log(exp(t)) / rsqrt(sqrt(exp(t))) = t * exp(t / 4)
  %7 = doppler.einsum "ij->ij" join(log) (%6) : (tensor<6x8xf32>) -> tensor<6x8xf32>
  %q = doppler.einsum "ij->ij" join(scale, 0.25) (%5) : (tensor<6x8xf32>) -> tensor<6x8xf32>
  %eq = doppler.einsum "ij->ij" join(exp) (%q) : (tensor<6x8xf32>) -> tensor<6x8xf32>
  %10 = doppler.einsum "ij,ij->ij" join(mul) (%7, %eq) : (tensor<6x8xf32>, tensor<6x8xf32>) -> tensor<6x8xf32>
  // -tanh(exp(t) ** x)
  %11 = doppler.einsum "ij,ij->ij" join(pow) (%6, %x) : (tensor<6x8xf32>, tensor<6x8xf32>) -> tensor<6x8xf32>
  %12 = doppler.einsum "ij->ij" join(tanh) (%11) : (tensor<6x8xf32>) -> tensor<6x8xf32>
  %13 = doppler.einsum "ij->ij" join(scale, -1.0) (%12) : (tensor<6x8xf32>) -> tensor<6x8xf32>
  // exp((1 / exp(t))^2 * yt^T) = exp(exp(-2t) * yt^T)
  %m2 = doppler.einsum "ij->ij" join(scale, -2.0) (%5) : (tensor<6x8xf32>) -> tensor<6x8xf32>
  %e2 = doppler.einsum "ij->ij" join(exp) (%m2) : (tensor<6x8xf32>) -> tensor<6x8xf32>
  %16 = doppler.einsum "ij,ji->ij" join(mul) (%e2, %yt) : (tensor<6x8xf32>, tensor<8x6xf32>) -> tensor<6x8xf32>
  %17 = doppler.einsum "ij->ij" join(exp) (%16) : (tensor<6x8xf32>) -> tensor<6x8xf32>
  return %10, %13, %17 : tensor<6x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>
}

func.func @movement(%x: tensor<4x6x8xf32>, %v: tensor<6xf32>)
    -> (tensor<8x4x6xf32>, tensor<4x6x8xf32>, tensor<4x6x8xf32>) {
  %0 = doppler.einsum "abc->cab" join(identity) (%x) : (tensor<4x6x8xf32>) -> tensor<8x4x6xf32>
  %ones = doppler.fill 1.0 : tensor<4x8xf32>
  %1 = doppler.einsum "b,ac->abc" join(mul) (%v, %ones) : (tensor<6xf32>, tensor<4x8xf32>) -> tensor<4x6x8xf32>
  %p = doppler.einsum "abc,b->abc" join(mul) (%x, %v) : (tensor<4x6x8xf32>, tensor<6xf32>) -> tensor<4x6x8xf32>
  %3 = doppler.einsum "abc->abc" join(shift, -1.5) (%p) : (tensor<4x6x8xf32>) -> tensor<4x6x8xf32>
  return %0, %1, %3 : tensor<8x4x6xf32>, tensor<4x6x8xf32>, tensor<4x6x8xf32>
}

func.func @softmax(%x: tensor<2x6x8xf32>) -> (tensor<2x6x8xf32>, tensor<2x6x8xf32>) {
  // Without the max subtraction (inputs are small): exp(x) / sum exp(x).
  %e = doppler.einsum "abc->abc" join(exp) (%x) : (tensor<2x6x8xf32>) -> tensor<2x6x8xf32>
  %s0 = doppler.einsum "abc->ab" join(identity) agg(add) (%e) : (tensor<2x6x8xf32>) -> tensor<2x6xf32>
  %0 = doppler.einsum "abc,ab->abc" join(div) (%e, %s0) : (tensor<2x6x8xf32>, tensor<2x6xf32>) -> tensor<2x6x8xf32>
  %s1 = doppler.einsum "abc->ac" join(identity) agg(add) (%e) : (tensor<2x6x8xf32>) -> tensor<2x8xf32>
  %1 = doppler.einsum "abc,ac->abc" join(div) (%e, %s1) : (tensor<2x6x8xf32>, tensor<2x8xf32>) -> tensor<2x6x8xf32>
  return %0, %1 : tensor<2x6x8xf32>, tensor<2x6x8xf32>
}

func.func @bodies(%x: tensor<6x8xf32>, %bias: tensor<8xf32>)
    -> (tensor<6x8xf32>, tensor<6x8xf32>, tensor<6xf32>) {
  %y = doppler.einsum "ij,j->ij" join(add) (%x, %bias) : (tensor<6x8xf32>, tensor<8xf32>) -> tensor<6x8xf32>
  %silu = doppler.einsum "ij->ij" join(silu) (%y) : (tensor<6x8xf32>) -> tensor<6x8xf32>
  %sig = doppler.einsum "ij->ij" join(sigmoid) (%x) : (tensor<6x8xf32>) -> tensor<6x8xf32>
  %0 = doppler.einsum "ij,ij->ij" join(mul) (%silu, %sig) : (tensor<6x8xf32>, tensor<6x8xf32>) -> tensor<6x8xf32>
  %relu = doppler.einsum "ij->ij" join(relu) (%x) : (tensor<6x8xf32>) -> tensor<6x8xf32>
  %gelu = doppler.einsum "ij->ij" join(gelu) (%x) : (tensor<6x8xf32>) -> tensor<6x8xf32>
  %1 = doppler.einsum "ij,ij->ij" join(sub) (%relu, %gelu) : (tensor<6x8xf32>, tensor<6x8xf32>) -> tensor<6x8xf32>
  %s = doppler.einsum "ij->i" join(identity) agg(add) (%x) : (tensor<6x8xf32>) -> tensor<6xf32>
  %2 = doppler.einsum "i->i" join(scale, 8.0) (%s) : (tensor<6xf32>) -> tensor<6xf32>
  return %0, %1, %2 : tensor<6x8xf32>, tensor<6x8xf32>, tensor<6xf32>
}
