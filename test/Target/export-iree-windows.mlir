// doppler-translate --export-iree: placed doppler.conv and doppler.pool
// export like einsums. Every op a window op lowers to (the tensor.pad, the
// init, the convolution or pooling generalised to a linalg.generic with its
// sliding maps, a depthwise weight's collapse, an average's division) is
// named after the Doppler op and its device, scalar body included; a window
// op reading a value of another device gets it through one
// flow.tensor.transfer, placed before its pad.
// RUN: doppler-translate --export-iree %s | FileCheck %s

func.func @cnn(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>, %w2: tensor<4x1x3x3xf32>)
    -> (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) {
  %0 = doppler.conv %x, %w strides [1, 1] dilations [1, 1] padding [1, 1, 1, 1] groups 1 {doppler.device = #doppler.device<0>}
      : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  %1 = doppler.einsum "nchw,c->nchw" join(add) (%0, %b) {doppler.device = #doppler.device<0>}
      : (tensor<1x4x8x8xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  %2 = doppler.pool max %1 kernel [3, 3] strides [2, 2] dilations [1, 1] padding [1, 1, 1, 1] {doppler.device = #doppler.device<1>}
      : tensor<1x4x8x8xf32> -> tensor<1x4x4x4xf32>
  %3 = doppler.conv %2, %w2 strides [1, 1] dilations [1, 1] padding [1, 1, 1, 1] groups 4 {doppler.device = #doppler.device<1>}
      : (tensor<1x4x4x4xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x4x4xf32>
  %4 = doppler.pool avg %1 kernel [2, 2] strides [2, 2] dilations [1, 1] padding [0, 0, 0, 0] {doppler.device = #doppler.device<0>}
      : tensor<1x4x8x8xf32> -> tensor<1x4x4x4xf32>
  return %3, %4 : tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>
}

// CHECK-DAG: #[[$CONV_IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 + d5, d3 + d6)>
// CHECK-DAG: #[[$POOL_IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 * 2 + d4, d3 * 2 + d5)>
// CHECK-DAG: #[[$DW_IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d3, d1 + d4, d2 + d5)>
// CHECK-DAG: #[[$C0:loc[0-9]+]] = loc("conv_0@d0"(#{{loc[0-9]+}}))
// CHECK-DAG: #[[$E1:loc[0-9]+]] = loc("einsum_1@d0"(#{{loc[0-9]+}}))
// CHECK-DAG: #[[$P2:loc[0-9]+]] = loc("pool_2@d1"(#{{loc[0-9]+}}))
// CHECK-DAG: #[[$C3:loc[0-9]+]] = loc("conv_3@d1"(#{{loc[0-9]+}}))
// CHECK-DAG: #[[$P4:loc[0-9]+]] = loc("pool_4@d0"(#{{loc[0-9]+}}))
// CHECK: "util.global"() {initial_value = #hal.device.alias<"local"[1]>, sym_name = "__device_1"
// CHECK-LABEL: func.func @cnn(
// CHECK-SAME: %arg0: tensor<1x3x8x8xf32> {iree.abi.affinity = #hal.device.affinity<@__device_0>}
// CHECK-SAME: %arg3: tensor<4x1x3x3xf32> {iree.abi.affinity = #hal.device.affinity<@__device_1>}
// CHECK-SAME: -> (tensor<1x4x4x4xf32> {iree.abi.affinity = #hal.device.affinity<@__device_1>}, tensor<1x4x4x4xf32> {iree.abi.affinity = #hal.device.affinity<@__device_0>})

// The first convolution on device 0: pad, zero init, the convolution.
// CHECK: %[[XP:.*]] = tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: } : tensor<1x3x8x8xf32> to tensor<1x3x10x10xf32> loc(#[[$C0]])
// CHECK: %[[C0F:.*]] = linalg.fill {{.*}} loc(#[[$C0]])
// CHECK: %[[C0R:.*]] = linalg.generic {indexing_maps = [#[[$CONV_IN]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%[[XP]], %arg1 : {{.*}}) outs(%[[C0F]] : tensor<1x4x8x8xf32>)
// CHECK: arith.mulf {{.*}} loc(#[[$C0]])
// CHECK: arith.addf {{.*}} loc(#[[$C0]])
// CHECK: } -> tensor<1x4x8x8xf32> loc(#[[$C0]])
// CHECK: %[[B:.*]] = linalg.generic {{.*}} ins(%[[C0R]], %arg2 : {{.*}}) {{.*}}
// CHECK: } -> tensor<1x4x8x8xf32> loc(#[[$E1]])

// The max pool on device 1: the bias-added value moved there, padded with
// -inf, pooled into an init of -inf.
// CHECK: %[[MOVED:.*]] = "flow.tensor.transfer"(%[[B]]) {target = #hal.device.affinity<@__device_1>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc(#[[$P2]])
// CHECK: %[[MP:.*]] = tensor.pad %[[MOVED]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: } : tensor<1x4x8x8xf32> to tensor<1x4x10x10xf32> loc(#[[$P2]])
// CHECK: %[[WIN:.*]] = tensor.empty() : tensor<3x3xf32> loc(#[[$P2]])
// CHECK: %[[MAX:.*]] = linalg.generic {indexing_maps = [#[[$POOL_IN]], {{.*}}]{{.*}} ins(%[[MP]], %[[WIN]] : tensor<1x4x10x10xf32>, tensor<3x3xf32>)
// CHECK: arith.maximumf {{.*}} loc(#[[$P2]])
// CHECK: } -> tensor<1x4x4x4xf32> loc(#[[$P2]])

// The depthwise convolution on device 1: the weight collapsed to [C, K, K].
// CHECK: %[[K:.*]] = tensor.collapse_shape %arg3 {{\[}}[0, 1], [2], [3]] : tensor<4x1x3x3xf32> into tensor<4x3x3xf32> loc(#[[$C3]])
// CHECK: %[[DP:.*]] = tensor.pad %[[MAX]]
// CHECK: linalg.generic {indexing_maps = [#[[$DW_IN]], {{.*}}]{{.*}} ins(%[[DP]], %[[K]] : tensor<1x4x6x6xf32>, tensor<4x3x3xf32>)
// CHECK: } -> tensor<1x4x4x4xf32> loc(#[[$C3]])

// The average pool on device 0 reads the bias-added value where it is: a
// sum pool and the division by 4.
// CHECK-NOT: flow.tensor.transfer
// CHECK: %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[$POOL_IN]], {{.*}}]{{.*}} ins(%[[B]], %{{.*}} : tensor<1x4x8x8xf32>, tensor<2x2xf32>)
// CHECK: arith.addf {{.*}} loc(#[[$P4]])
// CHECK: %[[FOUR:.*]] = arith.constant 4.000000e+00 : f32 loc(#[[$P4]])
// CHECK: linalg.generic {{.*}} ins(%[[SUM]] : tensor<1x4x4x4xf32>)
// CHECK: arith.divf %{{.*}}, %[[FOUR]] : f32 loc(#[[$P4]])
// CHECK: } -> tensor<1x4x4x4xf32> loc(#[[$P4]])
// CHECK-NOT: doppler.
