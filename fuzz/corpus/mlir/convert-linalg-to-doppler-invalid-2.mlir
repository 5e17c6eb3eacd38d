func.func @conv(%x: tensor<8x8xf32>, %k: tensor<3x3xf32>, %o: tensor<6x6xf32>) -> tensor<6x6xf32> {
  %0 = linalg.conv_2d ins(%x, %k : tensor<8x8xf32>, tensor<3x3xf32>) outs(%o : tensor<6x6xf32>) -> tensor<6x6xf32>
  return %0 : tensor<6x6xf32>
}
