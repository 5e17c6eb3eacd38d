// RUN: doppler-opt %s --doppler-lower-to-runtime | FileCheck %s
// Each call's axis operand is the constant just before it.
// RUN: doppler-opt %s --doppler-lower-to-runtime | grep -B1 "llvm.call @dopplerRtGraphAddGather" | FileCheck %s --check-prefix=AXIS
// doppler.gather is one checked dopplerRtGraphAddGather call (device, table,
// indices, axis); an i64 argument is declared with the runtime's code 4 and
// an i32 one with 3 (f32: 0).
// CHECK: llvm.func @dopplerRtGraphAddGather(!llvm.ptr, i32, i64, i64, i64) -> i64
// CHECK-LABEL: llvm.func @doppler_build_embed
// CHECK: %[[F32:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK: llvm.call @dopplerRtGraphAddArgument(%arg0, %[[F32]],
// CHECK: %[[I64:.*]] = llvm.mlir.constant(4 : i32) : i32
// CHECK: llvm.call @dopplerRtGraphAddArgument(%arg0, %[[I64]],
// CHECK: %[[I32:.*]] = llvm.mlir.constant(3 : i32) : i32
// CHECK: llvm.call @dopplerRtGraphAddArgument(%arg0, %[[I32]],
// CHECK: %[[W:.*]] = llvm.call @dopplerRtGraphAddInput
// CHECK: %[[IDS:.*]] = llvm.call @dopplerRtGraphAddInput
// CHECK: %[[E:.*]] = llvm.call @dopplerRtGraphAddGather(%arg0, %{{.*}}, %[[W]], %[[IDS]], %{{.*}})
// CHECK: llvm.icmp "slt" %[[E]]
// CHECK: %[[J:.*]] = llvm.call @dopplerRtGraphAddInput
// CHECK: llvm.call @dopplerRtGraphAddGather(%arg0, %{{.*}}, %[[E]], %[[J]], %{{.*}})
// CHECK-COUNT-2: llvm.call @dopplerRtGraphAddResult
// AXIS: %[[A0:.*]] = llvm.mlir.constant(0 : i64) : i64
// AXIS-NEXT: llvm.call @dopplerRtGraphAddGather({{.*}}, %[[A0]])
// AXIS: %[[A1:.*]] = llvm.mlir.constant(1 : i64) : i64
// AXIS-NEXT: llvm.call @dopplerRtGraphAddGather({{.*}}, %[[A1]])
func.func @embed(%w: tensor<10x4xf32>, %ids: tensor<2x3xi64>, %j: tensor<2xi32>) -> (tensor<2x2x4xf32>, tensor<2x3xi64>) {
  %e = doppler.gather %w[%ids] axis 0 {doppler.device = #doppler.device<0>} : tensor<10x4xf32>, tensor<2x3xi64> -> tensor<2x3x4xf32>
  %s = doppler.gather %e[%j] axis 1 {doppler.device = #doppler.device<0>} : tensor<2x3x4xf32>, tensor<2xi32> -> tensor<2x2x4xf32>
  return %s, %ids : tensor<2x2x4xf32>, tensor<2x3xi64>
}
