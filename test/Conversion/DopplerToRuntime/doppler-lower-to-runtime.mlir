// RUN: doppler-opt %s --split-input-file --doppler-lower-to-runtime | FileCheck %s
// RUN: doppler-opt %s --split-input-file --doppler-lower-to-runtime="entry=main devices=3 seed=4" | FileCheck %s --check-prefix=ENTRY
// RUN: doppler-opt %s --split-input-file --doppler-lower-to-runtime="inputs=first-user" | FileCheck %s --check-prefix=FIRST
// The output is pure LLVM dialect and parses again.
// RUN: doppler-opt %s --split-input-file --doppler-lower-to-runtime="entry=main" | doppler-opt --split-input-file -o /dev/null

// Every task is one checked C API call, in body order; %a is read on two
// devices and becomes two graph inputs bound to argument 0.
// CHECK-LABEL: llvm.func @doppler_build_f(%arg0: !llvm.ptr) -> i32
// CHECK: llvm.call @dopplerRtGraphSetFunction(%arg0, {{.*}})
// CHECK: llvm.call @dopplerRtGraphAddArgument
// CHECK: llvm.call @dopplerRtGraphAddArgument
// CHECK: %[[A0:.*]] = llvm.call @dopplerRtGraphAddInput(%arg0, {{.*}}) : (!llvm.ptr, i32, i32, !llvm.ptr, i32) -> i64
// CHECK: llvm.icmp "slt" %[[A0]]
// CHECK: llvm.call @dopplerRtGraphBindArgument(%arg0, %[[A0]], {{.*}})
// CHECK: llvm.call @dopplerRtGraphAddSlice(%arg0, {{.*}}, %[[A0]],
// CHECK: llvm.call @dopplerRtGraphAddInput
// CHECK: llvm.call @dopplerRtGraphBindArgument
// CHECK: llvm.call @dopplerRtGraphAddSlice
// CHECK: llvm.call @dopplerRtGraphAddEinsum
// CHECK: llvm.call @dopplerRtGraphAddTransfer
// CHECK: llvm.call @dopplerRtGraphAddFill
// CHECK: llvm.call @dopplerRtGraphAddAssemble
// CHECK: llvm.call @dopplerRtGraphSetPriority
// CHECK: llvm.call @dopplerRtGraphAddResult
// CHECK: llvm.return
// CHECK-NOT: func.func
// CHECK-NOT: doppler.

// ENTRY-LABEL: llvm.func @main() -> i32
// ENTRY: llvm.call @dopplerRtGraphCreate()
// ENTRY: llvm.call @doppler_build_f(
// ENTRY: llvm.mlir.constant(3 : i32)
// ENTRY: llvm.mlir.constant(4 : i64)
// ENTRY: llvm.call @dopplerRtGraphRunSeeded(

// With first-user inputs %a is one input moved to device 1 by a transfer.
// FIRST-LABEL: llvm.func @doppler_build_f
// FIRST-COUNT-2: llvm.call @dopplerRtGraphAddInput
// FIRST-NOT: llvm.call @dopplerRtGraphAddInput
// FIRST: llvm.call @dopplerRtGraphAddTransfer
func.func @f(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32>
    attributes {doppler.makespan = 12.5 : f64} {
  %top = doppler.slice %a [0, 0] {doppler.device = #doppler.device<0>} : tensor<4x4xf32> to tensor<2x4xf32>
  %bottom = doppler.slice %a [2, 0] {doppler.device = #doppler.device<1>} : tensor<4x4xf32> to tensor<2x4xf32>
  %m = doppler.einsum "ij,jk->ik" join(mul) agg(add) (%bottom, %b) {doppler.device = #doppler.device<1>} : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %moved = doppler.transfer %m from <1> to <0> {doppler.device = #doppler.device<0>} : tensor<2x4xf32>
  %zeros = doppler.fill 0.0 {doppler.device = #doppler.device<0>} : tensor<2x4xf32>
  %whole = doppler.assemble [2, 1] (%top, %moved) {doppler.device = #doppler.device<0>} : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<4x4xf32>
  %s = doppler.einsum "ij->ij" join(scale, 0.5) (%whole) {doppler.device = #doppler.device<0>, doppler.start = 3.0 : f64} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %s : tensor<4x4xf32>
}

// -----

// A function that only returns its argument still lowers: the argument
// becomes an input on device 0 and the output.
// CHECK-LABEL: llvm.func @doppler_build_identity
// CHECK: llvm.call @dopplerRtGraphAddInput
// CHECK: llvm.call @dopplerRtGraphAddResult
// ENTRY-LABEL: llvm.func @main
// ENTRY: llvm.mlir.constant(3 : i32)
func.func @identity(%a: tensor<3xf32>) -> tensor<3xf32> {
  return %a : tensor<3xf32>
}
