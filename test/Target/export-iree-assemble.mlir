// --export-iree writes doppler.assemble as a tensor.empty moved to the
// assemble's own device by a flow.tensor.transfer, then one
// tensor.insert_slice per block, after moving each block to that device.
// The move of the empty tensor pins it: IREE 3.13 places an op without
// tensor operands (the empty tensor) where its consumers are, a transfer
// counting as a consumer on its target, so an assemble whose result only
// leaves for another device had its copies on no single device (iree-compile
// segfaulted, docs/IREE.md; test/Integration/IREE/assemble-moved.test).
// RUN: doppler-translate --export-iree %s | FileCheck %s

func.func @assemble(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x16xf32> {
  %0 = doppler.einsum "ij->ij" join(exp) (%a) {doppler.device = #doppler.device<0>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = doppler.einsum "ij->ij" join(tanh) (%b) {doppler.device = #doppler.device<1>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = doppler.transfer %0 from <0> to <1> : tensor<4x8xf32>
  %3 = doppler.assemble [1, 2] (%2, %1) {doppler.device = #doppler.device<1>} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x16xf32>
  return %3 : tensor<4x16xf32>
}

// CHECK-LABEL: func.func @assemble
// CHECK: %[[E:.*]] = linalg.generic
// CHECK: math.exp
// CHECK: %[[T:.*]] = linalg.generic
// CHECK: math.tanh
// CHECK: %[[M:.*]] = "flow.tensor.transfer"(%[[E]]) {target = #hal.device.affinity<@__device_1>}
// CHECK-NEXT: %[[I:.*]] = tensor.empty() : tensor<4x16xf32> loc(#[[LA:loc[0-9]+]])
// CHECK-NEXT: %[[P:.*]] = "flow.tensor.transfer"(%[[I]]) {target = #hal.device.affinity<@__device_1>} : (tensor<4x16xf32>) -> tensor<4x16xf32> loc(#[[LA]])
// CHECK-NEXT: %[[S0:.*]] = tensor.insert_slice %[[M]] into %[[P]][0, 0] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<4x16xf32> loc(#[[LA]])
// CHECK-NEXT: %[[S1:.*]] = tensor.insert_slice %[[T]] into %[[S0]][0, 8] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<4x16xf32> loc(#[[LA]])
// CHECK-NEXT: return %[[S1]]
// CHECK-NOT: tensor.concat

// The pattern of the LLaMA block at d_model 512: a 2x2 assemble on device 0
// whose only reader is on device 1. Its empty tensor stays on device 0.
func.func @moved(%a: tensor<2x4xf32>, %b: tensor<2x4xf32>, %c: tensor<2x4xf32>, %d: tensor<2x4xf32>) -> tensor<4x8xf32> {
  %0 = doppler.assemble [2, 2] (%a, %b, %c, %d) {doppler.device = #doppler.device<0>} : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32> -> tensor<4x8xf32>
  %1 = doppler.transfer %0 from <0> to <1> : tensor<4x8xf32>
  %2 = doppler.einsum "ij->ij" join(exp) (%1) {doppler.device = #doppler.device<1>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @moved
// CHECK-SAME: -> (tensor<4x8xf32> {iree.abi.affinity = #hal.device.affinity<@__device_1>})
// CHECK: %[[I:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK-NEXT: %[[P:.*]] = "flow.tensor.transfer"(%[[I]]) {target = #hal.device.affinity<@__device_0>}
// CHECK-NEXT: %[[S0:.*]] = tensor.insert_slice %arg0 into %[[P]][0, 0] [2, 4]
// CHECK-NEXT: %[[S1:.*]] = tensor.insert_slice %arg1 into %[[S0]][0, 4] [2, 4]
// CHECK-NEXT: %[[S2:.*]] = tensor.insert_slice %arg2 into %[[S1]][2, 0] [2, 4]
// CHECK-NEXT: %[[S3:.*]] = tensor.insert_slice %arg3 into %[[S2]][2, 4] [2, 4]
// CHECK-NEXT: %[[M:.*]] = "flow.tensor.transfer"(%[[S3]]) {target = #hal.device.affinity<@__device_1>}
// CHECK: linalg.generic {{.*}} ins(%[[M]] : tensor<4x8xf32>)
// CHECK: math.exp

// CHECK: #[[LA]] = loc("assemble_3@d1"
