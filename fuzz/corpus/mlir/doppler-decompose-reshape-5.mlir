// Channels cut in 3 (11, 11, 10) do not fall on head boundaries (8): whole.
// CHECK-LABEL: func.func @split_uneven
// CHECK: %[[Q:.*]] = doppler.assemble [1, 1, 3]
// CHECK-NEXT: doppler.reshape %[[Q]] : tensor<4x8x32xf32> -> tensor<4x8x4x8xf32>
func.func @split_uneven(%x: tensor<4x8x32xf32>) -> tensor<4x8x4x8xf32> {
  %q = doppler.einsum "btc->btc" join(relu) (%x) {doppler.parts = array<i64: 1, 1, 3>}
      : (tensor<4x8x32xf32>) -> tensor<4x8x32xf32>
  %h = doppler.reshape %q : tensor<4x8x32xf32> -> tensor<4x8x4x8xf32>
  return %h : tensor<4x8x4x8xf32>
}
