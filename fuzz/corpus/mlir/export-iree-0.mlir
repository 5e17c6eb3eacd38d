// doppler-translate --export-iree: a placed function as IREE input.
// The output parses again with MLIR 22 (flow/hal/util as unregistered ops).
// Another device kind: the text names it (no GPU here to run it).
// More devices declared than used.

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
// Arguments live on their first user's device, results on their producer's.
// The einsums are linalg.generic ops named after the Doppler op and its device.
// The doppler.transfer is a flow.tensor.transfer to device 1.
// No doppler attribute is left (IREE cannot parse them).
