// doppler.fused becomes one linalg.generic over the output's indices whose
// body applies the program's steps in order (the einsum's scalar builder
// for each join); inputs are read through their terms, the placement
// carries over.
// RUN: doppler-opt %s --convert-doppler-to-linalg | FileCheck %s
// Numerics: back through convert-linalg-to-doppler (which splits the body
// into einsums again), the result is what the fused op computes.
// RUN: doppler-opt %s --convert-doppler-to-linalg --convert-linalg-to-doppler -o %t.back.mlir
// RUN: doppler-interpret %t.back.mlir --compare %s --tolerance 1e-6 | FileCheck %s --check-prefix=SAME
// SAME: ok

// CHECK-DAG: #[[$XT:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-DAG: #[[$B:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @fused
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[BIAS:.*]]: tensor<8xf32>)
// CHECK: %[[INIT:.*]] = tensor.empty() {doppler.device = #doppler.device<1>} : tensor<8x4xf32>
// CHECK: %[[G:.*]] = linalg.generic {indexing_maps = [#[[$XT]], #[[$B]], #[[$ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[X]], %[[BIAS]] : tensor<4x8xf32>, tensor<8xf32>) outs(%[[INIT]] : tensor<8x4xf32>) attrs =  {doppler.device = #doppler.device<1>}
// CHECK-NEXT: ^bb0(%[[IN0:.*]]: f32, %[[IN1:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[S0:.*]] = arith.addf %[[IN0]], %[[IN1]] : f32
// CHECK-NEXT: %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT: %[[S1:.*]] = arith.mulf %[[S0]], %[[HALF]] : f32
// CHECK: math.tanh
// CHECK: %[[S3:.*]] = arith.mulf %{{.*}}, %[[IN0]] : f32
// CHECK-NEXT: linalg.yield %[[S3]] : f32
// CHECK: return %[[G]]
// CHECK-NOT: doppler.fused
func.func @fused(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<8x4xf32> {
  %y = doppler.fused "bh,h->hb" "add(in0, in1); scale(s0, 0.5); gelu(s1); mul(s2, in0)" (%x, %b) {doppler.device = #doppler.device<1>}
      : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}
