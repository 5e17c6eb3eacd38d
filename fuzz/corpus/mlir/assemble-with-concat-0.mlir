// assemble with assemble-with-concat (what --export-iree uses): nested
// tensor.concat ops, the innermost grid dimension first.

func.func @assemble_2x2(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>, %c: tensor<4x3xf32>, %d: tensor<4x5xf32>) -> tensor<6x8xf32> {
  %0 = doppler.assemble [2, 2] (%a, %b, %c, %d) {doppler.device = #doppler.device<1>}
      : tensor<2x3xf32>, tensor<2x5xf32>, tensor<4x3xf32>, tensor<4x5xf32> -> tensor<6x8xf32>
  return %0 : tensor<6x8xf32>
}
