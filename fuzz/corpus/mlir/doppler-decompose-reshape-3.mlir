// Unit dims do not count: [4, 1, 8] cut along its last dim drops the unit
// dim block by block.
// CHECK-LABEL: func.func @drop_unit
// CHECK-COUNT-2: doppler.reshape %{{.*}} : tensor<4x1x4xf32> -> tensor<4x4xf32>
// CHECK-NEXT: doppler.assemble [1, 2]
func.func @drop_unit(%x: tensor<4x1x8xf32>) -> tensor<4x8xf32> {
  %q = doppler.einsum "iuj->iuj" join(relu) (%x) {doppler.parts = array<i64: 1, 1, 2>}
      : (tensor<4x1x8xf32>) -> tensor<4x1x8xf32>
  %f = doppler.reshape %q : tensor<4x1x8xf32> -> tensor<4x8xf32>
  return %f : tensor<4x8xf32>
}
