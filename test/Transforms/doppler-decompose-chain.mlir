// The theory of the heuristic on the chain ((a b) c) d of 64x64 matrices
// (examples/generate_examples.py chain --size 64), parts=4. Costs are in
// elements moved, S = 64*64; indices are i, j, k of "ij,jk->ik".
//
// Product 1 (a, b are arguments: no re-partitioning cost):
//   i:2 k:2  a read by 2 k-blocks, b by 2 i-blocks        S + S       = 2S
//   i:2 j:2  b by 2 i-blocks, one partial aggregated      S + S       = 2S
//   j:2 k:2  a by 2 k-blocks, one partial aggregated      S + S       = 2S
//   i:4 / k:4 (replication 3S), j:4 (aggregation 3S)                  3S
// A tie at 2S; the rule "no aggregation on ties" picks i:2 k:2: four
// 32x32 blocks on a 2x2 grid.
//
// Product 2 reads that 2x2 grid as its "ij" input:
//   i:2 j:2  grid matches (0), c by 2 i-blocks (S), aggregation (S)    2S
//   i:2 k:2  each block spans 2 producer blocks along j (S/2), a and c
//            read twice (2S)                                         2.5S
// so i:2 j:2: four block products and, per output row block, one
// addition of two partials: an output grid of 2x1.
//
// Product 3 reads that 2x1 grid:
//   i:2 k:2  grid matches (0), replication S + S                      2S
//   i:2 j:2  blocks nest in the producer's (0), d read twice (S), one
//            partial aggregated (S)                                   2S
// a tie, so i:2 k:2 (no aggregation), giving a 2x2 output grid.
//
// Prediction: 3 x 4 = 12 block products + 2 aggregation einsums = 14
// einsums; slices a (2 row panels), b (2 column panels), c (2 row
// panels), d (2 column panels) = 8; the producer grids feed products 2 and
// 3 directly; one assemble of the 2x2 result. 24 ops with the return.
// FLOPs: 3 * 2 * 64^3 = 1572864 for the products, plus 2 * 32 * 64 for the
// additions = 1576960.

// RUN: %python %doppler_src/examples/generate_examples.py chain --size 64 > %t.mlir
// RUN: doppler-opt %t.mlir --doppler-decompose=parts=4 --doppler-work-summary -o /dev/null 2>&1 | FileCheck %s --check-prefix=SUMMARY
// SUMMARY: @matmul_chain
// SUMMARY-NEXT: ops: 24 (doppler.slice 8, doppler.einsum 14, doppler.assemble 1, func.return 1)
// SUMMARY-NEXT: flops: 1.57696e+06

