// RUN: doppler-opt %s --split-input-file --doppler-annotate-costs | FileCheck %s
// RUN: doppler-opt %s --split-input-file --doppler-annotate-costs=system=cpu4 | FileCheck %s --check-prefix=CPU

// A 4096^3 f32 matmul on an H100 (67 TFLOP/s f32, 5 us launch) is compute
// bound: 2*4096^3 / 67e12 s + 5 us = 2056.3 us. Its 64 MiB result moves over
// NVLink (450 GB/s, 2 us latency) in 67108864 / 450e9 s + 2 us = 151.13 us.
// CHECK-LABEL: func.func @matmul
// CHECK: doppler.einsum
// CHECK-SAME: doppler.compute_cost = 2056.{{[0-9]+}} : f64
// CHECK-SAME: doppler.transfer_cost = 151.13{{[0-9]+}} : f64
// On one CPU core (96 GFLOP/s f32, 2 us launch): 1431655.8 us; 64 MiB at
// 10 GB/s + 1 us = 6711.9 us.
// CPU-LABEL: func.func @matmul
// CPU: doppler.einsum
// CPU-SAME: doppler.compute_cost = 1431657.{{[0-9]+}} : f64
// CPU-SAME: doppler.transfer_cost = 6711.{{[0-9]+}} : f64
func.func @matmul(%a: tensor<4096x4096xf32>, %b: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  %c = doppler.einsum "ij,jk->ik" join(mul) agg(add) (%a, %b) : (tensor<4096x4096xf32>, tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  return %c : tensor<4096x4096xf32>
}

// -----

// A bf16 elementwise op is memory bound: it reads and writes 2 * 32 MiB at
// 3.35 TB/s (20.03 us) plus 5 us.
// CHECK-LABEL: func.func @elementwise
// CHECK: doppler.einsum "ij->ij" join(relu)
// CHECK-SAME: doppler.compute_cost = 25.03{{[0-9]+}} : f64
func.func @elementwise(%x: tensor<4096x4096xbf16>) -> tensor<4096x4096xbf16> {
  %y = doppler.einsum "ij->ij" join(relu) (%x) : (tensor<4096x4096xbf16>) -> tensor<4096x4096xbf16>
  return %y : tensor<4096x4096xbf16>
}

// -----

// Imported cost-only ops keep their costs; ops of other dialects are costed
// as copies of their operands and results.
// CHECK-LABEL: func.func @mixed
// CHECK: doppler.task "input" compute(7.0) transfer(3.0)
// CHECK-NOT: doppler.compute_cost
// CHECK: arith.addf
// CHECK-SAME: doppler.compute_cost = 5.0{{[0-9]*}} : f64
// CHECK: return
func.func @mixed(%x: tensor<16xf32>) -> (!doppler.value, tensor<16xf32>) {
  %t = doppler.task "input" compute(7.0) transfer(3.0)
  %s = arith.addf %x, %x : tensor<16xf32>
  return %t, %s : !doppler.value, tensor<16xf32>
}
