// What --export-iree refuses: one error per op.
// RUN: doppler-translate --export-iree %s --split-input-file --verify-diagnostics

func.func @unplaced(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = doppler.einsum "i->i" join(exp) (%a) {doppler.device = #doppler.device<0>} : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error @below {{'doppler.einsum' op is not placed (no doppler.device); run doppler-place or doppler-pipeline before --export-iree}}
  %1 = doppler.einsum "i->i" join(neg) (%0) : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error @below {{'doppler.fill' op is not placed}}
  %2 = doppler.fill 1.0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// expected-error @below {{cannot export @dynamic_argument to IREE: argument 0 has a dynamic shape ('tensor<?xf32>')}}
func.func @dynamic_argument(%a: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @below {{'doppler.transfer' op cannot be exported to IREE: operand 0 has a dynamic shape ('tensor<?xf32>')}}
  %0 = doppler.transfer %a from <0> to <1> : tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @task() -> !doppler.value {
  // expected-error @below {{'doppler.task' op is a cost-only op on opaque values; it cannot be exported to IREE}}
  %0 = doppler.task "input" compute(1.0) transfer(2.0) {doppler.device = #doppler.device<0>}
  return %0 : !doppler.value
}

// -----

// expected-error @below {{--export-iree: the module has no function with a body to export}}
module {
  func.func private @declaration(tensor<4xf32>) -> tensor<4xf32>
}
