// RUN: doppler-opt %s --doppler-annotate-costs=system=%S/Inputs/kernel-costs-grid-system.json | FileCheck %s
// RUN: doppler-opt %s --doppler-annotate-costs=system=cpu4 | FileCheck %s --check-prefix=PRESET

// A convolution whose device has a rate grid (KernelCost::grid, measured by
// doppler-calibrate on GEMM shapes) runs at its GEMM's rate: per group, m
// filters, n output positions, k input channels times taps, interpolated
// in log space (Inputs/kernel-costs-grid-system.json: m 16, 64; n 16, 64;
// k 144, 576; the rate doubles from m 16 to 64, from n 16 to 64 and from
// k 144 to 576, from 1e10 at (16, 16, 144)); cost units are us, + 2 each:
//   1x16x8x8 by 32x16x3x3: (32, 64, 144), m halfway in log space between
//     (16, 64, 144) and (64, 64, 144): sqrt(2e10 * 8e10) = 4e10; 589824
//     FLOPs: 14.7456 us, + 2 = 16.7456;
//   1x64x8x8 by 64x16x3x3 in 4 groups: (16, 64, 144) per group, a point:
//     2e10; 1179648 FLOPs: 58.9824 + 2 = 60.9824;
//   1x32x4x4 by 64x32x3x3: (64, 16, 288), k halfway: sqrt(4e10 * 8e10) =
//     5.65685e10; 589824 FLOPs: 10.4267 + 2 = 12.4267;
//   1x16x32x32 by 256x16x3x3: (256, 1024, 144), beyond the grid: its edge
//     (64, 64, 144), 8e10; 75497472 FLOPs: 943.7184 + 2 = 945.7184;
//   1x16x1x1 by 32x16x3x3 on a 1x1 output: a matrix-vector product (n =
//     1), not the grid's: its 18624 bytes at gemv_bandwidth 1e10 = 1.8624,
//     + 2 = 3.8624.
// Contractions on the contraction kind's grid (m the first input's own
// indices, n the second's, k the contracted ones; m 4, 64, n 16, 256, k 64:
// 5e9, 1e10, 2e10, 4e10), + 0.5 each:
//   16x64 by 64x64 ("ij,kj->ik"): (16, 64, 64), halfway on both axes: the
//     geometric mean of the four, 1.41421e10; 131072 FLOPs: 9.2682 + 0.5;
//   2x4x64 by 2x256x64 ("bij,bkj->bik"): two GEMMs of (4, 256, 64), a
//     point: 1e10; 262144 FLOPs: 26.2144 + 0.5 = 26.7144;
//   1x64 by 256x64: a matrix-vector product (m = 1), its 66816 bytes at
//     gemv_bandwidth 1e10: 6.6816 + 0.5 = 7.1816.
// CHECK-LABEL: func.func @contractions
// CHECK: doppler.einsum "ij,kj->ik"{{.*}}doppler.compute_cost = 9.768{{[12][0-9]*}}{{.*}}-> tensor<16x64xf32>
// CHECK: doppler.einsum "bij,bkj->bik"{{.*}}doppler.compute_cost = 2.67144{{0*}}e+01
// CHECK: doppler.einsum "ij,kj->ik"{{.*}}doppler.compute_cost = 7.1816{{0*}}e+00{{.*}}-> tensor<1x256xf32>
// Without grids (the cpu4 preset): 131072 FLOPs at 96 GFLOP/s + 2 us.
// PRESET-LABEL: func.func @contractions
// PRESET: doppler.einsum "ij,kj->ik"{{.*}}doppler.compute_cost = 3.3653{{[0-9]*}}
func.func @contractions(%a: tensor<16x64xf32>, %w: tensor<64x64xf32>,
                        %ab: tensor<2x4x64xf32>, %wb: tensor<2x256x64xf32>,
                        %v: tensor<1x64xf32>, %wv: tensor<256x64xf32>) -> (tensor<16x64xf32>, tensor<2x4x256xf32>, tensor<1x256xf32>) {
  %c = doppler.einsum "ij,kj->ik" join(mul) agg(add) (%a, %w) : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
  %b = doppler.einsum "bij,bkj->bik" join(mul) agg(add) (%ab, %wb) : (tensor<2x4x64xf32>, tensor<2x256x64xf32>) -> tensor<2x4x256xf32>
  %g = doppler.einsum "ij,kj->ik" join(mul) agg(add) (%v, %wv) : (tensor<1x64xf32>, tensor<256x64xf32>) -> tensor<1x256xf32>
  return %c, %b, %g : tensor<16x64xf32>, tensor<2x4x256xf32>, tensor<1x256xf32>
}

