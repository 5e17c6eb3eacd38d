// tensor.insert_slice into an argument, into a fill and into tensor.empty.
func.func @insert_slice(%x: tensor<4x8xf32>, %d: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) {
  %0 = tensor.insert_slice %x into %d[2, 4] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<8x16xf32>
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %f = linalg.fill ins(%one : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %1 = tensor.insert_slice %x into %f[0, 8] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<8x16xf32>
  %2 = tensor.insert_slice %x into %e[4, 0] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<8x16xf32>
  return %0, %1, %2 : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>
}
