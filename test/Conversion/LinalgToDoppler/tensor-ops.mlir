// convert-linalg-to-doppler on tensor ops with static shapes:
// tensor.extract_slice (also rank-reducing), tensor.insert_slice (into an
// argument, a fill and tensor.empty), tensor.pad with a constant,
// tensor.concat, and tensor.expand_shape / tensor.collapse_shape (one
// doppler.reshape each).
// RUN: doppler-opt %s --split-input-file --convert-linalg-to-doppler 2>/dev/null | FileCheck %s
// Nothing is left, so the pass makes no remark:
// RUN: doppler-opt %s --split-input-file --convert-linalg-to-doppler -o /dev/null 2>&1 | count 0

// tensor.extract_slice
// CHECK-LABEL: func.func @extract_slice(
// CHECK: %0 = doppler.slice %arg0 [2, 4] : tensor<8x16xf32> to tensor<4x8xf32>
// CHECK: %1 = doppler.slice %arg0 [3, 8] : tensor<8x16xf32> to tensor<1x8xf32>
// CHECK: %2 = doppler.reshape %1 : tensor<1x8xf32> -> tensor<8xf32>
// CHECK: return %0, %2 : tensor<4x8xf32>, tensor<8xf32>
// CHECK-NOT: linalg.
func.func @extract_slice(%x: tensor<8x16xf32>) -> (tensor<4x8xf32>, tensor<8xf32>) {
  %0 = tensor.extract_slice %x[2, 4] [4, 8] [1, 1] : tensor<8x16xf32> to tensor<4x8xf32>
  %1 = tensor.extract_slice %x[3, 8] [1, 8] [1, 1] : tensor<8x16xf32> to tensor<8xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<8xf32>
}

// -----

