// tensor.expand_shape / tensor.collapse_shape of unit dims become einsums;
// the ones that regroup extents become blocks (reshapes.mlir has more).
func.func @reshapes(%x: tensor<8x16xf32>, %y: tensor<8x1x16x1xf32>) -> (tensor<1x8x16xf32>, tensor<8x16xf32>, tensor<8x2x8xf32>) {
  %0 = tensor.expand_shape %x [[0, 1], [2]] output_shape [1, 8, 16] : tensor<8x16xf32> into tensor<1x8x16xf32>
  %1 = tensor.collapse_shape %y [[0, 1], [2, 3]] : tensor<8x1x16x1xf32> into tensor<8x16xf32>
  %2 = tensor.expand_shape %x [[0], [1, 2]] output_shape [8, 2, 8] : tensor<8x16xf32> into tensor<8x2x8xf32>
  return %0, %1, %2 : tensor<1x8x16xf32>, tensor<8x16xf32>, tensor<8x2x8xf32>
}
