// tensor.concat
func.func @concat(%a: tensor<4x8xf32>, %b: tensor<4x4xf32>) -> tensor<4x12xf32> {
  %0 = tensor.concat dim(1) %a, %b : (tensor<4x8xf32>, tensor<4x4xf32>) -> tensor<4x12xf32>
  return %0 : tensor<4x12xf32>
}
