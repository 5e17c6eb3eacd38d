// A flatten of a value cut along the batch and the channels: the batch
// blocks are row blocks of the result.
// CHECK-LABEL: func.func @flatten_batch
// CHECK-COUNT-4: doppler.reshape %{{.*}} : tensor<2x8x16xf32> -> tensor<16x16xf32>
// CHECK-NEXT: %[[F:.*]] = doppler.assemble [2, 2]
// CHECK-NEXT: return %[[F]]
func.func @flatten_batch(%x: tensor<4x8x32xf32>) -> tensor<32x32xf32> {
  %q = doppler.einsum "btc->btc" join(relu) (%x) {doppler.parts = array<i64: 2, 1, 2>}
      : (tensor<4x8x32xf32>) -> tensor<4x8x32xf32>
  %f = doppler.reshape %q : tensor<4x8x32xf32> -> tensor<32x32xf32>
  return %f : tensor<32x32xf32>
}
