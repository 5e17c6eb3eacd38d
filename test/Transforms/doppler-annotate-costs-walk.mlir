// RUN: doppler-opt %s --doppler-annotate-costs=system=%S/Inputs/kernel-costs-walk-system.json | FileCheck %s
// RUN: doppler-opt %s --doppler-annotate-costs=system=cpu4 | FileCheck %s --check-prefix=PRESET

// A fused task's walk (KernelCost::gatherTime, rowTime; fusedWalkOf in
// lib/Analysis/CostModel.cpp) and reshapes, which run as views, with
// Inputs/kernel-costs-walk-system.json (gather_time 1 ns, row_time 10 ns,
// fused overhead 0.4 us, copy 0.1 us; 2e10 B/s; cost units are us):
//   %0 "ij,i,i->ij" on 64x8: rows of 8 (i and j do not merge: the per-row
//     inputs do not walk j), both per-row inputs filled per row: 63 rows
//     * 0.01 + 2 * 512 elements * 0.001 = 1.654 on top of 4608 bytes at
//     2e10 (0.2304) + 0.4 = 2.2844;
//   %1 "ij,j->ij" on 4x1024: rows of 1024 read in place, 3 rows: 0.03 on
//     36864 bytes (1.8432) + 0.4 = 2.2732;
//   %2 dense "ij,ij->ij": one merged row, no walk: 786432 bytes (39.3216)
//     + 0.4 = 39.7216;
//   %3 "ij,ji->ij": the transposed input gathered with a stride, 65536
//     elements (65.536) and 63 rows (0.63): 105.8876;
//   %4, %5 slices (the first a contiguous run, a view in the runtime, but
//     priced as a copy: runsAsView says why): 16384 bytes (0.8192) + 0.1;
//   %6 a reshape: a view, the copy's fixed time alone (0.1).
// CHECK-LABEL: func.func @walk
// CHECK: doppler.fused "ij,i,i->ij"{{.*}}doppler.compute_cost = 2.2844{{0*}}e+00
// CHECK: doppler.fused "ij,j->ij"{{.*}}doppler.compute_cost = 2.2731{{9+}}
// CHECK: doppler.fused "ij,ij->ij"{{.*}}doppler.compute_cost = 3.97216{{0*}}e+01
// CHECK: doppler.fused "ij,ji->ij"{{.*}}doppler.compute_cost = 105.887{{[56][0-9]*}}
// CHECK: doppler.slice{{.*}}doppler.compute_cost = 9.192{{0*}}e-01
// CHECK: doppler.slice{{.*}}doppler.compute_cost = 9.192{{0*}}e-01
// CHECK: doppler.reshape{{.*}}doppler.compute_cost = 0.0999{{9+}}
// A preset (no kernels table) has neither term: the transposed add costs
// what the dense one does, and the reshape its bytes.
// PRESET: doppler.fused "ij,ij->ij"{{.*}}doppler.compute_cost = 41.3216
// PRESET: doppler.fused "ij,ji->ij"{{.*}}doppler.compute_cost = 41.3216
// PRESET: doppler.reshape{{.*}}doppler.compute_cost = 3.6384{{0*}}e+00
func.func @walk(%x: tensor<64x8xf32>, %s: tensor<64xf32>, %b: tensor<64xf32>,
                %y: tensor<4x1024xf32>, %c: tensor<1024xf32>,
                %t: tensor<1024x64xf32>, %u: tensor<64x1024xf32>) -> (tensor<64x8xf32>, tensor<4x1024xf32>, tensor<64x1024xf32>, tensor<64x1024xf32>, tensor<2x1024xf32>, tensor<4x512xf32>, tensor<8x512xf32>) {
  %0 = doppler.fused "ij,i,i->ij" "mul(in0, in1); add(s0, in2)" (%x, %s, %b) : (tensor<64x8xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<64x8xf32>
  %1 = doppler.fused "ij,j->ij" "add(in0, in1)" (%y, %c) : (tensor<4x1024xf32>, tensor<1024xf32>) -> tensor<4x1024xf32>
  %2 = doppler.fused "ij,ij->ij" "add(in0, in1)" (%u, %u) : (tensor<64x1024xf32>, tensor<64x1024xf32>) -> tensor<64x1024xf32>
  %3 = doppler.fused "ij,ji->ij" "add(in0, in1)" (%u, %t) : (tensor<64x1024xf32>, tensor<1024x64xf32>) -> tensor<64x1024xf32>
  %4 = doppler.slice %y [0, 0] : tensor<4x1024xf32> to tensor<2x1024xf32>
  %5 = doppler.slice %y [0, 0] : tensor<4x1024xf32> to tensor<4x512xf32>
  %6 = doppler.reshape %y : tensor<4x1024xf32> -> tensor<8x512xf32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<64x8xf32>, tensor<4x1024xf32>, tensor<64x1024xf32>, tensor<64x1024xf32>, tensor<2x1024xf32>, tensor<4x512xf32>, tensor<8x512xf32>
}
