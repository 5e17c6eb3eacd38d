// Reproducer of an IREE 3.13 multi-device failure (issue 34 item 6): a 2x2
// concatenation on device 0 whose only reader is a move to device 1, beside
// one that stays on device 0 (what --export-iree wrote for the LLaMA block
// at d_model 512 placed on 2 devices, reduced to two inputs).
//
//   iree-compile concat-moved.mlir --iree-hal-local-target-device-backends=llvm-cpu
//     -> segfault in iree-hal-outline-memoize-regions
//   ... --iree-hal-memoization=false
//     -> error: 'hal.executable.lookup' op analysis failed on device;
//        currently analysis must succeed with a single device
//
// IREE lowers a concatenation to an empty tensor and one copy into it per
// operand. Its affinity analysis places an op without tensor operands (the
// empty tensor) where its consumers are, a flow.tensor.transfer counting as
// a consumer on its target: the moved one's empty tensor lands on device 1
// while the operands copied into it are on device 0, so the copies run on no
// single device and their execution region gets none. The HAL conversion
// then takes the device as `hal.devices.get 0`, which its device analysis
// cannot tie to a device global: memoization indexes the empty list of
// candidate devices (the segfault); without it, the executable lookup of
// the strided copy dispatch reports the error above.
//
// Smaller still, `tensor.concat dim(0)` of the two inputs, moved to device 1
// and returned, segfaults the same way (it has no dispatch, so it compiles
// with --iree-hal-memoization=false). concat-moved-strided.mlir fails with
// IREE's third message; concat-moved-pinned.mlir is what --export-iree
// writes instead, which compiles and runs.
module {
  util.global private @__device_0 = #hal.device.alias<"local"[0]> : !hal.device
  util.global private @__device_1 = #hal.device.alias<"local"[1]> : !hal.device
  func.func @concat_moved(
      %a: tensor<2x4xf32> {iree.abi.affinity = #hal.device.affinity<@__device_0>},
      %b: tensor<2x4xf32> {iree.abi.affinity = #hal.device.affinity<@__device_0>})
      -> (tensor<4x8xf32> {iree.abi.affinity = #hal.device.affinity<@__device_1>},
          tensor<4x8xf32> {iree.abi.affinity = #hal.device.affinity<@__device_0>}) {
    %x = tensor.concat dim(1) %a, %b : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x8xf32>
    %y = tensor.concat dim(1) %b, %a : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x8xf32>
    %z = tensor.concat dim(0) %x, %y : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<4x8xf32>
    %moved = flow.tensor.transfer %z : tensor<4x8xf32> to #hal.device.affinity<@__device_1>
    %stays = tensor.concat dim(0) %y, %x : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<4x8xf32>
    return %moved, %stays : tensor<4x8xf32>, tensor<4x8xf32>
  }
}
