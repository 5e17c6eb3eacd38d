// doppler-place on an .mlir costs uncosted ops with --system; placing on
// more devices than that system describes warns (as the doppler-place pass
// does), and the placement goes on. The report's memory line uses the ops'
// result sizes and the system's capacities.

// Node sizes come from the result types: the matmul's 64x64 f32 result
// (16384 bytes) is live while exp writes its own on the same device.
func.func @f(%a: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %0 = doppler.einsum "ij,jk->ik" join(mul) agg(add) (%a, %a) : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %1 = doppler.einsum "ij->ij" join(exp) (%0) : (tensor<64x64xf32>) -> tensor<64x64xf32>
  return %1 : tensor<64x64xf32>
}
