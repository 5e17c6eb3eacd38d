// RUN: doppler-opt %s --doppler-annotate-costs=system=%S/Inputs/kernel-costs-rows-system.json | FileCheck %s
// RUN: doppler-opt %s --doppler-annotate-costs=system=%S/Inputs/kernel-costs-walk-system.json | FileCheck %s --check-prefix=OLD

// The rows of copies and of einsums' loop nests (CopyWalk, einsumRowsOf in
// lib/Analysis/CostModel.cpp) with Inputs/kernel-costs-rows-system.json
// (copy overhead 0.1 us and row_time 10 ns, elementwise row_time 20 ns and
// no overhead of its own: launch_overhead 0.3 us; 2e10 B/s; cost units
// are us):
//   %0 "ij->i" sum on 64x8: the input walked in memory order, i then j,
//     which the output does not merge: 64 rows, 63 * 0.02 = 1.26 on top
//     of 2304 bytes (0.1152) + 0.3 = 1.6752;
//   %1 dense "ij,ij->ij": one merged row, no term: 6144 bytes (0.3072) +
//     0.3 = 0.6072;
//   %2 a slice of half of each of 4 rows: 4 rows, 3 * 0.01 on 16384 bytes
//     (0.8192) + 0.1 = 0.9492;
//   %3 a slice of 2 whole rows: one contiguous box, 0.9192;
//   %4 an assemble of two such blocks: two boxes of one row, the second
//     paying the copy's overhead again: 32768 bytes (1.6384) + 0.2 = 1.8384;
//   %5 a reshape: a view, launch_overhead (0.3): the copy's overhead is a
//     real copy's where the copy entry gives a row_time.
// CHECK-LABEL: func.func @rows
// CHECK: doppler.einsum "ij->i"{{.*}}doppler.compute_cost = 1.6752{{0*}}e+00
// CHECK: doppler.einsum "ij,ij->ij"{{.*}}doppler.compute_cost = 0.6071{{9+}}
// CHECK: doppler.slice{{.*}}doppler.compute_cost = 9.492{{0*}}e-01
// CHECK: doppler.slice{{.*}}doppler.compute_cost = 9.192{{0*}}e-01
// CHECK: doppler.assemble{{.*}}doppler.compute_cost = 1.8384{{0+}}{{[0-9]?}}
// CHECK: doppler.reshape{{.*}}doppler.compute_cost = 3.0{{0*}}e-01
// A description without these row times (every earlier calibration and the
// presets) prices them as before: no rows, a reshape at the copy overhead.
// OLD: doppler.einsum "ij->i"{{.*}}doppler.compute_cost = 0.4151{{9+}}
// OLD: doppler.slice{{.*}}doppler.compute_cost = 9.192{{0*}}e-01
// OLD: doppler.assemble{{.*}}doppler.compute_cost = 1.7384{{0+}}{{[0-9]?}}
// OLD: doppler.reshape{{.*}}doppler.compute_cost = 0.0999{{9+}}
func.func @rows(%x: tensor<64x8xf32>, %y: tensor<4x1024xf32>) -> (tensor<64xf32>, tensor<64x8xf32>, tensor<4x512xf32>, tensor<4x1024xf32>, tensor<8x512xf32>) {
  %0 = doppler.einsum "ij->i" join(identity) agg(add) (%x) : (tensor<64x8xf32>) -> tensor<64xf32>
  %1 = doppler.einsum "ij,ij->ij" join(sub) (%x, %x) : (tensor<64x8xf32>, tensor<64x8xf32>) -> tensor<64x8xf32>
  %2 = doppler.slice %y [0, 0] : tensor<4x1024xf32> to tensor<4x512xf32>
  %3 = doppler.slice %y [0, 0] : tensor<4x1024xf32> to tensor<2x1024xf32>
  %4 = doppler.assemble [2, 1] (%3, %3) : tensor<2x1024xf32>, tensor<2x1024xf32> -> tensor<4x1024xf32>
  %5 = doppler.reshape %y : tensor<4x1024xf32> -> tensor<8x512xf32>
  return %0, %1, %2, %4, %5 : tensor<64xf32>, tensor<64x8xf32>, tensor<4x512xf32>, tensor<4x1024xf32>, tensor<8x512xf32>
}
