// --export-iree moves every operand that lives elsewhere, not only
// doppler.transfer results: an argument read on two devices, a value used
// across devices without a transfer, and a placed op of another dialect.
// RUN: doppler-translate --export-iree %s | FileCheck %s
// A device kind that is not a name is refused.
// RUN: not doppler-translate --export-iree --export-iree-device="no such" %s 2>&1 | FileCheck %s --check-prefix=KIND

func.func @cross(%x: tensor<8xf32>) -> tensor<4xf32> {
  %0 = doppler.einsum "i->i" join(exp) (%x) {doppler.device = #doppler.device<1>} : (tensor<8xf32>) -> tensor<8xf32>
  %1 = doppler.einsum "i,i->i" join(add) (%x, %0) {doppler.device = #doppler.device<0>} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %2 = doppler.slice %1 [0] {doppler.device = #doppler.device<2>} : tensor<8xf32> to tensor<4xf32>
  %3 = doppler.slice %1 [4] {doppler.device = #doppler.device<2>} : tensor<8xf32> to tensor<4xf32>
  %4 = linalg.add {doppler.device = #doppler.device<2>} ins(%2, %3 : tensor<4xf32>, tensor<4xf32>) outs(%2 : tensor<4xf32>) -> tensor<4xf32>
  return %4 : tensor<4xf32>
}

// CHECK: 3 "local" device(s)
// CHECK-LABEL: func.func @cross
// CHECK-SAME: (%[[X:[^:]*]]: tensor<8xf32> {iree.abi.affinity = #hal.device.affinity<@__device_1>}
// CHECK-SAME: -> (tensor<4xf32> {iree.abi.affinity = #hal.device.affinity<@__device_2>})
// CHECK: %[[E:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<8xf32>)
// CHECK: math.exp
// CHECK: %[[X0:.*]] = "flow.tensor.transfer"(%[[X]]) {target = #hal.device.affinity<@__device_0>}
// CHECK: %[[E0:.*]] = "flow.tensor.transfer"(%[[E]]) {target = #hal.device.affinity<@__device_0>}
// CHECK: %[[S:.*]] = linalg.generic {{.*}} ins(%[[X0]], %[[E0]] : tensor<8xf32>, tensor<8xf32>)
// CHECK: %[[S2:.*]] = "flow.tensor.transfer"(%[[S]]) {target = #hal.device.affinity<@__device_2>}
// The second slice reuses the transfer made for the first.
// CHECK-NEXT: %[[SL:.*]] = tensor.extract_slice %[[S2]][0] [4] [1]
// CHECK-NEXT: %[[SR:.*]] = tensor.extract_slice %[[S2]][4] [4] [1]
// linalg.add is generalised (iree-compile rejects it).
// CHECK-NEXT: %[[R:.*]] = linalg.generic {{.*}} ins(%[[SL]], %[[SR]] : tensor<4xf32>, tensor<4xf32>) outs(%[[SL]] : tensor<4xf32>)
// CHECK: arith.addf
// CHECK: return %[[R]]

// KIND: error: --export-iree: device kind 'no such' is not a HAL device name (e.g. local, cuda, hip, vulkan)