// tensor.insert_slice into an argument, into a fill and into tensor.empty.
// CHECK-LABEL: func.func @insert_slice(
// CHECK: %0 = doppler.slice %arg1 [0, 0] : tensor<8x16xf32> to tensor<2x4xf32>
// CHECK: %1 = doppler.slice %arg1 [0, 4] : tensor<8x16xf32> to tensor<2x8xf32>
// CHECK: %2 = doppler.slice %arg1 [0, 12] : tensor<8x16xf32> to tensor<2x4xf32>
// CHECK: %3 = doppler.slice %arg1 [2, 0] : tensor<8x16xf32> to tensor<4x4xf32>
// CHECK: %4 = doppler.slice %arg1 [2, 12] : tensor<8x16xf32> to tensor<4x4xf32>
// CHECK: %5 = doppler.slice %arg1 [6, 0] : tensor<8x16xf32> to tensor<2x4xf32>
// CHECK: %6 = doppler.slice %arg1 [6, 4] : tensor<8x16xf32> to tensor<2x8xf32>
// CHECK: %7 = doppler.slice %arg1 [6, 12] : tensor<8x16xf32> to tensor<2x4xf32>
// CHECK: %8 = doppler.assemble [3, 3] (%0, %1, %2, %3, %arg0, %4, %5, %6, %7) : tensor<2x4xf32>, tensor<2x8xf32>, tensor<2x4xf32>, tensor<4x4xf32>, tensor<4x8xf32>, tensor<4x4xf32>, tensor<2x4xf32>, tensor<2x8xf32>, tensor<2x4xf32> -> tensor<8x16xf32>
// CHECK: %9 = doppler.fill 1.0 : tensor<4x8xf32>
// CHECK: %10 = doppler.fill 1.0 : tensor<4x8xf32>
// CHECK: %11 = doppler.fill 1.0 : tensor<4x8xf32>
// CHECK: %12 = doppler.assemble [2, 2] (%9, %arg0, %10, %11) : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32> -> tensor<8x16xf32>
// CHECK: %13 = doppler.fill 0.0 : tensor<4x8xf32>
// CHECK: %14 = doppler.fill 0.0 : tensor<4x8xf32>
// CHECK: %15 = doppler.fill 0.0 : tensor<4x8xf32>
// CHECK: %16 = doppler.assemble [2, 2] (%13, %14, %arg0, %15) : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32> -> tensor<8x16xf32>
// CHECK: return %8, %12, %16 : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>
// CHECK-NOT: linalg.
func.func @insert_slice(%x: tensor<4x8xf32>, %d: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) {
  %0 = tensor.insert_slice %x into %d[2, 4] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<8x16xf32>
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %f = linalg.fill ins(%one : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %1 = tensor.insert_slice %x into %f[0, 8] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<8x16xf32>
  %2 = tensor.insert_slice %x into %e[4, 0] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<8x16xf32>
  return %0, %1, %2 : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// tensor.pad with a constant.
// CHECK-LABEL: func.func @pad(
// CHECK: %0 = doppler.fill 0.0 : tensor<1x8xf32>
// CHECK: %1 = doppler.fill 0.0 : tensor<1x1xf32>
// CHECK: %2 = doppler.fill 0.0 : tensor<4x1xf32>
// CHECK: %3 = doppler.fill 0.0 : tensor<1x8xf32>
// CHECK: %4 = doppler.fill 0.0 : tensor<1x1xf32>
// CHECK: %5 = doppler.assemble [3, 2] (%0, %1, %arg0, %2, %3, %4) : tensor<1x8xf32>, tensor<1x1xf32>, tensor<4x8xf32>, tensor<4x1xf32>, tensor<1x8xf32>, tensor<1x1xf32> -> tensor<6x9xf32>
// CHECK: return %5 : tensor<6x9xf32>
// CHECK-NOT: linalg.
func.func @pad(%x: tensor<4x8xf32>) -> tensor<6x9xf32> {
  %zero = arith.constant 0.0 : f32
  %0 = tensor.pad %x low[1, 0] high[1, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<4x8xf32> to tensor<6x9xf32>
  return %0 : tensor<6x9xf32>
}

// -----

// tensor.concat
// CHECK-LABEL: func.func @concat(
// CHECK: %0 = doppler.assemble [1, 2] (%arg0, %arg1) : tensor<4x8xf32>, tensor<4x4xf32> -> tensor<4x12xf32>
// CHECK: return %0 : tensor<4x12xf32>
// CHECK-NOT: linalg.
func.func @concat(%a: tensor<4x8xf32>, %b: tensor<4x4xf32>) -> tensor<4x12xf32> {
  %0 = tensor.concat dim(1) %a, %b : (tensor<4x8xf32>, tensor<4x4xf32>) -> tensor<4x12xf32>
  return %0 : tensor<4x12xf32>
}

// -----

// tensor.expand_shape / tensor.collapse_shape, of unit dims or regrouping
// extents, become one doppler.reshape each (reshapes.mlir has more).
// CHECK-LABEL: func.func @reshapes(
// CHECK: %0 = doppler.reshape %arg0 : tensor<8x16xf32> -> tensor<1x8x16xf32>
// CHECK: %1 = doppler.reshape %arg1 : tensor<8x1x16x1xf32> -> tensor<8x16xf32>
// CHECK: %2 = doppler.reshape %arg0 : tensor<8x16xf32> -> tensor<8x2x8xf32>
// CHECK: return %0, %1, %2 : tensor<1x8x16xf32>, tensor<8x16xf32>, tensor<8x2x8xf32>
// CHECK-NOT: linalg.
func.func @reshapes(%x: tensor<8x16xf32>, %y: tensor<8x1x16x1xf32>) -> (tensor<1x8x16xf32>, tensor<8x16xf32>, tensor<8x2x8xf32>) {
  %0 = tensor.expand_shape %x [[0, 1], [2]] output_shape [1, 8, 16] : tensor<8x16xf32> into tensor<1x8x16xf32>
  %1 = tensor.collapse_shape %y [[0, 1], [2, 3]] : tensor<8x1x16x1xf32> into tensor<8x16xf32>
  %2 = tensor.expand_shape %x [[0], [1, 2]] output_shape [8, 2, 8] : tensor<8x16xf32> into tensor<8x2x8xf32>
  return %0, %1, %2 : tensor<1x8x16xf32>, tensor<8x16xf32>, tensor<8x2x8xf32>
}

// -----

// A rank-reducing insert_slice reshapes its source to the sizes it names,
// also for integer tensors.
// CHECK-LABEL: func.func @insert_reduced(
// CHECK: %[[R:.*]] = doppler.reshape %arg0 : tensor<8xi32> -> tensor<1x8xi32>
// CHECK: doppler.assemble [3, 1] (%{{.*}}, %[[R]], %{{.*}})
func.func @insert_reduced(%x: tensor<8xi32>, %d: tensor<4x8xi32>) -> tensor<4x8xi32> {
  %0 = tensor.insert_slice %x into %d[2, 0] [1, 8] [1, 1] : tensor<8xi32> into tensor<4x8xi32>
  return %0 : tensor<4x8xi32>
}
