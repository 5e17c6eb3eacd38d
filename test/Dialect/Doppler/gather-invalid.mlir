// RUN: doppler-opt %s -split-input-file -verify-diagnostics

func.func @axis_out_of_range(%w: tensor<10x4xf32>, %i: tensor<3xi64>) -> tensor<10x3xf32> {
  // expected-error @+1 {{axis 2 is outside [0, 2) for a table of rank 2}}
  %0 = doppler.gather %w[%i] axis 2 : tensor<10x4xf32>, tensor<3xi64> -> tensor<10x3xf32>
  return %0 : tensor<10x3xf32>
}

// -----

func.func @wrong_shape(%w: tensor<10x4xf32>, %i: tensor<3xi64>) -> tensor<3x5xf32> {
  // expected-error @+1 {{result shape [3, 5] differs from [3, 4] = table.shape[:axis] + indices.shape + table.shape[axis + 1:]}}
  %0 = doppler.gather %w[%i] axis 0 : tensor<10x4xf32>, tensor<3xi64> -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

func.func @wrong_element(%w: tensor<10x4xf32>, %i: tensor<3xi64>) -> tensor<3x4xf64> {
  // expected-error @+1 {{result element type 'f64' differs from the table's 'f32'; a gather copies the table's elements}}
  %0 = doppler.gather %w[%i] axis 0 : tensor<10x4xf32>, tensor<3xi64> -> tensor<3x4xf64>
  return %0 : tensor<3x4xf64>
}

// -----

// Float indices are f32/f64 (integers carried as floats; masks.mlir).
func.func @half_indices(%w: tensor<10x4xf32>, %i: tensor<3xf16>) -> tensor<3x4xf32> {
  // expected-error @+1 {{operand #1 must be ranked tensor of 32-bit signless integer or 64-bit signless integer or 32-bit float or 64-bit float values}}
  %0 = doppler.gather %w[%i] axis 0 : tensor<10x4xf32>, tensor<3xf16> -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @rank0_table(%w: tensor<f32>, %i: tensor<3xi64>) -> tensor<3xf32> {
  // expected-error @+1 {{gathers from a rank-0 table}}
  %0 = doppler.gather %w[%i] axis 0 : tensor<f32>, tensor<3xi64> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @dynamic(%w: tensor<10x4xf32>, %i: tensor<?xi64>) -> tensor<?x4xf32> {
  // expected-error @+1 {{indices}}
  %0 = doppler.gather %w[%i] axis 0 : tensor<10x4xf32>, tensor<?xi64> -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// Integer tensors are a gather's indices, or converted to floats by an
// einsum (masks.mlir); never an einsum's result.
func.func @einsum_of_ints(%i: tensor<3xi64>) -> tensor<3xi64> {
  // expected-error @+1 {{result #0 must be ranked tensor of floating-point values}}
  %0 = doppler.einsum "i->i" join(identity) (%i) : (tensor<3xi64>) -> tensor<3xi64>
  return %0 : tensor<3xi64>
}
