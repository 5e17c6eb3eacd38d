// concat-moved.mlir and concat-moved-strided.mlir as --export-iree writes
// every doppler.assemble: the empty tensor the blocks are copied into is
// first moved to the assemble's own device. That move is its only consumer,
// so IREE 3.13 places it, and every copy into it, on device 0; the result
// then moves to device 1. Compiles and runs (assemble-moved.test).
module {
  util.global private @__device_0 = #hal.device.alias<"local"[0]> : !hal.device
  util.global private @__device_1 = #hal.device.alias<"local"[1]> : !hal.device
  func.func @concat_moved(
      %a: tensor<2x4xf32> {iree.abi.affinity = #hal.device.affinity<@__device_0>},
      %b: tensor<2x4xf32> {iree.abi.affinity = #hal.device.affinity<@__device_0>})
      -> (tensor<4x8xf32> {iree.abi.affinity = #hal.device.affinity<@__device_1>},
          tensor<4x8xf32> {iree.abi.affinity = #hal.device.affinity<@__device_0>},
          tensor<2x8xf32> {iree.abi.affinity = #hal.device.affinity<@__device_1>}) {
    %e0 = tensor.empty() : tensor<4x8xf32>
    %p0 = flow.tensor.transfer %e0 : tensor<4x8xf32> to #hal.device.affinity<@__device_0>
    %z0 = tensor.insert_slice %a into %p0[0, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<4x8xf32>
    %z1 = tensor.insert_slice %b into %z0[0, 4] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<4x8xf32>
    %z2 = tensor.insert_slice %b into %z1[2, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<4x8xf32>
    %z3 = tensor.insert_slice %a into %z2[2, 4] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<4x8xf32>
    %moved = flow.tensor.transfer %z3 : tensor<4x8xf32> to #hal.device.affinity<@__device_1>
    %e1 = tensor.empty() : tensor<4x8xf32>
    %p1 = flow.tensor.transfer %e1 : tensor<4x8xf32> to #hal.device.affinity<@__device_0>
    %u0 = tensor.insert_slice %b into %p1[0, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<4x8xf32>
    %u1 = tensor.insert_slice %a into %u0[0, 4] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<4x8xf32>
    %u2 = tensor.insert_slice %a into %u1[2, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<4x8xf32>
    %u3 = tensor.insert_slice %b into %u2[2, 4] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<4x8xf32>
    %e2 = tensor.empty() : tensor<2x8xf32>
    %p2 = flow.tensor.transfer %e2 : tensor<2x8xf32> to #hal.device.affinity<@__device_0>
    %s0 = tensor.insert_slice %a into %p2[0, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<2x8xf32>
    %s1 = tensor.insert_slice %b into %s0[0, 4] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<2x8xf32>
    %strided = flow.tensor.transfer %s1 : tensor<2x8xf32> to #hal.device.affinity<@__device_1>
    return %moved, %u3, %strided : tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x8xf32>
  }
}
