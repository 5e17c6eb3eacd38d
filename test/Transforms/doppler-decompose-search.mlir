// RUN: doppler-opt %s --doppler-decompose-search="system=h100x8 devices=8" 2>&1 | FileCheck %s
// RUN: doppler-opt %s --doppler-pipeline="system=h100x8 devices=8" -o /dev/null 2>&1 | FileCheck %s --check-prefix=PIPE
// RUN: doppler-opt %s --doppler-pipeline="system=h100x8 devices=8 budget-evaluations=0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=GREEDY
// RUN: not doppler-opt %s --doppler-decompose-search="devices=0" 2>&1 | FileCheck %s --check-prefix=BAD
// Decomposition and placement searched together: every candidate
// decomposition placed greedily and simulated on a copy, the function
// decomposed (not placed) by the best.

// On a chain of two large GEMMs the cost-based decomposition places best.
// CHECK: remark: decomposition search (greedy placements on 8 devices, simulated): auto {{[0-9.e+]+}} (chosen), auto (chain) {{[0-9.e+]+}}, auto (throughput) {{[0-9.e+]+}}, auto (D/2 blocks) {{[0-9.e+]+}}, parts=8 {{[0-9.e+]+}}, parts=2 {{[0-9.e+]+}}{{$}}
// CHECK-LABEL: func.func @chain
// CHECK-NOT: doppler.device
// CHECK: doppler.einsum "ij,jk->ik"{{.*}}tensor<512x8192xf32>
// CHECK-NOT: func.func @chain_
// CHECK-NOT: doppler.device
// PIPE: remark: decomposition search
// PIPE: remark: placed
// GREEDY-NOT: decomposition search
// BAD: doppler-decompose-search: devices must be between 1 and 4096, got 0

func.func @chain(%x: tensor<4096x8192xf32>, %w1: tensor<8192x8192xf32>,
                 %w2: tensor<8192x8192xf32>) -> tensor<4096x8192xf32> {
  %a = doppler.einsum "ij,jk->ik" join(mul) agg(add) (%x, %w1)
      : (tensor<4096x8192xf32>, tensor<8192x8192xf32>) -> tensor<4096x8192xf32>
  %b = doppler.einsum "ij,jk->ik" join(mul) agg(add) (%a, %w2)
      : (tensor<4096x8192xf32>, tensor<8192x8192xf32>) -> tensor<4096x8192xf32>
  return %b : tensor<4096x8192xf32>
}
