// RUN: doppler-opt %s --split-input-file --doppler-decompose | FileCheck %s
// With parts=1 (and with min-points above every op's size) automatic
// partitioning leaves einsums whole; explicit doppler.parts still apply.
// RUN: doppler-opt %s --split-input-file --doppler-decompose=parts=1 | FileCheck %s --check-prefix=ONE
// RUN: doppler-opt %s --split-input-file --doppler-decompose=min-points=1000000 | FileCheck %s --check-prefix=ONE
// Every result verifies and computes what the original computes.
// RUN: doppler-opt %s --split-input-file --doppler-decompose --verify-each -o /dev/null

// i split in 2: %b is read whole by both blocks, nothing is aggregated.
// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%[[A:.*]]: tensor<8x8xf32>, %[[B:.*]]: tensor<8x8xf32>)
// CHECK-NEXT: %[[A0:.*]] = doppler.slice %[[A]] [0, 0] : tensor<8x8xf32> to tensor<4x8xf32>
// CHECK-NEXT: %[[C0:.*]] = doppler.einsum "ij,jk->ik" join(mul) agg(add) (%[[A0]], %[[B]]) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[A1:.*]] = doppler.slice %[[A]] [4, 0] : tensor<8x8xf32> to tensor<4x8xf32>
// CHECK-NEXT: %[[C1:.*]] = doppler.einsum "ij,jk->ik" join(mul) agg(add) (%[[A1]], %[[B]])
// CHECK-NEXT: %[[C:.*]] = doppler.assemble [2, 1] (%[[C0]], %[[C1]]) : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<8x8xf32>
// CHECK-NEXT: return %[[C]]
// ONE-LABEL: func.func @matmul
// ONE-COUNT-2: doppler.einsum
func.func @matmul(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %c = doppler.einsum "ij,jk->ik" join(mul) agg(add) (%a, %b) {doppler.parts = array<i64: 2, 1, 1>}
      : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %c : tensor<8x8xf32>
}

// -----

// Extents need not divide: 10 in 4 parts is 3, 3, 2, 2.
// CHECK-LABEL: func.func @uneven
// CHECK: doppler.slice %{{.*}} [0] : tensor<10xf32> to tensor<3xf32>
// CHECK: doppler.slice %{{.*}} [3] : tensor<10xf32> to tensor<3xf32>
// CHECK: doppler.slice %{{.*}} [6] : tensor<10xf32> to tensor<2xf32>
// CHECK: doppler.slice %{{.*}} [8] : tensor<10xf32> to tensor<2xf32>
// CHECK: doppler.assemble [4] ({{.*}}) : tensor<3xf32>, tensor<3xf32>, tensor<2xf32>, tensor<2xf32> -> tensor<10xf32>
func.func @uneven(%x: tensor<10xf32>) -> tensor<10xf32> {
  %y = doppler.einsum "i->i" join(relu) (%x) {doppler.parts = array<i64: 4>} : (tensor<10xf32>) -> tensor<10xf32>
  return %y : tensor<10xf32>
}

// -----

