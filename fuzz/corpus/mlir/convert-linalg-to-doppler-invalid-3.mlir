func.func @types(%x: tensor<8xi32>, %y: tensor<?xf32>) -> (tensor<8xi32>, tensor<?xf32>) {
  %0 = linalg.add ins(%x, %x : tensor<8xi32>, tensor<8xi32>) outs(%x : tensor<8xi32>) -> tensor<8xi32>
  %1 = linalg.exp ins(%y : tensor<?xf32>) outs(%y : tensor<?xf32>) -> tensor<?xf32>
  return %0, %1 : tensor<8xi32>, tensor<?xf32>
}
