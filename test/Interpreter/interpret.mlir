// Values the reference interpreter must compute, on inputs it builds itself
// (fills) or on its seeded random inputs.
// RUN: doppler-interpret %s --function fills | FileCheck %s --check-prefix=FILLS
// RUN: doppler-interpret %s --function glue | FileCheck %s --check-prefix=GLUE
// RUN: doppler-interpret %s --function precision | FileCheck %s --check-prefix=PRECISION
// RUN: doppler-interpret %s --function special | FileCheck %s --check-prefix=SPECIAL
// RUN: doppler-interpret %s --function range --seed 7 | FileCheck %s --check-prefix=RANGE
// RUN: doppler-interpret %s --function fills --json | FileCheck %s --check-prefix=JSON
// The first function with a body runs by default.
// RUN: doppler-interpret %s | FileCheck %s --check-prefix=FILLS
// Seeds: the same seed gives the same numbers, another seed others.
// RUN: doppler-interpret %s --function softmax --seed 3 > %t.a
// RUN: doppler-interpret %s --function softmax --seed 3 > %t.b
// RUN: doppler-interpret %s --function softmax --seed 4 > %t.c
// RUN: diff %t.a %t.b
// RUN: not diff %t.a %t.c
// A function compared with itself agrees exactly.
// RUN: doppler-interpret %s --function softmax --compare %s | FileCheck %s --check-prefix=SELF

// 2 * 3 * 3 = 18 everywhere: sum 20 * 18, column maxima 18, total 360.
// FILLS: @fills (seed 0): 3 output(s)
// FILLS-NEXT: output 0: tensor<4x5xf32> sum 360 l2 80.4984472
// FILLS-NEXT: output 1: tensor<5xf32> sum 90 l2 40.2492236
// FILLS-NEXT: output 2: tensor<f32> sum 360 l2 360
// JSON: "function": "fills"
// JSON: "l2": 80.4984471
// JSON: "sum": 360
// JSON: "type": "tensor<4x5xf32>"
// JSON: "seed": 0
func.func @fills() -> (tensor<4x5xf32>, tensor<5xf32>, tensor<f32>) {
  %a = doppler.fill 2.0 : tensor<4x3xf32>
  %b = doppler.fill 3.0 : tensor<3x5xf32>
  %c = doppler.einsum "ij,jk->ik" join(mul) agg(add) (%a, %b) : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  %d = doppler.einsum "ij->j" join(identity) agg(max) (%c) : (tensor<4x5xf32>) -> tensor<5xf32>
  %e = doppler.einsum "ij->" join(identity) agg(add) (%c) : (tensor<4x5xf32>) -> tensor<f32>
  return %c, %d, %e : tensor<4x5xf32>, tensor<5xf32>, tensor<f32>
}

// [[1 1 2 2 2]; [1 1 2 2 2]]: sum 16. Its columns 1..3 hold 1 2 2 per row
// (sum 10); a transposition keeps the sum; a transfer copies.
// GLUE: output 0: tensor<2x5xf32> sum 16 l2 5.29150262
// GLUE-NEXT: output 1: tensor<2x3xf32> sum 10 l2 4.24264069
// GLUE-NEXT: output 2: tensor<3x2xf32> sum 10 l2 4.24264069
// GLUE-NEXT: output 3: tensor<2x5xf32> sum 16 l2 5.29150262
func.func @glue() -> (tensor<2x5xf32>, tensor<2x3xf32>, tensor<3x2xf32>, tensor<2x5xf32>) {
  %one = doppler.fill 1.0 : tensor<2x2xf32>
  %two = doppler.fill 2.0 : tensor<2x3xf32>
  %x = doppler.assemble [1, 2] (%one, %two) : tensor<2x2xf32>, tensor<2x3xf32> -> tensor<2x5xf32>
  %s = doppler.slice %x [0, 1] : tensor<2x5xf32> to tensor<2x3xf32>
  %t = doppler.einsum "ij->ji" join(identity) (%s) : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %m = doppler.transfer %x from <0> to <1> : tensor<2x5xf32>
  return %x, %s, %t, %m : tensor<2x5xf32>, tensor<2x3xf32>, tensor<3x2xf32>, tensor<2x5xf32>
}

