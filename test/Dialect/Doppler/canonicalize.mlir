// RUN: doppler-opt %s --canonicalize --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @identity_einsum
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: return %[[X]]
func.func @identity_einsum(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = doppler.einsum "ij->ij" join(identity) (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// A transposition and a relu are not copies.
// CHECK-LABEL: func.func @not_identity
// CHECK: doppler.einsum "ij->ji" join(identity)
// CHECK: doppler.einsum "ij->ij" join(relu)
func.func @not_identity(%x: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %0 = doppler.einsum "ij->ji" join(identity) (%x) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %1 = doppler.einsum "ij->ij" join(relu) (%x) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0, %1 : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// CHECK-LABEL: func.func @transfer_to_same_device
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT: %[[T:.*]] = doppler.transfer %[[X]] from <0> to <1>
// CHECK-NEXT: return %[[X]], %[[T]]
func.func @transfer_to_same_device(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = doppler.transfer %x from <2> to <2> : tensor<4xf32>
  %1 = doppler.transfer %x from <0> to <1> : tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @full_slice
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: return %[[X]]
func.func @full_slice(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = doppler.slice %x [0, 0] : tensor<4x8xf32> to tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @single_block_assemble
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: return %[[X]]
func.func @single_block_assemble(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = doppler.assemble [1, 1] (%x) : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Slicing a block back out of an assemble gives the block.
// CHECK-LABEL: func.func @slice_of_assemble
// CHECK-SAME: (%[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<2x5xf32>)
// CHECK-NEXT: return %[[B]]
func.func @slice_of_assemble(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %0 = doppler.assemble [1, 2] (%a, %b) : tensor<2x3xf32>, tensor<2x5xf32> -> tensor<2x8xf32>
  %1 = doppler.slice %0 [0, 3] : tensor<2x8xf32> to tensor<2x5xf32>
  return %1 : tensor<2x5xf32>
}

// -----

// A slice that straddles blocks stays.
// CHECK-LABEL: func.func @straddling_slice
// CHECK: doppler.assemble
// CHECK: doppler.slice %{{.*}} [0, 2]
func.func @straddling_slice(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) -> tensor<2x3xf32> {
  %0 = doppler.assemble [1, 2] (%a, %b) : tensor<2x3xf32>, tensor<2x5xf32> -> tensor<2x8xf32>
  %1 = doppler.slice %0 [0, 2] : tensor<2x8xf32> to tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}

// -----

// Re-assembling the exact tiling of one tensor gives it back.
// CHECK-LABEL: func.func @assemble_of_tiles
// CHECK-SAME: (%[[X:.*]]: tensor<4x6xf32>)
// CHECK-NEXT: return %[[X]]
func.func @assemble_of_tiles(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = doppler.slice %x [0, 0] : tensor<4x6xf32> to tensor<2x6xf32>
  %1 = doppler.slice %x [2, 0] : tensor<4x6xf32> to tensor<2x6xf32>
  %2 = doppler.assemble [2, 1] (%0, %1) : tensor<2x6xf32>, tensor<2x6xf32> -> tensor<4x6xf32>
  return %2 : tensor<4x6xf32>
}

// -----

// Tiles in the wrong order are a permutation, not the original.
// CHECK-LABEL: func.func @assemble_of_swapped_tiles
// CHECK: doppler.assemble
func.func @assemble_of_swapped_tiles(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = doppler.slice %x [0, 0] : tensor<4x6xf32> to tensor<2x6xf32>
  %1 = doppler.slice %x [2, 0] : tensor<4x6xf32> to tensor<2x6xf32>
  %2 = doppler.assemble [2, 1] (%1, %0) : tensor<2x6xf32>, tensor<2x6xf32> -> tensor<4x6xf32>
  return %2 : tensor<4x6xf32>
}


// -----

// A reshape to its own type is its input; a reshape of a reshape reads the
// first one's input, and back to the original shape is nothing.
// CHECK-LABEL: func.func @reshapes
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x32xf32>)
// CHECK-NEXT: %[[F:.*]] = doppler.reshape %[[X]] : tensor<2x8x32xf32> -> tensor<16x32xf32>
// CHECK-NEXT: return %[[X]], %[[F]]
func.func @reshapes(%x: tensor<2x8x32xf32>) -> (tensor<2x8x32xf32>, tensor<16x32xf32>) {
  %0 = doppler.reshape %x : tensor<2x8x32xf32> -> tensor<2x8x32xf32>
  %1 = doppler.reshape %0 : tensor<2x8x32xf32> -> tensor<2x8x4x8xf32>
  %2 = doppler.reshape %1 : tensor<2x8x4x8xf32> -> tensor<2x8x32xf32>
  %3 = doppler.reshape %1 : tensor<2x8x4x8xf32> -> tensor<16x32xf32>
  return %2, %3 : tensor<2x8x32xf32>, tensor<16x32xf32>
}