// RUN: doppler-opt %t.mlir --doppler-decompose=parts=4 | FileCheck %s
// CHECK-LABEL: func.func @matmul_chain
// CHECK-SAME: (%[[A:[^:]*]]: tensor<64x64xf32>, %[[B:[^:]*]]: tensor<64x64xf32>, %[[C:[^:]*]]: tensor<64x64xf32>, %[[D:[^:]*]]: tensor<64x64xf32>)
// Product 1: i:2 k:2.
// CHECK-COUNT-4: doppler.einsum "ij,jk->ik" join(mul) agg(add) ({{.*}}) : (tensor<32x64xf32>, tensor<64x32xf32>) -> tensor<32x32xf32>
// Product 2: i:2 j:2, the partials of each row block added.
// CHECK: doppler.slice %[[C]] [0, 0] : tensor<64x64xf32> to tensor<32x64xf32>
// CHECK: doppler.einsum "ij,jk->ik" join(mul) agg(add) ({{.*}}) : (tensor<32x32xf32>, tensor<32x64xf32>) -> tensor<32x64xf32>
// CHECK: doppler.einsum "ij,jk->ik" join(mul) agg(add) ({{.*}}) : (tensor<32x32xf32>, tensor<32x64xf32>) -> tensor<32x64xf32>
// CHECK-NEXT: %[[R0:.*]] = doppler.einsum "ik,ik->ik" join(add) ({{.*}}) : (tensor<32x64xf32>, tensor<32x64xf32>) -> tensor<32x64xf32>
// CHECK-COUNT-2: doppler.einsum "ij,jk->ik" join(mul) agg(add) ({{.*}}) : (tensor<32x32xf32>, tensor<32x64xf32>) -> tensor<32x64xf32>
// CHECK-NEXT: %[[R1:.*]] = doppler.einsum "ik,ik->ik" join(add)
// Product 3: i:2 k:2 on the row blocks of product 2, used directly.
// CHECK: doppler.einsum "ij,jk->ik" join(mul) agg(add) (%[[R0]], %{{.*}}) : (tensor<32x64xf32>, tensor<64x32xf32>) -> tensor<32x32xf32>
// CHECK: doppler.einsum "ij,jk->ik" join(mul) agg(add) (%[[R0]], %{{.*}})
// CHECK-NEXT: doppler.einsum "ij,jk->ik" join(mul) agg(add) (%[[R1]], %{{.*}})
// CHECK-NEXT: doppler.einsum "ij,jk->ik" join(mul) agg(add) (%[[R1]], %{{.*}})
// CHECK-NEXT: %[[OUT:.*]] = doppler.assemble [2, 2]
// CHECK-NEXT: return %[[OUT]]

// A split contracted index, given explicitly: j in 4 for every product.
// Each product is 4 partial products (64x16 @ 16x64) and a balanced tree of
// 3 additions ((p0 + p1) + (p2 + p3)); every input is cut into 4 panels
// along j (a, b, c, d and the two intermediate products: 6 x 4 = 24
// slices); one block per output, so no assemble: 3 x 7 = 21 einsums.
// RUN: sed -e 's/agg(add) (\(.*\))$/agg(add) (\1) {doppler.parts = array<i64: 1, 4, 1>}/' %t.mlir > %t.parts.mlir
// RUN: doppler-opt %t.parts.mlir --doppler-decompose --doppler-work-summary -o /dev/null 2>&1 | FileCheck %s --check-prefix=TREE-SUMMARY
// TREE-SUMMARY: ops: 46 (doppler.slice 24, doppler.einsum 21, func.return 1)
// RUN: doppler-opt %t.parts.mlir --doppler-decompose | FileCheck %s --check-prefix=TREE
// TREE-LABEL: func.func @matmul_chain
// TREE-COUNT-3: doppler.einsum "ij,jk->ik" join(mul) agg(add) ({{.*}}) : (tensor<64x16xf32>, tensor<16x64xf32>) -> tensor<64x64xf32>
// TREE: %[[P3:.*]] = doppler.einsum "ij,jk->ik" join(mul) agg(add)
// TREE-NEXT: %[[S01:.*]] = doppler.einsum "ik,ik->ik" join(add) (%[[P0:.*]], %[[P1:.*]]) : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
// TREE-NEXT: %[[S23:.*]] = doppler.einsum "ik,ik->ik" join(add) (%[[P2:.*]], %[[P3]])
// TREE-NEXT: %[[PROD1:.*]] = doppler.einsum "ik,ik->ik" join(add) (%[[S01]], %[[S23]])
// TREE-NEXT: doppler.slice %[[PROD1]] [0, 0] : tensor<64x64xf32> to tensor<64x16xf32>
// Both the decompositions compute the chain.
// RUN: doppler-opt %t.mlir --doppler-decompose=parts=4 > %t.dec.mlir
// RUN: doppler-interpret %t.dec.mlir --compare %t.mlir | FileCheck %s --check-prefix=SAME
// RUN: doppler-opt %t.parts.mlir --doppler-decompose > %t.tree.mlir
// RUN: doppler-interpret %t.tree.mlir --compare %t.mlir | FileCheck %s --check-prefix=SAME
// SAME: max rel-error {{.*}} <= tolerance 1e-05: ok
