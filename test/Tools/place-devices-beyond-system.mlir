// doppler-place on an .mlir costs uncosted ops with --system; placing on
// more devices than that system describes warns (as the doppler-place pass
// does), and the placement goes on. The report's memory line uses the ops'
// result sizes and the system's capacities.
// RUN: doppler-place %s --devices 8 --system cpu4 2>&1 | FileCheck %s --check-prefix=MORE
// RUN: doppler-place %s --devices 4 --system cpu4 2>&1 | FileCheck %s --check-prefix=FITS

// MORE: place-devices-beyond-system.mlir:[[@LINE+7]]:1: warning: placing on 8 devices but the system description 'cpu4' has 4; the extra devices are costed like the described ones
// MORE: devices: 8
// FITS-NOT: warning
// FITS: devices: 4
// Node sizes come from the result types: the matmul's 64x64 f32 result
// (16384 bytes) is live while exp writes its own on the same device.
// FITS: memory: peak per device [32768, 0, 0, 0] of capacity [4000000000, 4000000000, 4000000000, 4000000000] bytes
func.func @f(%a: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %0 = doppler.einsum "ij,jk->ik" join(mul) agg(add) (%a, %a) : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %1 = doppler.einsum "ij->ij" join(exp) (%0) : (tensor<64x64xf32>) -> tensor<64x64xf32>
  return %1 : tensor<64x64xf32>
}
