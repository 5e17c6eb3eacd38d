// convert-linalg-to-doppler on the named linalg ops: contractions (matmul,
// its transposed forms through indexing_maps, batch_matmul,
// batch_reduce_matmul, matvec, vecmat, dot, contract), transpose, broadcast,
// copy, fill, reduce, the named elementwise ops, linalg.elementwise and
// linalg.softmax.

// linalg.matmul with a zero-filled init: the init is dropped.
func.func @matmul(%a: tensor<8x16xf32>, %b: tensor<16x32xf32>) -> tensor<8x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  %r = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x32xf32>)
                     outs(%init : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %r : tensor<8x32xf32>
}
