// convert-linalg-to-doppler on tensor ops with static shapes:
// tensor.extract_slice (also rank-reducing), tensor.insert_slice (into an
// argument, a fill and tensor.empty), tensor.pad with a constant,
// tensor.concat, and the tensor.expand_shape / tensor.collapse_shape that
// only add or drop unit dims; reshapes that regroup extents become blocks.
// Nothing is left, so the pass makes no remark:

// tensor.extract_slice
func.func @extract_slice(%x: tensor<8x16xf32>) -> (tensor<4x8xf32>, tensor<8xf32>) {
  %0 = tensor.extract_slice %x[2, 4] [4, 8] [1, 1] : tensor<8x16xf32> to tensor<4x8xf32>
  %1 = tensor.extract_slice %x[3, 8] [1, 8] [1, 1] : tensor<8x16xf32> to tensor<8xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<8xf32>
}
