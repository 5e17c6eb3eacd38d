// doppler-decompose splits reshapes block by block (or keeps them whole on
// the gathered input) without changing what a function computes: explicit
// doppler.parts for each case of the rule, and the automatic choice at
// several block counts on a multi-head attention written with reshapes.
// RUN: doppler-opt %s --doppler-decompose > %t.mlir
// RUN: doppler-interpret %t.mlir --compare %s --function cases | FileCheck %s
// RUN: doppler-interpret %t.mlir --compare %s --function attention | FileCheck %s
// RUN: sed -e 's/ {doppler.parts = array<i64: [0-9, ]*>}//' %s > %t.auto.mlir
// RUN: doppler-opt %t.auto.mlir --doppler-decompose=parts=2 > %t.2.mlir
// RUN: doppler-interpret %t.2.mlir --compare %s --function attention | FileCheck %s
// RUN: doppler-opt %t.auto.mlir --doppler-decompose=parts=3 > %t.3.mlir
// RUN: doppler-interpret %t.3.mlir --compare %s --function attention | FileCheck %s
// RUN: doppler-opt %t.auto.mlir --doppler-decompose=parts=8 > %t.8.mlir
// RUN: doppler-interpret %t.8.mlir --compare %s --function attention | FileCheck %s
// RUN: doppler-interpret %t.8.mlir --compare %s --function cases | FileCheck %s
// A reshape of a slice of a decomposed value (a fused q/k/v projection split
// into heads): the block reshapes read slices made for them, which must
// come first (the pass once built them after their reader).
// RUN: doppler-interpret %t.mlir --compare %s --function slice_then_reshape | FileCheck %s
// CHECK: max rel-error {{.*}} <= tolerance 1e-05: ok

func.func @cases(%x: tensor<4x8x32xf32>, %u: tensor<4x1x8xf32>)
    -> (tensor<4x8x4x8xf32>, tensor<4x8x4x8xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<4x8xf32>, tensor<4x8x4x8xf32>) {
  %b = doppler.einsum "btc->btc" join(relu) (%x) {doppler.parts = array<i64: 2, 1, 1>}
      : (tensor<4x8x32xf32>) -> tensor<4x8x32xf32>
  %hb = doppler.reshape %b : tensor<4x8x32xf32> -> tensor<4x8x4x8xf32>
  %c = doppler.einsum "btc->btc" join(tanh) (%x) {doppler.parts = array<i64: 1, 1, 4>}
      : (tensor<4x8x32xf32>) -> tensor<4x8x32xf32>
  %hc = doppler.reshape %c : tensor<4x8x32xf32> -> tensor<4x8x4x8xf32>
  %d = doppler.einsum "btc->btc" join(exp) (%x) {doppler.parts = array<i64: 2, 1, 2>}
      : (tensor<4x8x32xf32>) -> tensor<4x8x32xf32>
  %fd = doppler.reshape %d : tensor<4x8x32xf32> -> tensor<32x32xf32>
  %s = doppler.einsum "btc->btc" join(sigmoid) (%x) {doppler.parts = array<i64: 1, 2, 1>}
      : (tensor<4x8x32xf32>) -> tensor<4x8x32xf32>
  %fs = doppler.reshape %s : tensor<4x8x32xf32> -> tensor<32x32xf32>
  %es = doppler.einsum "ij->ij" join(square) (%fs) {doppler.parts = array<i64: 2, 1>}
      : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %v = doppler.einsum "iuj->iuj" join(neg) (%u) {doppler.parts = array<i64: 1, 1, 2>}
      : (tensor<4x1x8xf32>) -> tensor<4x1x8xf32>
  %fv = doppler.reshape %v : tensor<4x1x8xf32> -> tensor<4x8xf32>
  %w = doppler.einsum "btc->btc" join(relu) (%x) {doppler.parts = array<i64: 1, 1, 3>}
      : (tensor<4x8x32xf32>) -> tensor<4x8x32xf32>
  %hw = doppler.reshape %w : tensor<4x8x32xf32> -> tensor<4x8x4x8xf32>
  return %hb, %hc, %fd, %es, %fv, %hw
      : tensor<4x8x4x8xf32>, tensor<4x8x4x8xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<4x8xf32>, tensor<4x8x4x8xf32>
}