// CHECK-LABEL: func.func @grid
// CHECK: doppler.conv{{.*}}doppler.compute_cost = 16.745{{[56][0-9]*}}{{.*}}-> tensor<1x32x8x8xf32>
// CHECK: doppler.conv{{.*}}groups 4 {{.*}}doppler.compute_cost = 6.09824{{0*}}e+01
// CHECK: doppler.conv{{.*}}doppler.compute_cost = 12.426{{[67][0-9]*}}{{.*}}-> tensor<1x64x4x4xf32>
// CHECK: doppler.conv{{.*}}doppler.compute_cost = 945.718{{[34][0-9]*}}{{.*}}-> tensor<1x256x32x32xf32>
// CHECK: doppler.conv{{.*}}doppler.compute_cost = 3.862{{[34][0-9]*}}{{.*}}-> tensor<1x32x1x1xf32>
// PRESET-LABEL: func.func @grid
// The presets have no grid: the first convolution costs the roofline plus
// one launch overhead, 589824 FLOPs at 96 GFLOP/s + 2 us.
// PRESET: doppler.conv{{.*}}doppler.compute_cost = 8.144{{.*}}-> tensor<1x32x8x8xf32>
func.func @grid(%x: tensor<1x16x8x8xf32>, %w: tensor<32x16x3x3xf32>,
                %xg: tensor<1x64x8x8xf32>, %wg: tensor<64x16x3x3xf32>,
                %xk: tensor<1x32x4x4xf32>, %wk: tensor<64x32x3x3xf32>,
                %xb: tensor<1x16x32x32xf32>, %wb: tensor<256x16x3x3xf32>,
                %x1: tensor<1x16x1x1xf32>) -> (tensor<1x32x8x8xf32>, tensor<1x64x8x8xf32>, tensor<1x64x4x4xf32>, tensor<1x256x32x32xf32>, tensor<1x32x1x1xf32>) {
  %a = doppler.conv %x, %w strides [1, 1] dilations [1, 1] padding [1, 1, 1, 1] groups 1 : (tensor<1x16x8x8xf32>, tensor<32x16x3x3xf32>) -> tensor<1x32x8x8xf32>
  %b = doppler.conv %xg, %wg strides [1, 1] dilations [1, 1] padding [1, 1, 1, 1] groups 4 : (tensor<1x64x8x8xf32>, tensor<64x16x3x3xf32>) -> tensor<1x64x8x8xf32>
  %c = doppler.conv %xk, %wk strides [1, 1] dilations [1, 1] padding [1, 1, 1, 1] groups 1 : (tensor<1x32x4x4xf32>, tensor<64x32x3x3xf32>) -> tensor<1x64x4x4xf32>
  %d = doppler.conv %xb, %wb strides [1, 1] dilations [1, 1] padding [1, 1, 1, 1] groups 1 : (tensor<1x16x32x32xf32>, tensor<256x16x3x3xf32>) -> tensor<1x256x32x32xf32>
  %e = doppler.conv %x1, %w strides [1, 1] dilations [1, 1] padding [1, 1, 1, 1] groups 1 : (tensor<1x16x1x1xf32>, tensor<32x16x3x3xf32>) -> tensor<1x32x1x1xf32>
  return %a, %b, %c, %d, %e : tensor<1x32x8x8xf32>, tensor<1x64x8x8xf32>, tensor<1x64x4x4xf32>, tensor<1x256x32x32xf32>, tensor<1x32x1x1xf32>
}
