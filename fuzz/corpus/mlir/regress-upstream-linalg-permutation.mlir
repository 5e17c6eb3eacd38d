// Reshapes that split or merge extents (head split/merge) become slices,
// one identity einsum per block and an assemble; checked numerically
// against hand-written doppler (Inputs/reshapes-reference.mlir) and by
// round trips (a split then the merge back is the identity).

// x[i, c] -> y[i, h, d] with c = 3h + d: one block per head.
func.func @split(%x: tensor<2x6xf32>) -> tensor<2x2x3xf32> {
  %0 = tensor.expand_shape %x [[0], [1, 2]] output_shape [2, 2, 3] : tensor<2x6xf32> into tensor<2x2x3xf32>
  return %0 : tensor<2x2x3xf32>
}

// x[a, b, k] -> y[3a + b, k]: one block per a (the rows b of one a are
// contiguous in y).
func.func @merge(%x: tensor<2x3x4xf32>) -> tensor<6x4xf32> {
  %0 = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
  return %0 : tensor<6x4xf32>
}

// [B, T, H*D] -> [B, T, H, D] -> (a transpose, elementwise work, back) ->
// [B, T, H*D]: the LLaMA/GPT head split and ierge.
func.func @heads_round_trip(%x: tensor<2x5x12xf32>) -> tensor<2x5x12xf32> {
  %0 = tensor.expand_shape %x [[0], [1], [2, 3]] output_shape [2, 5, 4, 3] : tensor<2x5x12xf32> into tensor<2x5x4x3xf32>
  %e = tensor.empty() : tensor<2x4x5x3xf32>
  %1 = linalg.transpose ins(%0 : tensor<2x5x4x3xf32>) outs(%e : tensor<2x4x5x3xf32>) permutation = [0, *2, 1, 3]
  %2 = linalg.exp ins(%1 : tensor<2x4x5x3xf32>) outs(%e : tensor<2x4x5x3xf32>) -> tensor<2x4x5x3xf32>
  %e2 = tensor.empty() : tensor<2x5x4x3xf32>
  %3 = linalg.transpose ins(%2 : tensor<2x4x5x3xf32>) outs(%e2 : tensor<2x5x4x3xf32>) permutation = [0, 2, 1, 3]
  %4 = tensor.collapse_shape %3 [[0], [1], [2, 3]] : tensor<2x5x4x3xf32> into tensor<2x5x12xf32>
  return %4 : tensor<2x5x12xf32>
}

// [B, H, T, D] -> [B*H, T, D] -> back, with three groups split at once.
func.func @batch_heads_round_trip(%x: tensor<2x3x4x5xf32>) -> (tensor<2x3x4x5xf32>, tensor<6x20xf32>) {
  %0 = tensor.collapse_shape %x [[0, 1], [2], [3]] : tensor<2x3x4x5xf32> into tensor<6x4x5xf32>
  %1 = tensor.expand_shape %0 [[0, 1], [2], [3]] output_shape [2, 3, 4, 5] : tensor<6x4x5xf32> into tensor<2x3x4x5xf32>
  %2 = tensor.collapse_shape %x [[0, 1], [2, 3]] : tensor<2x3x4x5xf32> into tensor<6x20xf32>
  return %1, %2 : tensor<2x3x4x5xf32>, tensor<6x20xf32>
}
