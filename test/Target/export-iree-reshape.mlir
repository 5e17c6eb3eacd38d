// doppler-translate --export-iree: a placed doppler.reshape is a
// tensor.expand_shape (or collapse_shape) named after the op and its
// device; a reshape read on another device is moved there like any value.
// RUN: doppler-translate --export-iree %s | FileCheck %s

func.func @heads(%x: tensor<2x8x32xf32>) -> tensor<2x8x4x8xf32> {
  %0 = doppler.einsum "btc->btc" join(exp) (%x) {doppler.device = #doppler.device<0>}
      : (tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
  %1 = doppler.reshape %0 {doppler.device = #doppler.device<0>} : tensor<2x8x32xf32> -> tensor<2x8x4x8xf32>
  %2 = doppler.transfer %1 from <0> to <1> : tensor<2x8x4x8xf32>
  %3 = doppler.einsum "bthe->bthe" join(tanh) (%2) {doppler.device = #doppler.device<1>}
      : (tensor<2x8x4x8xf32>) -> tensor<2x8x4x8xf32>
  return %3 : tensor<2x8x4x8xf32>
}

// CHECK: %[[E:.*]] = linalg.generic
// CHECK: %[[R:.*]] = tensor.expand_shape %[[E]] {{\[}}[0], [1], [2, 3]] output_shape [2, 8, 4, 8] : tensor<2x8x32xf32> into tensor<2x8x4x8xf32> loc(#[[L1:loc[0-9]+]])
// CHECK: "flow.tensor.transfer"(%[[R]]) {target = #hal.device.affinity<@__device_1>}
// CHECK-NOT: doppler.reshape
// CHECK: #[[L1]] = loc("reshape_1@d0"(#{{loc[0-9]+}}))
