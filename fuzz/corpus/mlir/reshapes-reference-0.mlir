// Hand-written doppler equivalents of ../reshapes.mlir (same names and
// arguments).

func.func @split(%x: tensor<2x6xf32>) -> tensor<2x2x3xf32> {
  %z = doppler.fill 0.0 : tensor<1xf32>
  %h0 = doppler.slice %x [0, 0] : tensor<2x6xf32> to tensor<2x3xf32>
  %h1 = doppler.slice %x [0, 3] : tensor<2x6xf32> to tensor<2x3xf32>
  %b0 = doppler.einsum "id,h->ihd" join(add) (%h0, %z) : (tensor<2x3xf32>, tensor<1xf32>) -> tensor<2x1x3xf32>
  %b1 = doppler.einsum "id,h->ihd" join(add) (%h1, %z) : (tensor<2x3xf32>, tensor<1xf32>) -> tensor<2x1x3xf32>
  %y = doppler.assemble [1, 2, 1] (%b0, %b1) : tensor<2x1x3xf32>, tensor<2x1x3xf32> -> tensor<2x2x3xf32>
  return %y : tensor<2x2x3xf32>
}

// Row 3a + b of the result is x[a, b, :]: built as two [3, 4] halves (one
// per a), each of three rows.
func.func @merge(%x: tensor<2x3x4xf32>) -> tensor<6x4xf32> {
  %a0 = doppler.slice %x [0, 0, 0] : tensor<2x3x4xf32> to tensor<1x3x4xf32>
  %a1 = doppler.slice %x [1, 0, 0] : tensor<2x3x4xf32> to tensor<1x3x4xf32>
  %r0 = doppler.einsum "abk->bk" join(identity) agg(add) (%a0) : (tensor<1x3x4xf32>) -> tensor<3x4xf32>
  %r1 = doppler.einsum "abk->bk" join(identity) agg(add) (%a1) : (tensor<1x3x4xf32>) -> tensor<3x4xf32>
  %y = doppler.assemble [2, 1] (%r0, %r1) : tensor<3x4xf32>, tensor<3x4xf32> -> tensor<6x4xf32>
  return %y : tensor<6x4xf32>
}

func.func @heads_round_trip(%x: tensor<2x5x12xf32>) -> tensor<2x5x12xf32> {
  %0 = doppler.einsum "btc->btc" join(exp) (%x) : (tensor<2x5x12xf32>) -> tensor<2x5x12xf32>
  return %0 : tensor<2x5x12xf32>
}

// Row 4h + t... of the [6, 20] view: x[a, b, :, :] flattened, built from
// the 4 rows of 5 of each [a, b] block.
func.func @batch_heads_round_trip(%x: tensor<2x3x4x5xf32>) -> (tensor<2x3x4x5xf32>, tensor<6x20xf32>) {
  %id = doppler.einsum "abtd->abtd" join(identity) (%x) : (tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32>
  %t0 = doppler.slice %x [0, 0, 0, 0] : tensor<2x3x4x5xf32> to tensor<2x3x1x5xf32>
  %t1 = doppler.slice %x [0, 0, 1, 0] : tensor<2x3x4x5xf32> to tensor<2x3x1x5xf32>
  %t2 = doppler.slice %x [0, 0, 2, 0] : tensor<2x3x4x5xf32> to tensor<2x3x1x5xf32>
  %t3 = doppler.slice %x [0, 0, 3, 0] : tensor<2x3x4x5xf32> to tensor<2x3x1x5xf32>
  // [a, b, 1, d] -> rows of a [2, 3, 5] ...; the flattening of (a, b)
  // is an assemble of the six [1, 5] rows per column block.
  %c0 = doppler.einsum "abtd->abd" join(identity) agg(max) (%t0) : (tensor<2x3x1x5xf32>) -> tensor<2x3x5xf32>
  %c1 = doppler.einsum "abtd->abd" join(identity) agg(max) (%t1) : (tensor<2x3x1x5xf32>) -> tensor<2x3x5xf32>
  %c2 = doppler.einsum "abtd->abd" join(identity) agg(max) (%t2) : (tensor<2x3x1x5xf32>) -> tensor<2x3x5xf32>
  %c3 = doppler.einsum "abtd->abd" join(identity) agg(max) (%t3) : (tensor<2x3x1x5xf32>) -> tensor<2x3x5xf32>
  %wide = doppler.assemble [1, 1, 4] (%c0, %c1, %c2, %c3) : tensor<2x3x5xf32>, tensor<2x3x5xf32>, tensor<2x3x5xf32>, tensor<2x3x5xf32> -> tensor<2x3x20xf32>
  %a0 = doppler.slice %wide [0, 0, 0] : tensor<2x3x20xf32> to tensor<1x3x20xf32>
  %a1 = doppler.slice %wide [1, 0, 0] : tensor<2x3x20xf32> to tensor<1x3x20xf32>
  %m0 = doppler.einsum "abc->bc" join(identity) agg(min) (%a0) : (tensor<1x3x20xf32>) -> tensor<3x20xf32>
  %m1 = doppler.einsum "abc->bc" join(identity) agg(min) (%a1) : (tensor<1x3x20xf32>) -> tensor<3x20xf32>
  %flat = doppler.assemble [2, 1] (%m0, %m1) : tensor<3x20xf32>, tensor<3x20xf32> -> tensor<6x20xf32>
  return %id, %flat : tensor<2x3x4x5xf32>, tensor<6x20xf32>
}
