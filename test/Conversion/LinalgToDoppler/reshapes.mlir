// tensor.expand_shape / collapse_shape / reshape on static shapes become
// one doppler.reshape each, whatever they do to the dims; checked
// numerically against hand-written doppler built from slices, einsums and
// assembles (Inputs/reshapes-reference.mlir) and by round trips (a split
// then the merge back is the identity).
// RUN: doppler-opt %s --convert-linalg-to-doppler=full=true -o %t.mlir
// RUN: FileCheck %s < %t.mlir
// RUN: FileCheck %s --check-prefix=OPS < %t.mlir
// OPS-NOT: {{linalg\.|tensor\.|arith\.}}
// RUN: doppler-interpret %t.mlir --function=split --compare %S/Inputs/reshapes-reference.mlir --tolerance 0 | FileCheck %s --check-prefix=NUM
// RUN: doppler-interpret %t.mlir --function=merge --compare %S/Inputs/reshapes-reference.mlir --tolerance 0 | FileCheck %s --check-prefix=NUM
// RUN: doppler-interpret %t.mlir --function=heads_round_trip --compare %S/Inputs/reshapes-reference.mlir --tolerance 0 | FileCheck %s --check-prefix=NUM
// RUN: doppler-interpret %t.mlir --function=batch_heads_round_trip --compare %S/Inputs/reshapes-reference.mlir --tolerance 0 | FileCheck %s --check-prefix=NUM
// NUM: max rel-error 0 <= tolerance 0: ok

// x[i, c] -> y[i, h, d] with c = 3h + d.
// CHECK-LABEL: func.func @split(
// CHECK-NEXT: %[[Y:.*]] = doppler.reshape %arg0 : tensor<2x6xf32> -> tensor<2x2x3xf32>
// CHECK-NEXT: return %[[Y]]
func.func @split(%x: tensor<2x6xf32>) -> tensor<2x2x3xf32> {
  %0 = tensor.expand_shape %x [[0], [1, 2]] output_shape [2, 2, 3] : tensor<2x6xf32> into tensor<2x2x3xf32>
  return %0 : tensor<2x2x3xf32>
}

// x[a, b, k] -> y[3a + b, k].
// CHECK-LABEL: func.func @merge(
// CHECK-NEXT: %[[Y:.*]] = doppler.reshape %arg0 : tensor<2x3x4xf32> -> tensor<6x4xf32>
// CHECK-NEXT: return %[[Y]]
func.func @merge(%x: tensor<2x3x4xf32>) -> tensor<6x4xf32> {
  %0 = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
  return %0 : tensor<6x4xf32>
}

// [B, T, H*D] -> [B, T, H, D] -> (a transpose, elementwise work, back) ->
// [B, T, H*D]: the LLaMA/GPT head split and merge.
// CHECK-LABEL: func.func @heads_round_trip(
// CHECK: doppler.reshape %arg0 : tensor<2x5x12xf32> -> tensor<2x5x4x3xf32>
// CHECK: doppler.reshape %{{.*}} : tensor<2x5x4x3xf32> -> tensor<2x5x12xf32>
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

// [B, H, T, D] -> [B*H, T, D] -> back, with three groups split at once:
// the reshape of a reshape folds, and the round trip is nothing.
// CHECK-LABEL: func.func @batch_heads_round_trip(
// CHECK-NEXT: %[[Y:.*]] = doppler.reshape %arg0 : tensor<2x3x4x5xf32> -> tensor<6x20xf32>
// CHECK-NEXT: return %arg0, %[[Y]]
func.func @batch_heads_round_trip(%x: tensor<2x3x4x5xf32>) -> (tensor<2x3x4x5xf32>, tensor<6x20xf32>) {
  %0 = tensor.collapse_shape %x [[0, 1], [2], [3]] : tensor<2x3x4x5xf32> into tensor<6x4x5xf32>
  %1 = tensor.expand_shape %0 [[0, 1], [2], [3]] output_shape [2, 3, 4, 5] : tensor<6x4x5xf32> into tensor<2x3x4x5xf32>
  %2 = tensor.collapse_shape %x [[0, 1], [2, 3]] : tensor<2x3x4x5xf32> into tensor<6x20xf32>
  return %1, %2 : tensor<2x3x4x5xf32>, tensor<6x20xf32>
}

// tensor.reshape with a static result (its shape operand only restates
// it), unit dims added and dropped, to and from rank 0, and integer
// tensors: all doppler.reshape (chains fold into one).
// CHECK-LABEL: func.func @others(
// CHECK-NEXT: %[[A:.*]] = doppler.reshape %arg0 : tensor<6x4xf32> -> tensor<4x6xf32>
// CHECK-NEXT: %[[C:.*]] = doppler.reshape %arg0 : tensor<6x4xf32> -> tensor<24xf32>
// CHECK-NEXT: %[[E:.*]] = doppler.reshape %arg1 : tensor<1x1xf32> -> tensor<1xf32>
// CHECK-NEXT: %[[F:.*]] = doppler.reshape %arg2 : tensor<2x3xi64> -> tensor<6xi64>
// CHECK-NEXT: return %[[A]], %[[C]], %[[E]], %[[F]]
func.func @others(%x: tensor<6x4xf32>, %s: tensor<1x1xf32>, %i: tensor<2x3xi64>)
    -> (tensor<4x6xf32>, tensor<24xf32>, tensor<1xf32>, tensor<6xi64>) {
  %shape = arith.constant dense<[4, 6]> : tensor<2xi64>
  %0 = tensor.reshape %x(%shape) : (tensor<6x4xf32>, tensor<2xi64>) -> tensor<4x6xf32>
  %1 = tensor.expand_shape %x [[0, 1], [2, 3]] output_shape [1, 6, 1, 4] : tensor<6x4xf32> into tensor<1x6x1x4xf32>
  %2 = tensor.collapse_shape %1 [[0, 1, 2, 3]] : tensor<1x6x1x4xf32> into tensor<24xf32>
  %3 = tensor.collapse_shape %s [] : tensor<1x1xf32> into tensor<f32>
  %4 = tensor.expand_shape %3 [] output_shape [1] : tensor<f32> into tensor<1xf32>
  %5 = tensor.collapse_shape %i [[0, 1]] : tensor<2x3xi64> into tensor<6xi64>
  return %0, %2, %4, %5 : tensor<4x6xf32>, tensor<24xf32>, tensor<1xf32>, tensor<6xi64>
}
