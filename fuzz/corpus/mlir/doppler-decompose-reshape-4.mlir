// A flatten of a value cut along the sequence: a block is not a contiguous
// run of rows, so the input is gathered, the reshape stays whole, and the
// consumer slices it.
// CHECK-LABEL: func.func @flatten_sequence
// CHECK: %[[Q:.*]] = doppler.assemble [1, 2, 1]
// CHECK-NEXT: %[[F:.*]] = doppler.reshape %[[Q]] : tensor<4x8x32xf32> -> tensor<32x32xf32>
// CHECK-NEXT: doppler.slice %[[F]] [0, 0] : tensor<32x32xf32> to tensor<16x32xf32>
// CHECK: doppler.slice %[[F]] [16, 0] : tensor<32x32xf32> to tensor<16x32xf32>
func.func @flatten_sequence(%x: tensor<4x8x32xf32>) -> tensor<32x32xf32> {
  %q = doppler.einsum "btc->btc" join(relu) (%x) {doppler.parts = array<i64: 1, 2, 1>}
      : (tensor<4x8x32xf32>) -> tensor<4x8x32xf32>
  %f = doppler.reshape %q : tensor<4x8x32xf32> -> tensor<32x32xf32>
  %e = doppler.einsum "ij->ij" join(exp) (%f) {doppler.parts = array<i64: 2, 1>}
      : (tensor<32x32xf32>) -> tensor<32x32xf32>
  return %e : tensor<32x32xf32>
}