// The contracted j split in 4: four partial products, added as a balanced
// tree ((p0 + p1) + (p2 + p3)); the sum is the result, no assemble needed.
// CHECK-LABEL: func.func @split_contraction
// CHECK: %[[P0:.*]] = doppler.einsum "ij,jk->ik" join(mul) agg(add) ({{.*}}) : (tensor<4x2xf32>, tensor<2x6xf32>) -> tensor<4x6xf32>
// CHECK: %[[P1:.*]] = doppler.einsum "ij,jk->ik" join(mul) agg(add)
// CHECK: %[[P2:.*]] = doppler.einsum "ij,jk->ik" join(mul) agg(add)
// CHECK: %[[P3:.*]] = doppler.einsum "ij,jk->ik" join(mul) agg(add)
// CHECK-NEXT: %[[S01:.*]] = doppler.einsum "ik,ik->ik" join(add) (%[[P0]], %[[P1]]) : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
// CHECK-NEXT: %[[S23:.*]] = doppler.einsum "ik,ik->ik" join(add) (%[[P2]], %[[P3]])
// CHECK-NEXT: %[[S:.*]] = doppler.einsum "ik,ik->ik" join(add) (%[[S01]], %[[S23]])
// CHECK-NEXT: return %[[S]]
func.func @split_contraction(%a: tensor<4x8xf32>, %b: tensor<8x6xf32>) -> tensor<4x6xf32> {
  %c = doppler.einsum "ij,jk->ik" join(mul) agg(add) (%a, %b) {doppler.parts = array<i64: 1, 4, 1>}
      : (tensor<4x8xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>
  return %c : tensor<4x6xf32>
}

// -----

// A max aggregation is combined with join(max); three partials make the
// tree (p0 max p1) max p2. Two output blocks, each with its own tree.
// CHECK-LABEL: func.func @max_tree
// CHECK-COUNT-3: doppler.einsum "ij->i" join(identity) agg(max) ({{.*}}) : (tensor<2x3xf32>) -> tensor<2xf32>
// CHECK-NEXT: %[[M01:.*]] = doppler.einsum "i,i->i" join(max)
// CHECK-NEXT: %[[R0:.*]] = doppler.einsum "i,i->i" join(max) (%[[M01]], %{{.*}})
// CHECK-COUNT-3: doppler.einsum "ij->i" join(identity) agg(max)
// CHECK-NEXT: doppler.einsum "i,i->i" join(max)
// CHECK-NEXT: %[[R1:.*]] = doppler.einsum "i,i->i" join(max)
// CHECK-NEXT: %[[R:.*]] = doppler.assemble [2] (%[[R0]], %[[R1]])
// CHECK-NEXT: return %[[R]]
func.func @max_tree(%x: tensor<4x9xf32>) -> tensor<4xf32> {
  %m = doppler.einsum "ij->i" join(identity) agg(max) (%x) {doppler.parts = array<i64: 2, 3>}
      : (tensor<4x9xf32>) -> tensor<4xf32>
  return %m : tensor<4xf32>
}

// -----

// A full reduction: the partial scalars meet in a rank-0 einsum.
// CHECK-LABEL: func.func @scalar
// CHECK: %[[P0:.*]] = doppler.einsum "ij->" join(square) agg(min) ({{.*}}) : (tensor<2x4xf32>) -> tensor<f32>
// CHECK: %[[P1:.*]] = doppler.einsum "ij->" join(square) agg(min)
// CHECK-NEXT: %[[S:.*]] = doppler.einsum ",->" join(min) (%[[P0]], %[[P1]]) : (tensor<f32>, tensor<f32>) -> tensor<f32>
// CHECK-NEXT: return %[[S]]
func.func @scalar(%x: tensor<4x4xf32>) -> tensor<f32> {
  %s = doppler.einsum "ij->" join(square) agg(min) (%x) {doppler.parts = array<i64: 2, 1>}
      : (tensor<4x4xf32>) -> tensor<f32>
  return %s : tensor<f32>
}

// -----

// Glue between differently partitioned ops: rows in 4 -> a 2x2 grid takes
// the left / right halves of two row blocks each; the 2x2 grid -> rows in
// 3 (3, 3, 2) assembles the pieces each block overlaps.
// CHECK-LABEL: func.func @glue
// CHECK-COUNT-4: doppler.einsum "ij->ij" join(exp) ({{.*}}) : (tensor<2x8xf32>) -> tensor<2x8xf32>
// CHECK: %[[L0:.*]] = doppler.slice %{{.*}} [0, 0] : tensor<2x8xf32> to tensor<2x4xf32>
// CHECK-NEXT: %[[L1:.*]] = doppler.slice %{{.*}} [0, 0] : tensor<2x8xf32> to tensor<2x4xf32>
// CHECK-NEXT: %[[TL:.*]] = doppler.assemble [2, 1] (%[[L0]], %[[L1]]) : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<4x4xf32>
// CHECK-NEXT: doppler.einsum "ij->ij" join(neg) (%[[TL]]) : (tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK-COUNT-3: doppler.einsum "ij->ij" join(neg)
// CHECK: doppler.assemble [1, 2] ({{.*}}) : tensor<3x4xf32>, tensor<3x4xf32> -> tensor<3x8xf32>
// CHECK-NEXT: doppler.einsum "ij->ji" join(tanh) ({{.*}}) : (tensor<3x8xf32>) -> tensor<8x3xf32>
// CHECK: doppler.assemble [2, 2] ({{.*}}) : tensor<1x4xf32>, tensor<1x4xf32>, tensor<2x4xf32>, tensor<2x4xf32> -> tensor<3x8xf32>
// CHECK-NEXT: doppler.einsum "ij->ji" join(tanh) ({{.*}}) : (tensor<3x8xf32>) -> tensor<8x3xf32>
// CHECK: doppler.assemble [1, 2] ({{.*}}) : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x8xf32>
// CHECK-NEXT: doppler.einsum "ij->ji" join(tanh) ({{.*}}) : (tensor<2x8xf32>) -> tensor<8x2xf32>
// CHECK-NEXT: %[[W:.*]] = doppler.assemble [1, 3] ({{.*}}) : tensor<8x3xf32>, tensor<8x3xf32>, tensor<8x2xf32> -> tensor<8x8xf32>
// CHECK-NEXT: return %[[W]]
func.func @glue(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %y = doppler.einsum "ij->ij" join(exp) (%x) {doppler.parts = array<i64: 4, 1>} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %z = doppler.einsum "ij->ij" join(neg) (%y) {doppler.parts = array<i64: 2, 2>} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %w = doppler.einsum "ij->ji" join(tanh) (%z) {doppler.parts = array<i64: 3, 1>} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %w : tensor<8x8xf32>
}

// -----

// Blocks keep the device and other attributes but not costs; a user of
// another dialect gets the assembled tensor, on the op's device.
// CHECK-LABEL: func.func @attrs
// CHECK: %[[Y0:.*]] = doppler.einsum "i->i" join(exp) (%{{.*}}) {doppler.device = #doppler.device<3>, my.tag = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK: %[[Y1:.*]] = doppler.einsum "i->i" join(exp) (%{{.*}}) {doppler.device = #doppler.device<3>, my.tag = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %[[Y:.*]] = doppler.assemble [2] (%[[Y0]], %[[Y1]]) {doppler.device = #doppler.device<3>}
// CHECK-NEXT: arith.addf %[[Y]], %[[Y]]
// CHECK-NOT: compute_cost
func.func @attrs(%x: tensor<8xf32>) -> tensor<8xf32> {
  %y = doppler.einsum "i->i" join(exp) (%x) {doppler.parts = array<i64: 2>, doppler.device = #doppler.device<3>, doppler.compute_cost = 5.0, my.tag = 1 : i64} : (tensor<8xf32>) -> tensor<8xf32>
  %z = arith.addf %y, %y : tensor<8xf32>
  return %z : tensor<8xf32>
}

// -----

// An einsum left whole keeps its costs (they still hold); its doppler.parts
// is consumed.
// CHECK-LABEL: func.func @kept_whole
// CHECK-NEXT: doppler.einsum "i->i" join(exp) (%{{.*}}) {doppler.compute_cost = 5.0{{.*}}} : (tensor<8xf32>) -> tensor<8xf32>
// CHECK-NEXT: return
func.func @kept_whole(%x: tensor<8xf32>) -> tensor<8xf32> {
  %y = doppler.einsum "i->i" join(exp) (%x) {doppler.parts = array<i64: 1>, doppler.compute_cost = 5.0} : (tensor<8xf32>) -> tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

// Consumers look through existing slices and assembles: the swapped halves
// are the producer's blocks, and the old glue is erased.
// CHECK-LABEL: func.func @look_through
// CHECK: %[[E0:.*]] = doppler.einsum "ij->ij" join(exp)
// CHECK: %[[E1:.*]] = doppler.einsum "ij->ij" join(exp)
// CHECK-NEXT: %[[N0:.*]] = doppler.einsum "ij->ij" join(neg) (%[[E1]])
// CHECK-NEXT: %[[N1:.*]] = doppler.einsum "ij->ij" join(neg) (%[[E0]])
// CHECK-NEXT: %[[N:.*]] = doppler.assemble [1, 2] (%[[N0]], %[[N1]])
// CHECK-NEXT: return %[[N]]
func.func @look_through(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = doppler.einsum "ij->ij" join(exp) (%x) {doppler.parts = array<i64: 1, 2>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %lo = doppler.slice %y [0, 0] : tensor<4x8xf32> to tensor<4x4xf32>
  %hi = doppler.slice %y [0, 4] : tensor<4x8xf32> to tensor<4x4xf32>
  %r = doppler.assemble [1, 2] (%hi, %lo) : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x8xf32>
  %z = doppler.einsum "ij->ij" join(neg) (%r) {doppler.parts = array<i64: 1, 2>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %z : tensor<4x8xf32>
}

// -----

// Automatic choice for 4 blocks of a 2x64 @ 64x64 product (elements moved):
//   b:1 i:1 o:4  replicates x 3 times                         3 * 128 = 384
//   b:1 i:4 o:1  aggregates 3 partial outputs                 3 * 128 = 384
//   b:1 i:2 o:2  replicates x once, aggregates one partial   128 + 128 = 256
//   b:2 ...      replicates w (4096 elements)
// so i and o are split in 2 each: 4 block einsums, 2 additions.
// CHECK-LABEL: func.func @auto
// CHECK: doppler.einsum "bi,io->bo" join(mul) agg(add) ({{.*}}) : (tensor<2x32xf32>, tensor<32x32xf32>) -> tensor<2x32xf32>
// CHECK: doppler.einsum "bi,io->bo"
// CHECK-NEXT: doppler.einsum "bo,bo->bo" join(add)
// CHECK: doppler.einsum "bi,io->bo"
// CHECK: doppler.einsum "bi,io->bo"
// CHECK-NEXT: doppler.einsum "bo,bo->bo" join(add)
// CHECK-NEXT: doppler.assemble [1, 2]
// ONE-LABEL: func.func @auto
// ONE-NEXT: doppler.einsum "bi,io->bo" join(mul) agg(add) (%{{.*}}, %{{.*}}) : (tensor<2x64xf32>, tensor<64x64xf32>) -> tensor<2x64xf32>
// ONE-NEXT: return
func.func @auto(%x: tensor<2x64xf32>, %w: tensor<64x64xf32>) -> tensor<2x64xf32> {
  %y = doppler.einsum "bi,io->bo" join(mul) agg(add) (%x, %w) : (tensor<2x64xf32>, tensor<64x64xf32>) -> tensor<2x64xf32>
  return %y : tensor<2x64xf32>
}

// -----

// No index is split beyond its extent: 2 elements make at most 2 blocks.
// CHECK-LABEL: func.func @tiny_extent
// CHECK-COUNT-2: doppler.einsum "i->i" join(exp) (%{{.*}}) : (tensor<1xf32>) -> tensor<1xf32>
// CHECK-NEXT: doppler.assemble [2]
func.func @tiny_extent(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = doppler.einsum "i->i" join(exp) (%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %y : tensor<2xf32>
}

// -----

// A producer's blocks are used directly where the consumer's grid matches:
// rows in 4 feed rows in 4 with no glue at all.
// CHECK-LABEL: func.func @matching
// CHECK-COUNT-4: doppler.slice
// CHECK-NOT: doppler.slice
// CHECK-NOT: doppler.assemble
// CHECK-COUNT-4: doppler.einsum "ij,i->ij" join(sub)
// CHECK-NEXT: doppler.assemble [4, 1]
func.func @matching(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %m = doppler.einsum "ij->i" join(identity) agg(max) (%x) : (tensor<8x16xf32>) -> tensor<8xf32>
  %d = doppler.einsum "ij,i->ij" join(sub) (%x, %m) : (tensor<8x16xf32>, tensor<8xf32>) -> tensor<8x16xf32>
  return %d : tensor<8x16xf32>
}

// -----

// A fused op is split like an elementwise einsum: blocks of its output
// index space (h in 2 here), each input sliced by its term, the program and
// device kept, the parts consumed.
// CHECK-LABEL: func.func @fused
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8xf32>)
// CHECK-NEXT: %[[X0:.*]] = doppler.slice %[[X]] [0, 0] : tensor<4x8xf32> to tensor<4x4xf32>
// CHECK-NEXT: %[[B0:.*]] = doppler.slice %[[B]] [0] : tensor<8xf32> to tensor<4xf32>
// CHECK-NEXT: %[[Y0:.*]] = doppler.fused "bh,h->bh" "add(in0, in1); gelu(s0)" (%[[X0]], %[[B0]]) {doppler.device = #doppler.device<1>} : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4x4xf32>
// CHECK-NEXT: %[[X1:.*]] = doppler.slice %[[X]] [0, 4]
// CHECK-NEXT: %[[B1:.*]] = doppler.slice %[[B]] [4]
// CHECK-NEXT: %[[Y1:.*]] = doppler.fused "bh,h->bh" "add(in0, in1); gelu(s0)" (%[[X1]], %[[B1]]) {doppler.device = #doppler.device<1>}
// CHECK-NEXT: %[[Y:.*]] = doppler.assemble [1, 2] (%[[Y0]], %[[Y1]]) {doppler.device = #doppler.device<1>}
// CHECK-NEXT: return %[[Y]]
func.func @fused(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %y = doppler.fused "bh,h->bh" "add(in0, in1); gelu(s0)" (%x, %b) {doppler.parts = array<i64: 1, 2>, doppler.device = #doppler.device<1>}
      : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
