// doppler-translate --export-iree: a placed doppler.fused op is one
// linalg.generic (one dispatch), named after the op and its device.
// RUN: doppler-translate --export-iree %s | FileCheck %s

func.func @placed(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = doppler.fused "ij,j->ij" "add(in0, in1); gelu(s0)" (%x, %b) {doppler.device = #doppler.device<0>}
      : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = doppler.transfer %0 from <0> to <1> : tensor<4x8xf32>
  %2 = doppler.einsum "ij->ij" join(exp) (%1) {doppler.device = #doppler.device<1>}
      : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// CHECK-DAG: #[[L0:loc[0-9]+]] = loc("fused_0@d0"(#{{loc[0-9]+}}))
// CHECK: func.func @placed(%[[X:[^:]*]]: tensor<4x8xf32> {iree.abi.affinity = #hal.device.affinity<@__device_0>}
// CHECK: %[[F:.*]] = linalg.generic {{.*}} ins(%[[X]], %{{.*}} : tensor<4x8xf32>, tensor<8xf32>)
// CHECK: arith.addf
// CHECK: math.tanh
// CHECK: linalg.yield
// CHECK-NEXT: } -> tensor<4x8xf32> loc(#[[L0]])
// CHECK: "flow.tensor.transfer"(%[[F]]) {target = #hal.device.affinity<@__device_1>}
// CHECK-NOT: doppler.fused
