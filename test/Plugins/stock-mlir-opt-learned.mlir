// The learned placement policy (policy=doppler, the default) from Debian's
// stock mlir-opt: the plugin dlopens libDopplerLearning.so from its own
// directory (build/lib), as doppler-opt does from build/bin/../lib.
// REQUIRES: stock-mlir-opt, learning
// RUN: %stock_mlir_opt --load-dialect-plugin=%doppler_plugin --load-pass-plugin=%doppler_plugin %s \
// RUN:   --pass-pipeline="builtin.module(doppler-pipeline{system=cpu4 devices=2 parts=4})" 2>&1 | FileCheck %s

// CHECK: remark: placed {{[0-9]+}} ops on 2 devices with doppler (greedy, embedded model, within {{[0-9]+}} simulator runs)
// CHECK: remark: budget: doppler greedy {{.*}}, critical-path {{.*}}, join-aware {{.*}}; refined
// CHECK-LABEL: func.func @chain(%arg0
// CHECK-SAME: doppler.makespan
// CHECK: doppler.einsum {{.*}}doppler.device = #doppler.device<{{[01]}}>

func.func @chain(%a: tensor<16x16xf32>, %b: tensor<16x16xf32>, %c: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %0 = doppler.einsum "ij,jk->ik" join(mul) agg(add) (%a, %b)
      : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %1 = doppler.einsum "ij,jk->ik" join(mul) agg(add) (%0, %c)
      : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  return %1 : tensor<16x16xf32>
}