// Results are rounded to their element type: 1/3 in bf16, f16, f32, f64.
// PRECISION: output 0: tensor<bf16> sum 0.333984375
// PRECISION-NEXT: output 1: tensor<f16> sum 0.333251953
// PRECISION-NEXT: output 2: tensor<f32> sum 0.333333343
// PRECISION-NEXT: output 3: tensor<f64> sum 0.333333333
func.func @precision() -> (tensor<bf16>, tensor<f16>, tensor<f32>, tensor<f64>) {
  %a = doppler.fill 3.0 : tensor<bf16>
  %b = doppler.fill 3.0 : tensor<f16>
  %c = doppler.fill 3.0 : tensor<f32>
  %d = doppler.fill 3.0 : tensor<f64>
  %ra = doppler.einsum "->" join(reciprocal) (%a) : (tensor<bf16>) -> tensor<bf16>
  %rb = doppler.einsum "->" join(reciprocal) (%b) : (tensor<f16>) -> tensor<f16>
  %rc = doppler.einsum "->" join(reciprocal) (%c) : (tensor<f32>) -> tensor<f32>
  %rd = doppler.einsum "->" join(reciprocal) (%d) : (tensor<f64>) -> tensor<f64>
  return %ra, %rb, %rc, %rd : tensor<bf16>, tensor<f16>, tensor<f32>, tensor<f64>
}

// Aggregating over an empty index gives the aggregation's identity; log of
// a negative number is NaN.
// SPECIAL: output 0: tensor<2xf32> sum -inf
// SPECIAL-NEXT: output 1: tensor<2xf32> sum 2 l2 1.41421356
// SPECIAL-NEXT: output 2: tensor<f32> sum nan
func.func @special() -> (tensor<2xf32>, tensor<2xf32>, tensor<f32>) {
  %e = doppler.fill 5.0 : tensor<2x0xf32>
  %max = doppler.einsum "ij->i" join(identity) agg(max) (%e) : (tensor<2x0xf32>) -> tensor<2xf32>
  %mul = doppler.einsum "ij->i" join(identity) agg(mul) (%e) : (tensor<2x0xf32>) -> tensor<2xf32>
  %m = doppler.fill -1.0 : tensor<f32>
  %l = doppler.einsum "->" join(log) (%m) : (tensor<f32>) -> tensor<f32>
  return %max, %mul, %l : tensor<2xf32>, tensor<2xf32>, tensor<f32>
}

// Random inputs lie in [-1, 1): relu(|x| - 1) is 0 everywhere, and 4096
// uniform values have a mean square near 1/3.
// RANGE: @range (seed 7): 2 output(s)
// RANGE-NEXT: output 0: tensor<f32> sum 0 l2 0
// RANGE-NEXT: output 1: tensor<f32> sum 0.3{{[2-4]}}
func.func @range(%x: tensor<4096xf32>) -> (tensor<f32>, tensor<f32>) {
  %a = doppler.einsum "i->i" join(abs) (%x) : (tensor<4096xf32>) -> tensor<4096xf32>
  %s = doppler.einsum "i->i" join(shift, -1.0) (%a) : (tensor<4096xf32>) -> tensor<4096xf32>
  %r = doppler.einsum "i->" join(relu) agg(add) (%s) : (tensor<4096xf32>) -> tensor<f32>
  %q = doppler.einsum "i->" join(square) agg(add) (%x) : (tensor<4096xf32>) -> tensor<f32>
  %m = doppler.einsum "->" join(scale, 2.44140625e-04) (%q) : (tensor<f32>) -> tensor<f32>
  return %r, %m : tensor<f32>, tensor<f32>
}

