// doppler-translate --export-iree: a placed function as IREE input.
// RUN: doppler-translate --export-iree %s | FileCheck %s
// The output parses again with MLIR 22 (flow/hal/util as unregistered ops).
// RUN: doppler-translate --export-iree %s | doppler-opt --allow-unregistered-dialect | FileCheck %s --check-prefix=REPARSE
// Another device kind: the text names it (no GPU here to run it).
// RUN: doppler-translate --export-iree --export-iree-device=cuda %s | FileCheck %s --check-prefix=CUDA
// More devices declared than used.
// RUN: doppler-translate --export-iree --export-iree-devices=4 %s | FileCheck %s --check-prefix=FOUR

func.func @placed(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>, %c: tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<2x4xf32>) {
  %0 = doppler.einsum "ij,jk->ik" join(mul) agg(add) (%a, %b) {doppler.device = #doppler.device<0>, doppler.start = 0.0 : f64}
      : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  %1 = doppler.transfer %0 from <0> to <1> : tensor<4x2xf32>
  %2 = doppler.einsum "ik,ik->ik" join(add) (%1, %c) {doppler.device = #doppler.device<1>}
      : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %3 = doppler.einsum "ik->ki" join(exp) (%0) {doppler.device = #doppler.device<0>}
      : (tensor<4x2xf32>) -> tensor<2x4xf32>
  return %2, %3 : tensor<4x2xf32>, tensor<2x4xf32>
}

// The devices, declared by the module itself.
// CHECK: // Exported by doppler-translate --export-iree for IREE 3.13: 2 "local" device(s).
// CHECK-DAG: #[[L0:loc[0-9]+]] = loc("einsum_0@d0"(#{{loc[0-9]+}}))
// CHECK-DAG: #[[L2:loc[0-9]+]] = loc("einsum_2@d1"(#{{loc[0-9]+}}))
// CHECK-DAG: #[[L3:loc[0-9]+]] = loc("einsum_3@d0"(#{{loc[0-9]+}}))
// CHECK: module {
// CHECK-NEXT: "util.global"() {initial_value = #hal.device.alias<"local"[0]>, sym_name = "__device_0", sym_visibility = "private", type = !hal.device} : () -> ()
// CHECK-NEXT: "util.global"() {initial_value = #hal.device.alias<"local"[1]>, sym_name = "__device_1", sym_visibility = "private", type = !hal.device} : () -> ()
// Arguments live on their first user's device, results on their producer's.
// CHECK-NEXT: func.func @placed(%[[A:[^:]*]]: tensor<4x8xf32> {iree.abi.affinity = #hal.device.affinity<@__device_0>}
// CHECK-SAME: %[[B:[^:]*]]: tensor<8x2xf32> {iree.abi.affinity = #hal.device.affinity<@__device_0>}
// CHECK-SAME: %[[C:[^:]*]]: tensor<4x2xf32> {iree.abi.affinity = #hal.device.affinity<@__device_1>}
// CHECK-SAME: -> (tensor<4x2xf32> {iree.abi.affinity = #hal.device.affinity<@__device_1>}, tensor<2x4xf32> {iree.abi.affinity = #hal.device.affinity<@__device_0>})
// The einsums are linalg.generic ops named after the Doppler op and its device.
// CHECK: %[[MM:.*]] = linalg.generic {{.*}} ins(%[[A]], %[[B]] :
// CHECK: } -> tensor<4x2xf32> loc(#[[L0]])
// The doppler.transfer is a flow.tensor.transfer to device 1.
// CHECK: %[[T:.*]] = "flow.tensor.transfer"(%[[MM]]) {target = #hal.device.affinity<@__device_1>} : (tensor<4x2xf32>) -> tensor<4x2xf32>
// CHECK: %[[ADD:.*]] = linalg.generic {{.*}} ins(%[[T]], %[[C]] :
// CHECK: } -> tensor<4x2xf32> loc(#[[L2]])
// CHECK: %[[EXP:.*]] = linalg.generic {{.*}} ins(%[[MM]] :
// CHECK: math.exp
// CHECK: } -> tensor<2x4xf32> loc(#[[L3]])
// CHECK: return %[[ADD]], %[[EXP]]
// No doppler attribute is left (IREE cannot parse them).
// CHECK-NOT: doppler.

// REPARSE: "util.global"() {initial_value = #hal.device.alias<"local"[0]>
// REPARSE: "flow.tensor.transfer"(%{{.*}}) {target = #hal.device.affinity<@__device_1>}

// CUDA: 2 "cuda" device(s)
// CUDA: "util.global"() {initial_value = #hal.device.alias<"cuda"[0]>, sym_name = "__device_0"
// CUDA-NEXT: "util.global"() {initial_value = #hal.device.alias<"cuda"[1]>, sym_name = "__device_1"
// CUDA-NOT: "util.global"

// FOUR: 4 "local" device(s)
// FOUR-COUNT-4: "util.global"()
// FOUR-NOT: "util.global"
