// RUN: doppler-opt %s --split-input-file --doppler-annotate-costs | FileCheck %s
// RUN: doppler-opt %s --split-input-file --doppler-annotate-costs=system=cpu4 | FileCheck %s --check-prefix=CPU
// RUN: doppler-opt %s --split-input-file --doppler-annotate-costs=system=%S/Inputs/join-throughput-system.json | FileCheck %s --check-prefix=JOIN

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

// -----

// With a join throughput (exp: 1e8 per second; 1e11 FLOP/s, 1e10 B/s, no
// launch overhead), exp over 2^20 elements costs 2^20 / 1e8 s = 10485.76 us,
// far above the memory-bound add (12 MiB / 1e10 B/s = 1258.29 us). A
// reduction adds its aggregation at peak (+ 10.49 us). A mul-add
// contraction is a GEMM: peak FLOP/s (2 * 256^3 / 1e11 = 335.54 us), never
// the elementwise mul throughput.
// JOIN-LABEL: func.func @joins
// JOIN: join(exp)
// JOIN-SAME: doppler.compute_cost = 10485.76{{[0-9]*}} : f64
// JOIN-SAME: doppler.transfer_cost = 419.430{{[0-9]*}} : f64
// JOIN: join(add)
// JOIN-SAME: doppler.compute_cost = 1258.29{{[0-9]*}} : f64
// JOIN: join(exp) agg(add)
// JOIN-SAME: doppler.compute_cost = 10496.24576{{[0-9]*}} : f64
// JOIN: join(mul) agg(add)
// JOIN-SAME: doppler.compute_cost = 335.544{{[0-9]*}} : f64
func.func @joins(%x: tensor<1024x1024xf32>, %a: tensor<256x256xf32>)
    -> (tensor<1024x1024xf32>, tensor<1024x1024xf32>, tensor<1024xf32>, tensor<256x256xf32>) {
  %e = doppler.einsum "ij->ij" join(exp) (%x) : (tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %s = doppler.einsum "ij,ij->ij" join(add) (%x, %x) : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %r = doppler.einsum "ij->i" join(exp) agg(add) (%x) : (tensor<1024x1024xf32>) -> tensor<1024xf32>
  %m = doppler.einsum "ij,jk->ik" join(mul) agg(add) (%a, %a) : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  return %e, %s, %r, %m : tensor<1024x1024xf32>, tensor<1024x1024xf32>, tensor<1024xf32>, tensor<256x256xf32>
}

// -----

// A fused op pays every step's join once per point (2^20 points): exp at
// its listed 1e8/s (10485.76 us), mul at its listed 1e9/s (1048.576 us),
// add at peak (1 FLOP: 10.48576 us), 11544.82176 us in all, above the one
// pass over memory (two inputs and the output: 1258.29 us). The three
// einsums it replaces would cost 10485.76 + 1258.29 + 1258.29 us.
// JOIN-LABEL: func.func @fused
// JOIN: doppler.fused
// JOIN-SAME: doppler.compute_cost = 11544.82176{{[0-9]*}} : f64
// JOIN-SAME: doppler.transfer_cost = 419.430{{[0-9]*}} : f64
func.func @fused(%x: tensor<1024x1024xf32>, %y: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %f = doppler.fused "ij,ij->ij" "exp(in0); mul(s0, in1); add(s1, in1)" (%x, %y)
      : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  return %f : tensor<1024x1024xf32>
}