// SELF: output 0: tensor<4x8xf32> sum {{.*}} rel-error 0
// SELF-NEXT: compared with '{{.*}}interpret.mlir': max rel-error 0 <= tolerance 1e-05: ok
func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %m = doppler.einsum "ij->i" join(identity) agg(max) (%x) : (tensor<4x8xf32>) -> tensor<4xf32>
  %d = doppler.einsum "ij,i->ij" join(sub) (%x, %m) : (tensor<4x8xf32>, tensor<4xf32>) -> tensor<4x8xf32>
  %e = doppler.einsum "ij->ij" join(exp) (%d) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %z = doppler.einsum "ij->i" join(identity) agg(add) (%e) : (tensor<4x8xf32>) -> tensor<4xf32>
  %p = doppler.einsum "ij,i->ij" join(div) (%e, %z) : (tensor<4x8xf32>, tensor<4xf32>) -> tensor<4x8xf32>
  return %p : tensor<4x8xf32>
}

// A fused op applies its program per element, broadcasting like an einsum:
// ((2 + b_j) * 0.5)^2 with b = 3 for j < 2 and 1 after: 6.25 and 2.25,
// so rows sum to 2 * 6.25 + 3 * 2.25 = 19.25 and the 4 rows to 77; l2 is
// sqrt(4 * (2 * 6.25^2 + 3 * 2.25^2)) = sqrt(373.25).
// FUSED: output 0: tensor<4x5xf32> sum 77 l2 19.3196791
// RUN: doppler-interpret %s --function fused | FileCheck %s --check-prefix=FUSED
func.func @fused() -> tensor<4x5xf32> {
  %x = doppler.fill 2.0 : tensor<4x5xf32>
  %three = doppler.fill 3.0 : tensor<2xf32>
  %one = doppler.fill 1.0 : tensor<3xf32>
  %b = doppler.assemble [2] (%three, %one) : tensor<2xf32>, tensor<3xf32> -> tensor<5xf32>
  %y = doppler.fused "ij,j->ij" "add(in0, in1); scale(s0, 0.5); square(s1)" (%x, %b)
      : (tensor<4x5xf32>, tensor<5xf32>) -> tensor<4x5xf32>
  return %y : tensor<4x5xf32>
}

// An evict and its reload are copies: the reloaded 3s (sum 3 * 20 = 60)
// add to the 2s a later op on the device makes, 5 * 20 = 100; the reload
// waits for that op (`after`) but reads nothing from it.
// OFFLOAD: @offload (seed 0): 2 output(s)
// OFFLOAD-NEXT: output 0: tensor<4x5xf32> sum 100 l2 22.3606798
// OFFLOAD-NEXT: output 1: tensor<4x5xf32> sum 60 l2 13.4164079
// RUN: doppler-interpret %s --function offload | FileCheck %s --check-prefix=OFFLOAD
func.func @offload() -> (tensor<4x5xf32>, tensor<4x5xf32>) {
  %x = doppler.fill 3.0 {doppler.device = #doppler.device<0>} : tensor<4x5xf32>
  %h = doppler.evict %x from <0> {doppler.device = #doppler.device<0>} : tensor<4x5xf32>
  %t = doppler.fill 2.0 {doppler.device = #doppler.device<0>} : tensor<4x5xf32>
  %r = doppler.reload %h to <0> after(%t : tensor<4x5xf32>) {doppler.device = #doppler.device<0>} : tensor<4x5xf32>
  %y = doppler.einsum "ij,ij->ij" join(add) (%r, %t) {doppler.device = #doppler.device<0>}
      : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4x5xf32>
  %s = doppler.reload %h to <1> {doppler.device = #doppler.device<1>} : tensor<4x5xf32>
  return %y, %s : tensor<4x5xf32>, tensor<4x5xf32>
}
