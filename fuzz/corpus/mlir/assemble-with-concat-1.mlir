// A grid of one block along a dimension adds no concat there.
func.func @assemble_1x1x2(%a: tensor<2x4x3xf32>, %b: tensor<2x4x3xf32>) -> tensor<2x4x6xf32> {
  %0 = doppler.assemble [1, 1, 2] (%a, %b) : tensor<2x4x3xf32>, tensor<2x4x3xf32> -> tensor<2x4x6xf32>
  return %0 : tensor<2x4x6xf32>
}
