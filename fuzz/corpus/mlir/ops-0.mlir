func.func @contractions(%a: tensor<4x64x128xf32>, %b: tensor<4x128x32xf32>,
                        %x: tensor<8x16xf32>) -> (tensor<4x64x32xf32>, tensor<f32>) {
  %c = doppler.einsum "bij,bjk->bik" join(mul) agg(add) (%a, %b)
      : (tensor<4x64x128xf32>, tensor<4x128x32xf32>) -> tensor<4x64x32xf32>
  // A full reduction to a scalar.
  %s = doppler.einsum "ij->" join(square) agg(add) (%x) : (tensor<8x16xf32>) -> tensor<f32>
  return %c, %s : tensor<4x64x32xf32>, tensor<f32>
}

func.func @softmax_rows(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %m = doppler.einsum "ij->i" join(identity) agg(max) (%x) : (tensor<8x16xf32>) -> tensor<8xf32>
  %d = doppler.einsum "ij,i->ij" join(sub) (%x, %m) : (tensor<8x16xf32>, tensor<8xf32>) -> tensor<8x16xf32>
  %e = doppler.einsum "ij->ij" join(exp) (%d) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %z = doppler.einsum "ij->i" join(identity) agg(add) (%e) : (tensor<8x16xf32>) -> tensor<8xf32>
  %p = doppler.einsum "ij,i->ij" join(div) (%e, %z) : (tensor<8x16xf32>, tensor<8xf32>) -> tensor<8x16xf32>
  // Scalars print as the shortest decimal that reads back exactly.
  %q = doppler.einsum "ij->ij" join(scale, 0.088388347648318447) (%p) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %r = doppler.einsum "ij->ij" join(shift, 1.0e-6) (%q) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

func.func @glue(%x: tensor<128x128xbf16>) -> tensor<128x128xbf16> {
  %r = doppler.slice %x [0, 64] : tensor<128x128xbf16> to tensor<128x64xbf16>
  %l = doppler.slice %x [0, 0] : tensor<128x128xbf16> to tensor<128x64xbf16>
  %y = doppler.assemble [1, 2] (%r, %l) : tensor<128x64xbf16>, tensor<128x64xbf16> -> tensor<128x128xbf16>
  %ninf = doppler.fill 0xFFF0000000000000 : tensor<4xbf16>
  %zero = doppler.fill 0.0 : tensor<4xbf16>
  return %y : tensor<128x128xbf16>
}

func.func @placed(%x: tensor<64xf16>) -> tensor<64xf16> {
  %y = doppler.einsum "i->i" join(relu) (%x) {doppler.device = #doppler.device<1>} : (tensor<64xf16>) -> tensor<64xf16>
  %t = doppler.transfer %y from <1> to <2> : tensor<64xf16>
  // Ops of other dialects can be placed too.
  %s = arith.addf %t, %t {doppler.device = #doppler.device<2>} : tensor<64xf16>
  return %s : tensor<64xf16>
}

// Cost-only graphs, as imported from the reference text format.
func.func @tasks() -> !doppler.value {
  %0 = doppler.task "input" compute(68719476736.0) transfer(274877906944.0)
  %1 = doppler.task "einsummable" (%0, %0) compute(1.5) transfer(0.0) {doppler.compute_cost = 1.5 : f64}
  return %1 : !doppler.value
}
