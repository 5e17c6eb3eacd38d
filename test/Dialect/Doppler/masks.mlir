// Integers and booleans computed from data, carried as floats: the
// comparison joins (1.0/0.0), `where(c, x)` (x where c != 0, else -0.0),
// the conversion einsum (identity to another element type: i32/i64 or a
// float to a float) and gathers at float indices. What stays refused is
// below the first test.
// RUN: doppler-opt %s --split-input-file --verify-diagnostics | FileCheck %s
// RUN: doppler-opt %s --split-input-file --verify-diagnostics --doppler-annotate-costs --doppler-work-summary -o /dev/null 2>&1 | FileCheck %s --check-prefix=WORK

// CHECK-LABEL: func.func @padding_mask
// CHECK: doppler.einsum "bt->bt" join(identity) (%{{.*}}) : (tensor<2x8xi64>) -> tensor<2x8xf64>
// CHECK: join(ne)
// CHECK: join(eq)
// CHECK: join(lt)
// CHECK: join(le)
// CHECK: join(gt)
// CHECK: join(ge)
// CHECK: join(where)
// CHECK: doppler.gather %{{.*}}[%{{.*}}] axis 0 : tensor<16x4xf32>, tensor<2x8xf64> -> tensor<2x8x4xf32>
// One FLOP per element for every comparison and where (7 joins over 16
// elements; the two conversions none): 7 x 16 = 112.
// WORK: flops: 112
func.func @padding_mask(%mask: tensor<2x8xi64>, %x: tensor<2x8xf32>, %w: tensor<16x4xf32>) -> (tensor<2x8xf32>, tensor<2x8x4xf32>) {
  %m = doppler.einsum "bt->bt" join(identity) (%mask) : (tensor<2x8xi64>) -> tensor<2x8xf64>
  %z = doppler.fill 0.000000e+00 : tensor<f64>
  %ne = doppler.einsum "bt,->bt" join(ne) (%m, %z) : (tensor<2x8xf64>, tensor<f64>) -> tensor<2x8xf64>
  %eq = doppler.einsum "bt,->bt" join(eq) (%m, %z) : (tensor<2x8xf64>, tensor<f64>) -> tensor<2x8xf64>
  %lt = doppler.einsum "bt,bt->bt" join(lt) (%ne, %eq) : (tensor<2x8xf64>, tensor<2x8xf64>) -> tensor<2x8xf64>
  %le = doppler.einsum "bt,bt->bt" join(le) (%lt, %eq) : (tensor<2x8xf64>, tensor<2x8xf64>) -> tensor<2x8xf64>
  %gt = doppler.einsum "bt,bt->bt" join(gt) (%le, %eq) : (tensor<2x8xf64>, tensor<2x8xf64>) -> tensor<2x8xf64>
  %ge = doppler.einsum "bt,bt->bt" join(ge) (%gt, %eq) : (tensor<2x8xf64>, tensor<2x8xf64>) -> tensor<2x8xf64>
  %c = doppler.einsum "bt->bt" join(identity) (%ge) : (tensor<2x8xf64>) -> tensor<2x8xf32>
  %y = doppler.einsum "bt,bt->bt" join(where) (%c, %x) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %e = doppler.gather %w[%m] axis 0 : tensor<16x4xf32>, tensor<2x8xf64> -> tensor<2x8x4xf32>
  return %y, %e : tensor<2x8xf32>, tensor<2x8x4xf32>
}

// -----

// CHECK-LABEL: func.func @fused_program
// CHECK: doppler.fused "i,i,i->i" "ne(in0, in1); where(s0, in2)"
// WORK: @fused_program
// WORK: flops: 8
func.func @fused_program(%a: tensor<4xf32>, %b: tensor<4xf32>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = doppler.fused "i,i,i->i" "ne(in0, in1); where(s0, in2)" (%a, %b, %x) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @convert_not_identity(%a: tensor<4xi64>) {
  // expected-error @+1 {{operand 0 has element type 'i64' but the result has 'f32' (only a conversion, the identity join over one operand whose term is the output's, changes the element type)}}
  %0 = doppler.einsum "i->i" join(neg) (%a) : (tensor<4xi64>) -> tensor<4xf32>
  return
}

// -----

func.func @convert_transposes(%a: tensor<4x2xi32>) {
  // expected-error @+1 {{(only a conversion, the identity join over one operand whose term is the output's, changes the element type)}}
  %0 = doppler.einsum "ij->ji" join(identity) (%a) : (tensor<4x2xi32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @integer_operands_no_conversion(%a: tensor<4xi64>, %b: tensor<4xi64>) {
  // expected-error @+1 {{(only a conversion, the identity join over one operand whose term is the output's, changes the element type)}}
  %0 = doppler.einsum "i,i->i" join(eq) (%a, %b) : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xf64>
  return
}

// -----

func.func @integer_result(%a: tensor<4xf32>) {
  // expected-error @+1 {{result #0 must be ranked tensor of floating-point values}}
  %0 = doppler.einsum "i->i" join(identity) (%a) : (tensor<4xf32>) -> tensor<4xi64>
  return
}

// -----

func.func @i1_operand(%a: tensor<4xi1>) {
  // expected-error @+1 {{operand #0 must be variadic of ranked tensor of floating-point or 32-bit signless integer or 64-bit signless integer values}}
  %0 = doppler.einsum "i->i" join(identity) (%a) : (tensor<4xi1>) -> tensor<4xf32>
  return
}

// -----

func.func @where_one_input(%a: tensor<4xf32>) {
  // expected-error @+1 {{join 'where' takes 2 input(s) but the op has 1}}
  %0 = doppler.einsum "i->i" join(where) (%a) : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @compare_mixed_types(%a: tensor<4xf32>, %b: tensor<4xf64>) {
  // expected-error @+1 {{only a conversion}}
  %0 = doppler.einsum "i,i->i" join(lt) (%a, %b) : (tensor<4xf32>, tensor<4xf64>) -> tensor<4xf32>
  return
}

// -----

func.func @f16_indices(%w: tensor<10x4xf32>, %i: tensor<3xf16>) {
  // expected-error @+1 {{operand #1 must be ranked tensor of 32-bit signless integer or 64-bit signless integer or 32-bit float or 64-bit float values}}
  %0 = doppler.gather %w[%i] axis 0 : tensor<10x4xf32>, tensor<3xf16> -> tensor<3x4xf32>
  return
}
