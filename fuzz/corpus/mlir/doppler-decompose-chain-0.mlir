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


// Product 1: i:2 k:2.
// Product 2: i:2 j:2, the partials of each row block added.
// Product 3: i:2 k:2 on the row blocks of product 2, used directly.

// A split contracted index, given explicitly: j in 4 for every product.
// Each product is 4 partial products (64x16 @ 16x64) and a balanced tree of
// 3 additions ((p0 + p1) + (p2 + p3)); every input is cut into 4 panels
// along j (a, b, c, d and the two intermediate products: 6 x 4 = 24
// slices); one block per output, so no assemble: 3 x 7 = 21 einsums.
// Both the decompositions compute the chain.
