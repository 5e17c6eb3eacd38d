// RUN: doppler-opt %s --doppler-annotate-costs=system=%S/Inputs/kernel-costs-system.json | FileCheck %s
// RUN: doppler-opt %s --doppler-annotate-costs=system=cpu4 | FileCheck %s --check-prefix=ROOFLINE

// A device's "kernels" table prices each kind of task with its own fixed
// time and rate (Inputs/kernel-costs-system.json; cost units are us):
//   contraction 64x256 by 256x16: 524288 FLOPs at 1e11 * 16 / (16 + 10)
//     FLOP/s (GEMM side min(64, 16) = 16, half size 10) = 8.5197 us,
//     + 0.5 = 9.0197;
//   conv 1x16x8x8 by 32x16x3x3: 589824 FLOPs at 5e10 * 32 / (32 + 20)
//     (side min(32 filters, 64 positions)) = 19.1693 us, + 2 = 21.1693;
//   depthwise 1x32x8x8 by 32x1x3x3: the work its kernel does (WindowWork.h:
//     kernel rows inside the input, 22 over the 8 output rows, times 3
//     columns times 8 outputs per row, times 32 channels: 16896
//     multiply-adds, not the 36864 / 2 of every tap) 33792 FLOPs at
//     1e10 * 64 / (64 + 64) (size: 64 output positions per channel) =
//     6.7584 us, + 1;
//   pool 3x3 over 1x32x8x8: 18432 window elements at 1e9 = 18.432, + 1.5;
//   reshape: a view of its input (the copy's fixed time, 0.1, alone);
//   relu (an elementwise einsum: no kind): 0.8192 + launch 0.3;
//   matrix-vector 64x256 by 256x1: no small-GEMM factor (its 32768 FLOPs
//     take 0.33 us), bound by its matrix stream: 66816 bytes at the
//     contraction's gemv_bandwidth 1e10 = 6.6816 us, + 0.5 = 7.1816;
//   depthwise on 1x1 output planes, 1x32x1x1 by 32x1x3x3 padded: one kernel
//     row of 3 inside the input, 32 * 3 multiply-adds (not 576 FLOPs):
//     192 FLOPs at 1e10 * 1 / (1 + 64) = 1.248 us, + 1 = 2.248.
// CHECK-LABEL: func.func @kinds
// CHECK: doppler.einsum "ij,jk->ik"{{.*}}doppler.compute_cost = 9.0196{{[0-9]+}}
// CHECK: doppler.conv{{.*}}groups 1 {{.*}}doppler.compute_cost = 21.169{{[0-9]+}}
// CHECK: doppler.conv{{.*}}groups 32 {{.*}}doppler.compute_cost = 7.7584{{0*}}e+00
// CHECK: doppler.pool{{.*}}doppler.compute_cost = 1.9932{{0*}}e+01
// CHECK: doppler.reshape{{.*}}doppler.compute_cost = 0.0999{{9+}}
// CHECK: doppler.einsum "ij->ij" join(relu){{.*}}doppler.compute_cost = 1.119{{[0-9]+}}
// CHECK: doppler.einsum "ij,jk->ik"{{.*}}doppler.compute_cost = 7.181{{[56][0-9]*}}
// CHECK: doppler.conv{{.*}}groups 32 {{.*}}doppler.compute_cost = 2.247{{9+}}
// Without the table (the cpu4 preset) the same ops cost the roofline plus
// one launch overhead each, whatever their kind: the conv's 589824 FLOPs at
// 96 GFLOP/s + 2 us.
// ROOFLINE: doppler.conv{{.*}}groups 1 {{.*}}doppler.compute_cost = 8.144
func.func @kinds(%a: tensor<64x256xf32>, %b: tensor<256x16xf32>,
                 %x: tensor<1x16x8x8xf32>, %w: tensor<32x16x3x3xf32>,
                 %dw: tensor<32x1x3x3xf32>, %v: tensor<256x1xf32>,
                 %x1: tensor<1x32x1x1xf32>) -> (tensor<64x16xf32>, tensor<32x64xf32>, tensor<1x32x8x8xf32>, tensor<64x1xf32>, tensor<1x32x1x1xf32>) {
  %c = doppler.einsum "ij,jk->ik" join(mul) agg(add) (%a, %b) : (tensor<64x256xf32>, tensor<256x16xf32>) -> tensor<64x16xf32>
  %y = doppler.conv %x, %w strides [1, 1] dilations [1, 1] padding [1, 1, 1, 1] groups 1 : (tensor<1x16x8x8xf32>, tensor<32x16x3x3xf32>) -> tensor<1x32x8x8xf32>
  %d = doppler.conv %y, %dw strides [1, 1] dilations [1, 1] padding [1, 1, 1, 1] groups 32 : (tensor<1x32x8x8xf32>, tensor<32x1x3x3xf32>) -> tensor<1x32x8x8xf32>
  %p = doppler.pool max %d kernel [3, 3] strides [1, 1] dilations [1, 1] padding [1, 1, 1, 1] : tensor<1x32x8x8xf32> -> tensor<1x32x8x8xf32>
  %r = doppler.reshape %p : tensor<1x32x8x8xf32> -> tensor<32x64xf32>
  %e = doppler.einsum "ij->ij" join(relu) (%r) : (tensor<32x64xf32>) -> tensor<32x64xf32>
  %mv = doppler.einsum "ij,jk->ik" join(mul) agg(add) (%a, %v) : (tensor<64x256xf32>, tensor<256x1xf32>) -> tensor<64x1xf32>
  %d1 = doppler.conv %x1, %dw strides [1, 1] dilations [1, 1] padding [1, 1, 1, 1] groups 32 : (tensor<1x32x1x1xf32>, tensor<32x1x3x3xf32>) -> tensor<1x32x1x1xf32>
  return %c, %e, %d, %mv, %d1 : tensor<64x16xf32>, tensor<32x64xf32>, tensor<1x32x8x8xf32>, tensor<64x1xf32>, tensor<1x32x1x1xf32>
}
