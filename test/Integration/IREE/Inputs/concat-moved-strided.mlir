// One strided concatenation (along dim 1) on device 0 moved to device 1:
// the copies become a copy dispatch on no device, as in concat-moved.mlir,
// and IREE 3.13 fails with "failed to legalize operation 'stream.executable'
// that was explicitly marked illegal" (with or without memoization; the
// message docs/IREE.md recorded for the LLaMA block at seq 128, d_model 256
// on 2 devices).
module {
  util.global private @__device_0 = #hal.device.alias<"local"[0]> : !hal.device
  util.global private @__device_1 = #hal.device.alias<"local"[1]> : !hal.device
  func.func @concat_moved(
      %a: tensor<2x4xf32> {iree.abi.affinity = #hal.device.affinity<@__device_0>},
      %b: tensor<2x4xf32> {iree.abi.affinity = #hal.device.affinity<@__device_0>})
      -> (tensor<2x8xf32> {iree.abi.affinity = #hal.device.affinity<@__device_1>}) {
    %x = tensor.concat dim(1) %a, %b : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x8xf32>
    %moved = flow.tensor.transfer %x : tensor<2x8xf32> to #hal.device.affinity<@__device_1>
    return %moved : tensor<2x8xf32>
  }
}
