// RUN: doppler-opt %s --split-input-file --doppler-fuse-elementwise | FileCheck %s
// Chains longer than max-steps are cut where the next merge would exceed it.
// RUN: doppler-opt %s --split-input-file --doppler-fuse-elementwise=max-steps=2 | FileCheck %s --check-prefix=TWO
// With one step nothing can merge: the IR is unchanged.
// RUN: doppler-opt %s --split-input-file --doppler-fuse-elementwise=max-steps=1 | FileCheck %s --check-prefix=ONE
// Every result verifies.
// RUN: doppler-opt %s --split-input-file --doppler-fuse-elementwise --verify-each -o /dev/null

// Bias add then GELU: the broadcast bias keeps its term; costs of the
// consumer are dropped (doppler-annotate-costs recomputes them).
// CHECK-LABEL: func.func @bias_gelu
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8xf32>)
// CHECK-NEXT: %[[Y:.*]] = doppler.fused "bh,h->bh" "add(in0, in1); gelu(s0)" (%[[X]], %[[B]]) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: return %[[Y]]
// ONE-LABEL: func.func @bias_gelu
// ONE-NEXT: doppler.einsum "bh,h->bh" join(add)
// ONE-NEXT: doppler.einsum "bh->bh" join(gelu)
// ONE-NEXT: return
func.func @bias_gelu(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = doppler.einsum "bh,h->bh" join(add) (%x, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = doppler.einsum "bh->bh" join(gelu) (%0) {doppler.compute_cost = 1.0 : f64, doppler.transfer_cost = 2.0 : f64}
      : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

// The same chain in f64.
// CHECK-LABEL: func.func @bias_gelu_f64
// CHECK-NEXT: doppler.fused "bh,h->bh" "add(in0, in1); gelu(s0)" (%{{.*}}, %{{.*}}) : (tensor<4x8xf64>, tensor<8xf64>) -> tensor<4x8xf64>
// CHECK-NEXT: return
func.func @bias_gelu_f64(%x: tensor<4x8xf64>, %b: tensor<8xf64>) -> tensor<4x8xf64> {
  %0 = doppler.einsum "bh,h->bh" join(add) (%x, %b) : (tensor<4x8xf64>, tensor<8xf64>) -> tensor<4x8xf64>
  %1 = doppler.einsum "bh->bh" join(gelu) (%0) : (tensor<4x8xf64>) -> tensor<4x8xf64>
  return %1 : tensor<4x8xf64>
}

// -----

// Softmax: the row max and row sum are reductions and stay; x - max and
// exp fuse; exp's result is read twice (sum and divide), so the divide
// stays alone.
// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[M:.*]] = doppler.einsum "ij->i" join(identity) agg(max) (%[[X]])
// CHECK-NEXT: %[[E:.*]] = doppler.fused "ij,i->ij" "sub(in0, in1); exp(s0)" (%[[X]], %[[M]]) : (tensor<4x8xf32>, tensor<4xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[S:.*]] = doppler.einsum "ij->i" join(identity) agg(add) (%[[E]])
// CHECK-NEXT: %[[Y:.*]] = doppler.einsum "ij,i->ij" join(div) (%[[E]], %[[S]])
// CHECK-NEXT: return %[[Y]]
func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %m = doppler.einsum "ij->i" join(identity) agg(max) (%x) : (tensor<4x8xf32>) -> tensor<4xf32>
  %d = doppler.einsum "ij,i->ij" join(sub) (%x, %m) : (tensor<4x8xf32>, tensor<4xf32>) -> tensor<4x8xf32>
  %e = doppler.einsum "ij->ij" join(exp) (%d) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = doppler.einsum "ij->i" join(identity) agg(add) (%e) : (tensor<4x8xf32>) -> tensor<4xf32>
  %y = doppler.einsum "ij,i->ij" join(div) (%e, %s) : (tensor<4x8xf32>, tensor<4xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// SwiGLU's gate: silu(g) * u, the producer in the consumer's first slot.
// CHECK-LABEL: func.func @swiglu_gate
// CHECK-SAME: (%[[G:.*]]: tensor<4x16xf32>, %[[U:.*]]: tensor<4x16xf32>)
// CHECK-NEXT: %[[Y:.*]] = doppler.fused "ij,ij->ij" "silu(in0); mul(s0, in1)" (%[[G]], %[[U]])
// CHECK-NEXT: return %[[Y]]
func.func @swiglu_gate(%g: tensor<4x16xf32>, %u: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %s = doppler.einsum "ij->ij" join(silu) (%g) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = doppler.einsum "ij,ij->ij" join(mul) (%s, %u) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// The producer in the consumer's second slot: its operands take that slot.
// CHECK-LABEL: func.func @second_slot
// CHECK-SAME: (%[[U:.*]]: tensor<4x16xf32>, %[[G:.*]]: tensor<4x16xf32>)
// CHECK-NEXT: doppler.fused "ij,ij->ij" "silu(in1); mul(in0, s0)" (%[[U]], %[[G]])
func.func @second_slot(%u: tensor<4x16xf32>, %g: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %s = doppler.einsum "ij->ij" join(silu) (%g) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = doppler.einsum "ij,ij->ij" join(mul) (%u, %s) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// RMSNorm: the row-wise chain over %ms (scale, shift, rsqrt) fuses into one
// op over b; it is broadcast into x * r, which would recompute it per
// element, so it stays apart; x * r then * w fuse into one op of three
// inputs.
// CHECK-LABEL: func.func @rmsnorm
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<8xf32>)
// CHECK-NEXT: %[[SQ:.*]] = doppler.einsum "bh->b" join(square) agg(add) (%[[X]])
// CHECK-NEXT: %[[R:.*]] = doppler.fused "b->b" "scale(in0, 0.125); shift(s0, 1e-05); rsqrt(s1)" (%[[SQ]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %[[Y:.*]] = doppler.fused "bh,b,h->bh" "mul(in0, in1); mul(s0, in2)" (%[[X]], %[[R]], %[[W]]) : (tensor<4x8xf32>, tensor<4xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: return %[[Y]]
// TWO-LABEL: func.func @rmsnorm
// TWO-NEXT: doppler.einsum "bh->b"
// TWO-NEXT: doppler.fused "b->b" "scale(in0, 0.125); shift(s0, 1e-05)"
// TWO-NEXT: doppler.einsum "b->b" join(rsqrt)
// TWO-NEXT: doppler.fused "bh,b,h->bh" "mul(in0, in1); mul(s0, in2)"
func.func @rmsnorm(%x: tensor<4x8xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  %sq = doppler.einsum "bh->b" join(square) agg(add) (%x) : (tensor<4x8xf32>) -> tensor<4xf32>
  %ms = doppler.einsum "b->b" join(scale, 1.250000e-01) (%sq) : (tensor<4xf32>) -> tensor<4xf32>
  %eps = doppler.einsum "b->b" join(shift, 1.000000e-05) (%ms) : (tensor<4xf32>) -> tensor<4xf32>
  %r = doppler.einsum "b->b" join(rsqrt) (%eps) : (tensor<4xf32>) -> tensor<4xf32>
  %n = doppler.einsum "bh,b->bh" join(mul) (%x, %r) : (tensor<4x8xf32>, tensor<4xf32>) -> tensor<4x8xf32>
  %y = doppler.einsum "bh,h->bh" join(mul) (%n, %w) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// A second use of the intermediate breaks the chain.
// CHECK-LABEL: func.func @second_use
// CHECK-NEXT: %[[A:.*]] = doppler.einsum "ij->ij" join(exp)
// CHECK-NEXT: %[[B:.*]] = doppler.einsum "ij->ij" join(neg) (%[[A]])
// CHECK-NEXT: return %[[B]], %[[A]]
func.func @second_use(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %a = doppler.einsum "ij->ij" join(exp) (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %b = doppler.einsum "ij->ij" join(neg) (%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %b, %a : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Ops on different devices stay apart; on the same device they merge and
// the merged op keeps the device. One placed, one not: apart.
// CHECK-LABEL: func.func @devices
// CHECK-NEXT: %[[A:.*]] = doppler.einsum "ij->ij" join(exp) (%{{.*}}) {doppler.device = #doppler.device<0>}
// CHECK-NEXT: %[[B:.*]] = doppler.fused "ij->ij" "neg(in0); relu(s0)" (%[[A]]) {doppler.device = #doppler.device<1>}
// CHECK-NEXT: %[[C:.*]] = doppler.einsum "ij->ij" join(tanh) (%[[B]])
// CHECK-NEXT: return %[[C]]
func.func @devices(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %a = doppler.einsum "ij->ij" join(exp) (%x) {doppler.device = #doppler.device<0>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %b = doppler.einsum "ij->ij" join(neg) (%a) {doppler.device = #doppler.device<1>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %c = doppler.einsum "ij->ij" join(relu) (%b) {doppler.device = #doppler.device<1>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %d = doppler.einsum "ij->ij" join(tanh) (%c) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %d : tensor<4x8xf32>
}

// -----

// A contraction is neither a producer nor a consumer of a fused chain.
// CHECK-LABEL: func.func @contraction
// CHECK-NEXT: %[[A:.*]] = doppler.einsum "ij->ij" join(exp)
// CHECK-NEXT: %[[C:.*]] = doppler.einsum "ij,jk->ik" join(mul) agg(add) (%[[A]], %{{.*}})
// CHECK-NEXT: %[[R:.*]] = doppler.einsum "ik->ik" join(relu) (%[[C]])
// CHECK-NEXT: return %[[R]]
func.func @contraction(%x: tensor<4x8xf32>, %w: tensor<8x2xf32>) -> tensor<4x2xf32> {
  %a = doppler.einsum "ij->ij" join(exp) (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %c = doppler.einsum "ij,jk->ik" join(mul) agg(add) (%a, %w) : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  %r = doppler.einsum "ik->ik" join(relu) (%c) : (tensor<4x2xf32>) -> tensor<4x2xf32>
  return %r : tensor<4x2xf32>
}

// -----

// A chain of five: one fused op by default; with max-steps=2 cut front to
// back into 2 + 2 + 1.
// CHECK-LABEL: func.func @long_chain
// CHECK-NEXT: doppler.fused "i->i" "exp(in0); neg(s0); relu(s1); tanh(s2); sigmoid(s3)"
// CHECK-NEXT: return
// TWO-LABEL: func.func @long_chain
// TWO-NEXT: %[[P:.*]] = doppler.fused "i->i" "exp(in0); neg(s0)" (%{{.*}})
// TWO-NEXT: %[[Q:.*]] = doppler.fused "i->i" "relu(in0); tanh(s0)" (%[[P]])
// TWO-NEXT: %[[R:.*]] = doppler.einsum "i->i" join(sigmoid) (%[[Q]])
// TWO-NEXT: return %[[R]]
func.func @long_chain(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = doppler.einsum "i->i" join(exp) (%x) : (tensor<8xf32>) -> tensor<8xf32>
  %1 = doppler.einsum "i->i" join(neg) (%0) : (tensor<8xf32>) -> tensor<8xf32>
  %2 = doppler.einsum "i->i" join(relu) (%1) : (tensor<8xf32>) -> tensor<8xf32>
  %3 = doppler.einsum "i->i" join(tanh) (%2) : (tensor<8xf32>) -> tensor<8xf32>
  %4 = doppler.einsum "i->i" join(sigmoid) (%3) : (tensor<8xf32>) -> tensor<8xf32>
  return %4 : tensor<8xf32>
}

// -----

// A value both ops read with the same term is read once; read with another
// term (transposed) it is a separate operand.
// CHECK-LABEL: func.func @shared_input
// CHECK-SAME: (%[[X:.*]]: tensor<4x4xf32>, %[[Y:.*]]: tensor<4x4xf32>)
// CHECK-NEXT: %[[A:.*]] = doppler.fused "ij,ij->ij" "add(in0, in1); mul(s0, in0)" (%[[X]], %[[Y]])
// CHECK-NEXT: %[[B:.*]] = doppler.fused "ij,ji->ij" "exp(in0); add(s0, in1)" (%[[X]], %[[X]])
// CHECK-NEXT: return %[[A]], %[[B]]
func.func @shared_input(%x: tensor<4x4xf32>, %y: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %s = doppler.einsum "ij,ij->ij" join(add) (%x, %y) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a = doppler.einsum "ij,ij->ij" join(mul) (%s, %x) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %e = doppler.einsum "ij->ij" join(exp) (%x) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %b = doppler.einsum "ij,ji->ij" join(add) (%e, %x) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %a, %b : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// Indices are renamed through the consumer's view of the producer: the
// producer transposes, the consumer calls its dimensions a and b.
// CHECK-LABEL: func.func @renamed
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[C:.*]]: tensor<4xf32>)
// CHECK-NEXT: doppler.fused "ba,b->ab" "exp(in0); add(s0, in1)" (%[[X]], %[[C]]) : (tensor<4x8xf32>, tensor<4xf32>) -> tensor<8x4xf32>
func.func @renamed(%x: tensor<4x8xf32>, %c: tensor<4xf32>) -> tensor<8x4xf32> {
  %t = doppler.einsum "ij->ji" join(exp) (%x) : (tensor<4x8xf32>) -> tensor<8x4xf32>
  %y = doppler.einsum "ab,b->ab" join(add) (%t, %c) : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

// A fused op merges like an einsum, as producer and as consumer, and a lone
// einsum is never rewritten.
// CHECK-LABEL: func.func @fused_ops
// CHECK-NEXT: %[[A:.*]] = doppler.fused "ij,j->ij" "add(in0, in1); gelu(s0); scale(s1, 2)"
// CHECK-NEXT: %[[B:.*]] = doppler.einsum "ij,ij->ij" join(max) (%[[A]], %[[A]])
// CHECK-NEXT: return %[[B]]
func.func @fused_ops(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %a = doppler.fused "ij,j->ij" "add(in0, in1); gelu(s0)" (%x, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %s = doppler.einsum "ij->ij" join(scale, 2.0) (%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = doppler.einsum "ij,ij->ij" join(max) (%s, %s) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %m : tensor<4x8xf32>
}

// -----

// A reshape is not elementwise: the chains on either side fuse, not across.
// CHECK-LABEL: func.func @across_reshape
// CHECK-NEXT: %[[A:.*]] = doppler.fused "ij->ij" "relu(in0); exp(s0)"
// CHECK-NEXT: %[[R:.*]] = doppler.reshape %[[A]] : tensor<4x8xf32> -> tensor<32xf32>
// CHECK-NEXT: %[[B:.*]] = doppler.fused "i->i" "neg(in0); tanh(s0)" (%[[R]])
// CHECK-NEXT: return %[[B]]
func.func @across_reshape(%x: tensor<4x8xf32>) -> tensor<32xf32> {
  %a = doppler.einsum "ij->ij" join(relu) (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %b = doppler.einsum "ij->ij" join(exp) (%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = doppler.reshape %b : tensor<4x8xf32> -> tensor<32xf32>
  %c = doppler.einsum "i->i" join(neg) (%r) : (tensor<32xf32>) -> tensor<32xf32>
  %d = doppler.einsum "i->i" join(tanh) (%c) : (tensor<32xf32>) -> tensor<32xf32>
  return %d : tensor<32xf32>
}
