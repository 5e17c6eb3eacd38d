// Cut along the channels at multiples of the head size: a reshape per head.
// CHECK-LABEL: func.func @split_channels
// CHECK-COUNT-4: doppler.reshape %{{.*}} : tensor<4x8x8xf32> -> tensor<4x8x1x8xf32>
// CHECK-NEXT: %[[H:.*]] = doppler.assemble [1, 1, 4, 1]
// CHECK-NEXT: return %[[H]]
func.func @split_channels(%x: tensor<4x8x32xf32>) -> tensor<4x8x4x8xf32> {
  %q = doppler.einsum "btc->btc" join(relu) (%x) {doppler.parts = array<i64: 1, 1, 4>}
      : (tensor<4x8x32xf32>) -> tensor<4x8x32xf32>
  %h = doppler.reshape %q : tensor<4x8x32xf32> -> tensor<4x8x4x8xf32>
  return %h : tensor<4x8x4x8xf32>
}
