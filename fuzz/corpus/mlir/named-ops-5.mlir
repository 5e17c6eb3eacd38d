// linalg.batch_reduce_matmul: the batch is reduced too.
func.func @batch_reduce_matmul(%a: tensor<4x8x16xf32>, %b: tensor<4x16x32xf32>) -> tensor<8x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  %r = linalg.batch_reduce_matmul ins(%a, %b : tensor<4x8x16xf32>, tensor<4x16x32xf32>)
                                  outs(%init : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %r : tensor<8x32xf32>
}
