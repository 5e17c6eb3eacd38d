// An argument (no blocks) and a whole einsum result: nothing to follow.
// CHECK-LABEL: func.func @whole
// CHECK: %[[R:.*]] = doppler.reshape %{{.*}} : tensor<6x4xf32> -> tensor<24xf32>
// CHECK: doppler.reshape %{{.*}} : tensor<6x4xf32> -> tensor<2x3x4xf32>
func.func @whole(%x: tensor<6x4xf32>) -> (tensor<24xf32>, tensor<2x3x4xf32>) {
  %r = doppler.reshape %x : tensor<6x4xf32> -> tensor<24xf32>
  %q = doppler.einsum "ij->ij" join(relu) (%x) {doppler.parts = array<i64: 1, 1>}
      : (tensor<6x4xf32>) -> tensor<6x4xf32>
  %s = doppler.reshape %q : tensor<6x4xf32> -> tensor<2x3x4xf32>
  return %r, %s : tensor<24xf32>, tensor<2x3x4xf32>
}
