// Bad options are reported once, on the module, and change nothing.
// RUN: not doppler-opt %s --doppler-fuse-elementwise=max-steps=0 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: <unknown>:0: error: doppler-fuse-elementwise: option 'max-steps' must be between 1 and 64, got 0
// RUN: not doppler-opt %s --doppler-fuse-elementwise=max-steps=65 2>&1 | FileCheck %s --check-prefix=HUGE
// HUGE: <unknown>:0: error: doppler-fuse-elementwise: option 'max-steps' must be between 1 and 64, got 65
// RUN: not doppler-opt %s --doppler-fuse-elementwise=max-steps=-3 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// NEGATIVE: <unknown>:0: error: doppler-fuse-elementwise: option 'max-steps' must be between 1 and 64, got -3
// The bounds themselves are accepted.
// RUN: doppler-opt %s --doppler-fuse-elementwise=max-steps=1 -o /dev/null
// RUN: doppler-opt %s --doppler-fuse-elementwise=max-steps=64 | FileCheck %s --check-prefix=MAX
// MAX: doppler.fused "i->i" "exp(in0); neg(s0)"

func.func @chain(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = doppler.einsum "i->i" join(exp) (%x) : (tensor<8xf32>) -> tensor<8xf32>
  %1 = doppler.einsum "i->i" join(neg) (%0) : (tensor<8xf32>) -> tensor<8xf32>
  return %1 : tensor<8xf32>
}
