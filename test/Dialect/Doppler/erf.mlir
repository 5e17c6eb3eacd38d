// The erf join (exact GELU is 0.5 x (1 + erf(x / sqrt 2))): one input, no
// scalar; the interpreter computes std::erf (erf(0.5) = 0.5204998778).
// RUN: doppler-opt %s --split-input-file --verify-diagnostics | FileCheck %s
// RUN: doppler-opt %s --split-input-file --verify-diagnostics --doppler-annotate-costs --doppler-work-summary -o /dev/null 2>&1 | FileCheck %s --check-prefix=WORK

// CHECK-LABEL: func.func @erf
// CHECK: doppler.einsum "ij->ij" join(erf) (%{{.*}}) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// One FLOP per element, as every unary join.
// WORK: flops: 32
func.func @erf(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = doppler.einsum "ij->ij" join(erf) (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @erf_two_inputs(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{join 'erf' takes 1 input(s) but the op has 2}}
  %0 = doppler.einsum "i,i->i" join(erf) (%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @erf_scalar(%a: tensor<4xf32>) {
  // expected-error @+1 {{join 'erf' takes no scalar}}
  %0 = doppler.einsum "i->i" join(erf, 2.0) (%a) : (tensor<4xf32>) -> tensor<4xf32>
  return
}
