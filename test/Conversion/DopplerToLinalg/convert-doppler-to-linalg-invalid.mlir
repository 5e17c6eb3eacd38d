// What convert-doppler-to-linalg cannot lower: one error per op.
// RUN: doppler-opt %s --split-input-file --convert-doppler-to-linalg --verify-diagnostics

// doppler.task: cost-only, opaque values.
func.func @task() -> !doppler.value {
  // expected-error @below {{'doppler.task' op is a cost-only op on opaque values; it has no tensor semantics to lower to linalg}}
  %0 = doppler.task "input" compute(1.0) transfer(2.0)
  return %0 : !doppler.value
}

// -----

// doppler.transfer of an opaque !doppler.value.
func.func @transfer_opaque(%x: !doppler.value) -> !doppler.value {
  // expected-error @below {{'doppler.transfer' op cannot be lowered to linalg: operand 0 is an opaque !doppler.value ('!doppler.value'); linalg on tensors needs static shapes}}
  %0 = doppler.transfer %x from <0> to <1> : !doppler.value
  return %0 : !doppler.value
}

// -----

// doppler.transfer of a dynamically shaped tensor.
func.func @transfer_dynamic(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @below {{'doppler.transfer' op cannot be lowered to linalg: operand 0 has a dynamic shape ('tensor<?x8xf32>'); linalg on tensors needs static shapes}}
  %0 = doppler.transfer %x from <0> to <1> : tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

// doppler.gather from a table empty along its axis: every index is out of
// range, an error the interpreter and the runtime raise and linalg cannot.
func.func @gather_empty_axis(%t: tensor<0x4xf32>, %ids: tensor<3xi64>) -> tensor<3x4xf32> {
  // expected-error @below {{'doppler.gather' op gathers from a table empty along axis 0: every index is out of range, which linalg cannot report}}
  %0 = doppler.gather %t[%ids] axis 0 : tensor<0x4xf32>, tensor<3xi64> -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}
