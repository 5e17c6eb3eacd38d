// Reshapes that split or merge extents (head split/merge) become slices,
// one identity einsum per block and an assemble; checked numerically
// against hand-written doppler (Inputs/reshapes-reference.mlir) and by
// round trips (a split then the merge back is the identity).
// RUN: doppler-opt %s --convert-linalg-to-doppler=full=true -o %t.mlir
// RUN: FileCheck %s < %t.mlir
// RUN: FileCheck %s --check-prefix=OPS < %t.mlir
// OPS-NOT: {{linalg\.|tensor\.}}
// RUN: doppler-interpret %t.mlir --function=split --compare %S/Inputs/reshapes-reference.mlir --tolerance 0 | FileCheck %s --check-prefix=NUM
// RUN: doppler-interpret %t.mlir --function=merge --compare %S/Inputs/reshapes-reference.mlir --tolerance 0 | FileCheck %s --check-prefix=NUM
// RUN: doppler-interpret %t.mlir --function=heads_round_trip --compare %S/Inputs/reshapes-reference.mlir --tolerance 0 | FileCheck %s --check-prefix=NUM
// RUN: doppler-interpret %t.mlir --function=batch_heads_round_trip --compare %S/Inputs/reshapes-reference.mlir --tolerance 0 | FileCheck %s --check-prefix=NUM
// NUM: max rel-error 0 <= tolerance 0: ok

// x[i, c] -> y[i, h, d] with c = 3h + d: one block per head.
// CHECK-LABEL: func.func @split(
// CHECK-DAG: %[[Z:.*]] = doppler.fill -0.0 : tensor<1xf32>
// CHECK-DAG: %[[S0:.*]] = doppler.slice %arg0 [0, 0] : tensor<2x6xf32> to tensor<2x3xf32>
// CHECK-DAG: %[[B0:.*]] = doppler.einsum "ik,j->ijk" join(add) (%[[S0]], %[[Z]])
// CHECK-DAG: %[[S1:.*]] = doppler.slice %arg0 [0, 3] : tensor<2x6xf32> to tensor<2x3xf32>
// CHECK-DAG: %[[B1:.*]] = doppler.einsum "ik,j->ijk" join(add) (%[[S1]], %[[Z]])
// CHECK: doppler.assemble [1, 2, 1] (%[[B0]], %[[B1]])
func.func @split(%x: tensor<2x6xf32>) -> tensor<2x2x3xf32> {
  %0 = tensor.expand_shape %x [[0], [1, 2]] output_shape [2, 2, 3] : tensor<2x6xf32> into tensor<2x2x3xf32>
  return %0 : tensor<2x2x3xf32>
}

// x[a, b, k] -> y[3a + b, k]: one block per a (the rows b of one a are
// contiguous in y).
// CHECK-LABEL: func.func @merge(
// CHECK: doppler.slice %arg0 [0, 0, 0] : tensor<2x3x4xf32> to tensor<1x3x4xf32>
// CHECK: doppler.einsum "ijk->jk" join(identity) agg(mul)
// CHECK: doppler.slice %arg0 [1, 0, 0] : tensor<2x3x4xf32> to tensor<1x3x4xf32>
// CHECK: doppler.assemble [2, 1]
func.func @merge(%x: tensor<2x3x4xf32>) -> tensor<6x4xf32> {
  %0 = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
  return %0 : tensor<6x4xf32>
}

// [B, T, H*D] -> [B, T, H, D] -> (a transpose, elementwise work, back) ->
// [B, T, H*D]: the LLaMA/GPT head split and merge.
// CHECK-LABEL: func.func @heads_round_trip(
func.func @heads_round_trip(%x: tensor<2x5x12xf32>) -> tensor<2x5x12xf32> {
  %0 = tensor.expand_shape %x [[0], [1], [2, 3]] output_shape [2, 5, 4, 3] : tensor<2x5x12xf32> into tensor<2x5x4x3xf32>
  %e = tensor.empty() : tensor<2x4x5x3xf32>
  %1 = linalg.transpose ins(%0 : tensor<2x5x4x3xf32>) outs(%e : tensor<2x4x5x3xf32>) permutation = [0, 2, 1, 3]
  %2 = linalg.exp ins(%1 : tensor<2x4x5x3xf32>) outs(%e : tensor<2x4x5x3xf32>) -> tensor<2x4x5x3xf32>
  %e2 = tensor.empty() : tensor<2x5x4x3xf32>
  %3 = linalg.transpose ins(%2 : tensor<2x4x5x3xf32>) outs(%e2 : tensor<2x5x4x3xf32>) permutation = [0, 2, 1, 3]
  %4 = tensor.collapse_shape %3 [[0], [1], [2, 3]] : tensor<2x5x4x3xf32> into tensor<2x5x12xf32>
  return %4 : tensor<2x5x12xf32>
}

// [B, H, T, D] -> [B*H, T, D] -> back, with three groups split at once.
// CHECK-LABEL: func.func @batch_heads_round_trip(
func.func @batch_heads_round_trip(%x: tensor<2x3x4x5xf32>) -> (tensor<2x3x4x5xf32>, tensor<6x20xf32>) {
  %0 = tensor.collapse_shape %x [[0, 1], [2], [3]] : tensor<2x3x4x5xf32> into tensor<6x4x5xf32>
  %1 = tensor.expand_shape %0 [[0, 1], [2], [3]] output_shape [2, 3, 4, 5] : tensor<6x4x5xf32> into tensor<2x3x4x5xf32>
  %2 = tensor.collapse_shape %x [[0, 1], [2, 3]] : tensor<2x3x4x5xf32> into tensor<6x20xf32>
  return %1, %2 : tensor<2x3x4x5xf32>, tensor<6x20xf32>
}
