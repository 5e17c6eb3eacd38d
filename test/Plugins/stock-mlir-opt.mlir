// Debian's stock mlir-opt (libMLIR.so) parses doppler IR and runs Doppler's
// passes from DopplerPlugin.so: the dialect plugin, the pass plugin, the
// whole doppler-pipeline (heuristic policy here; the learned one, which the
// plugin dlopens from libDopplerLearning.so beside it, is
// stock-mlir-opt-learned.mlir) and convert-doppler-to-linalg. A plugin's
// passes are not command-line flags of the stock tool (they are registered
// after its options are parsed): they run through --pass-pipeline.
// REQUIRES: stock-mlir-opt
// RUN: %stock_mlir_opt --load-dialect-plugin=%doppler_plugin %s | FileCheck %s --check-prefix=PARSE
// RUN: %stock_mlir_opt --load-dialect-plugin=%doppler_plugin --load-pass-plugin=%doppler_plugin %s \
// RUN:   --pass-pipeline="builtin.module(doppler-pipeline{system=cpu4 devices=2 policy=critical-path})" | FileCheck %s --check-prefix=PIPELINE
// RUN: %stock_mlir_opt --load-dialect-plugin=%doppler_plugin --load-pass-plugin=%doppler_plugin %s \
// RUN:   --pass-pipeline="builtin.module(convert-doppler-to-linalg)" | FileCheck %s --check-prefix=LINALG
// RUN: %stock_mlir_opt --load-pass-plugin=%doppler_plugin --help | FileCheck %s --check-prefix=HELP
// The stock tool without the plugin does not know the dialect.
// RUN: not %stock_mlir_opt %s 2>&1 | FileCheck %s --check-prefix=NOPLUGIN

// PARSE-LABEL: func.func @mlp
// PARSE: doppler.einsum "bi,ih->bh" join(mul) agg(add)
// PARSE: doppler.einsum "bh->bh" join(gelu)

// PIPELINE-LABEL: func.func @mlp
// PIPELINE-SAME: doppler.makespan
// PIPELINE: doppler.einsum {{.*}}doppler.device = #doppler.device<{{[01]}}>

// LINALG-LABEL: func.func @mlp
// LINALG: linalg.generic
// LINALG-SAME: iterator_types = ["parallel", "parallel", "reduction"]
// LINALG: math.tanh
// LINALG-NOT: doppler.einsum

// HELP: --convert-doppler-to-linalg
// HELP: --doppler-pipeline

// NOPLUGIN: error: {{.*}}doppler

func.func @mlp(%x: tensor<8x16xf32>, %w1: tensor<16x32xf32>, %w2: tensor<32x8xf32>)
    -> tensor<8x8xf32> {
  %h = doppler.einsum "bi,ih->bh" join(mul) agg(add) (%x, %w1)
      : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %g = doppler.einsum "bh->bh" join(gelu) (%h) : (tensor<8x32xf32>) -> tensor<8x32xf32>
  %y = doppler.einsum "bh,ho->bo" join(mul) agg(add) (%g, %w2)
      : (tensor<8x32xf32>, tensor<32x8xf32>) -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}
