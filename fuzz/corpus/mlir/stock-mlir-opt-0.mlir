// Debian's stock mlir-opt (libMLIR.so) parses doppler IR and runs Doppler's
// passes from DopplerPlugin.so: the dialect plugin, the pass plugin, the
// whole doppler-pipeline (heuristic policy here; the learned one, which the
// plugin dlopens from libDopplerLearning.so beside it, is
// stock-mlir-opt-learned.mlir) and convert-doppler-to-linalg. A plugin's
// passes are not command-line flags of the stock tool (they are registered
// after its options are parsed): they run through --pass-pipeline.
// The stock tool without the plugin does not know the dialect.






func.func @mlp(%x: tensor<8x16xf32>, %w1: tensor<16x32xf32>, %w2: tensor<32x8xf32>)
    -> tensor<8x8xf32> {
  %h = doppler.einsum "bi,ih->bh" join(mul) agg(add) (%x, %w1)
      : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %g = doppler.einsum "bh->bh" join(gelu) (%h) : (tensor<8x32xf32>) -> tensor<8x32xf32>
  %y = doppler.einsum "bh,ho->bo" join(mul) agg(add) (%g, %w2)
      : (tensor<8x32xf32>, tensor<32x8xf32>) -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}
