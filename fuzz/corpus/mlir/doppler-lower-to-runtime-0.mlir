// The output is pure LLVM dialect and parses again.

// Every task is one checked C API call, in body order; %a is read on two
// devices and becomes two graph inputs bound to argument 0.


// With first-user inputs %a is one input moved to device 1 by a transfer.
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