// Multi-head self-attention over [B, T, C] = [2, 8, 32], 4 heads of 8,
// with view(B, T, H, E) and its inverse as reshapes.
func.func @attention(%x: tensor<2x8x32xf32>, %wq: tensor<32x32xf32>, %wk: tensor<32x32xf32>,
                     %wv: tensor<32x32xf32>, %wo: tensor<32x32xf32>) -> tensor<2x8x32xf32> {
  %q = doppler.einsum "btc,cd->btd" join(mul) agg(add) (%x, %wq) {doppler.parts = array<i64: 2, 1, 1, 2>}
      : (tensor<2x8x32xf32>, tensor<32x32xf32>) -> tensor<2x8x32xf32>
  %k = doppler.einsum "btc,cd->btd" join(mul) agg(add) (%x, %wk) {doppler.parts = array<i64: 1, 1, 1, 4>}
      : (tensor<2x8x32xf32>, tensor<32x32xf32>) -> tensor<2x8x32xf32>
  %v = doppler.einsum "btc,cd->btd" join(mul) agg(add) (%x, %wv) {doppler.parts = array<i64: 1, 2, 1, 1>}
      : (tensor<2x8x32xf32>, tensor<32x32xf32>) -> tensor<2x8x32xf32>
  %qh = doppler.reshape %q : tensor<2x8x32xf32> -> tensor<2x8x4x8xf32>
  %kh = doppler.reshape %k : tensor<2x8x32xf32> -> tensor<2x8x4x8xf32>
  %vh = doppler.reshape %v : tensor<2x8x32xf32> -> tensor<2x8x4x8xf32>
  %s = doppler.einsum "bqhe,bkhe->bhqk" join(mul) agg(add) (%qh, %kh) {doppler.parts = array<i64: 2, 1, 2, 1, 1>}
      : (tensor<2x8x4x8xf32>, tensor<2x8x4x8xf32>) -> tensor<2x4x8x8xf32>
  %m = doppler.einsum "bhqk->bhq" join(identity) agg(max) (%s)
      : (tensor<2x4x8x8xf32>) -> tensor<2x4x8xf32>
  %d = doppler.einsum "bhqk,bhq->bhqk" join(sub) (%s, %m)
      : (tensor<2x4x8x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8x8xf32>
  %e = doppler.einsum "bhqk->bhqk" join(exp) (%d) : (tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %z = doppler.einsum "bhqk->bhq" join(identity) agg(add) (%e)
      : (tensor<2x4x8x8xf32>) -> tensor<2x4x8xf32>
  %p = doppler.einsum "bhqk,bhq->bhqk" join(div) (%e, %z)
      : (tensor<2x4x8x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8x8xf32>
  %o = doppler.einsum "bhqk,bkhe->bqhe" join(mul) agg(add) (%p, %vh)
      : (tensor<2x4x8x8xf32>, tensor<2x8x4x8xf32>) -> tensor<2x8x4x8xf32>
  %of = doppler.reshape %o : tensor<2x8x4x8xf32> -> tensor<2x8x32xf32>
  %y = doppler.einsum "btc,cd->btd" join(mul) agg(add) (%of, %wo)
      : (tensor<2x8x32xf32>, tensor<32x32xf32>) -> tensor<2x8x32xf32>
  return %y : tensor<2x8x32xf32>
}

func.func @slice_then_reshape(%x: tensor<2x16x192xf32>) -> tensor<2x16x4x16xf32> {
  %y = doppler.einsum "abc->abc" join(relu) (%x) {doppler.parts = array<i64: 2, 1, 1>}
      : (tensor<2x16x192xf32>) -> tensor<2x16x192xf32>
  %s = doppler.slice %y [0, 0, 64] : tensor<2x16x192xf32> to tensor<2x16x64xf32>
  %r = doppler.reshape %s : tensor<2x16x64xf32> -> tensor<2x16x4x16xf32>
  return %r : tensor<2x16x4x16xf32>
}
