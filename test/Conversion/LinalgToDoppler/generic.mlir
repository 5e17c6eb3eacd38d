// convert-linalg-to-doppler on linalg.generic: maps that are projected
// permutations (broadcasts, transposes, constant 0 on unit dims), bodies of
// recognised scalar ops compiled into einsum chains, constants folded into
// scale/shift joins, the select/cmpf forms of relu and max, silu, sigmoid
// and gelu recognised as one join, reductions as aggregations, and the
// init kept exact.
// RUN: doppler-opt %s --split-input-file --convert-linalg-to-doppler="full=true" | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>

// linalg.generic add with a broadcast bias (a row vector).
// CHECK-LABEL: func.func @bias_add(
// CHECK: %0 = doppler.einsum "ij,j->ij" join(add) (%arg0, %arg1) : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
// CHECK: return %0 : tensor<8x16xf32>
// CHECK-NOT: linalg.
func.func @bias_add(%x: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<8x16xf32> {
  %e = tensor.empty() : tensor<8x16xf32>
  %r = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : tensor<8x16xf32>, tensor<16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// linalg.generic with constants: x * 0.5 - 3 becomes scale then shift;
// 1 - x becomes neg then shift; x / 4 a scale by 0.25; x / 3 a div by a
// rank-0 fill (1/3 is not exact).
// CHECK-LABEL: func.func @constants(
// CHECK: %0 = doppler.einsum "ij->ij" join(scale, 0.5) (%arg0) : (tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK: %1 = doppler.einsum "ij->ij" join(shift, -3.0) (%0) : (tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK: %2 = doppler.einsum "ij->ij" join(neg) (%arg0) : (tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK: %3 = doppler.einsum "ij->ij" join(shift, 1.0) (%2) : (tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK: %4 = doppler.einsum "ij->ij" join(scale, 0.25) (%arg0) : (tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK: %5 = doppler.fill 3.0 : tensor<f32>
// CHECK: %6 = doppler.einsum "ij,->ij" join(div) (%arg0, %5) : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xf32>
// CHECK: return %1, %3, %4, %6 : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>
// CHECK-NOT: linalg.
func.func @constants(%x: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) {
  %half = arith.constant 0.5 : f32
  %three = arith.constant 3.0 : f32
  %one = arith.constant 1.0 : f32
  %four = arith.constant 4.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %half : f32
    %s = arith.subf %m, %three : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.subf %one, %a : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  %2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %d = arith.divf %a, %four : f32
    linalg.yield %d : f32
  } -> tensor<8x16xf32>
  %3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %d = arith.divf %a, %three : f32
    linalg.yield %d : f32
  } -> tensor<8x16xf32>
  return %0, %1, %2, %3 : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// linalg.generic relu as cmpf+select and as maximumf with 0; max of two
// tensors as cmpf+select.
// CHECK-LABEL: func.func @relu(
// CHECK: %0 = doppler.einsum "ij->ij" join(relu) (%arg0) : (tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK: %1 = doppler.einsum "ij->ij" join(relu) (%arg0) : (tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK: %2 = doppler.einsum "ij,ij->ij" join(max) (%arg0, %arg1) : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK: return %0, %1, %2 : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>
// CHECK-NOT: linalg.
func.func @relu(%x: tensor<8x16xf32>, %y: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = arith.cmpf ugt, %a, %zero : f32
    %s = arith.select %c, %a, %zero : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<8x16xf32>
  %2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %c = arith.cmpf olt, %a, %b : f32
    %s = arith.select %c, %b, %a : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  return %0, %1, %2 : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// linalg.generic silu as x * sigmoid(x) and as x / (1 + exp(-x)), sigmoid
// as 1 / (1 + exp(-x)), gelu in its tanh form (as torch-mlir writes it).
// CHECK-LABEL: func.func @activations(
// CHECK: %0 = doppler.einsum "ij->ij" join(silu) (%arg0) : (tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK: %1 = doppler.einsum "ij->ij" join(silu) (%arg0) : (tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK: %2 = doppler.einsum "ij->ij" join(sigmoid) (%arg0) : (tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK: %3 = doppler.einsum "ij->ij" join(gelu) (%arg0) : (tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK: return %0, %1, %2, %3 : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>
// CHECK-NOT: linalg.
func.func @activations(%x: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) {
  %one = arith.constant 1.0 : f32
  %half = arith.constant 0.5 : f32
  %k = arith.constant 0.797884583 : f32
  %c = arith.constant 4.471500e-02 : f32
  %three = arith.constant 3.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    %x1 = math.exp %n : f32
    %d = arith.addf %x1, %one : f32
    %s = arith.divf %one, %d : f32
    %r = arith.mulf %a, %s : f32
    linalg.yield %r : f32
  } -> tensor<8x16xf32>
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    %x1 = math.exp %n : f32
    %d = arith.addf %one, %x1 : f32
    %r = arith.divf %a, %d : f32
    linalg.yield %r : f32
  } -> tensor<8x16xf32>
  %2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    %x1 = math.exp %n : f32
    %d = arith.addf %x1, %one : f32
    %s = arith.divf %one, %d : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  %3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %p = math.powf %a, %three : f32
    %q = arith.mulf %p, %c : f32
    %s = arith.addf %a, %q : f32
    %t = arith.mulf %s, %k : f32
    %h = math.tanh %t : f32
    %u = arith.addf %h, %one : f32
    %v = arith.mulf %a, %half : f32
    %r = arith.mulf %v, %u : f32
    linalg.yield %r : f32
  } -> tensor<8x16xf32>
  return %0, %1, %2, %3 : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// linalg.generic with several recognised computations: (x - m) * r, with
// m and r broadcast per row, then exp of it: a chain of einsums. The
// intermediate (x - m) is shared by both uses.
// CHECK-LABEL: func.func @chain(
// CHECK: %0 = doppler.einsum "ij,i->ij" join(sub) (%arg0, %arg1) : (tensor<8x16xf32>, tensor<8xf32>) -> tensor<8x16xf32>
// CHECK: %1 = doppler.einsum "ij,i->ij" join(mul) (%0, %arg2) : (tensor<8x16xf32>, tensor<8xf32>) -> tensor<8x16xf32>
// CHECK: %2 = doppler.einsum "ij->ij" join(exp) (%1) : (tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK: %3 = doppler.einsum "ij,ij->ij" join(add) (%2, %0) : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK: return %3 : tensor<8x16xf32>
// CHECK-NOT: linalg.
func.func @chain(%x: tensor<8x16xf32>, %m: tensor<8xf32>, %r: tensor<8xf32>) -> tensor<8x16xf32> {
  %e = tensor.empty() : tensor<8x16xf32>
  %0 = linalg.generic {indexing_maps = [#id, #row, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m, %r : tensor<8x16xf32>, tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    %s = arith.mulf %d, %c : f32
    %x1 = math.exp %s : f32
    %y = arith.addf %x1, %d : f32
    linalg.yield %y : f32
  } -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#unit = affine_map<(d0, d1, d2) -> (0, d1, d2)>
#red = affine_map<(d0, d1, d2) -> (d0, d1)>
#bcast = affine_map<(d0, d1, d2) -> (d2)>

// linalg.generic with a constant 0 on a unit dim (torch-mlir's broadcast
// of a size-1 dim), a sum of squares reduction (mean-square of RMSNorm)
// with a zero init, a reduction accumulating into a non-identity init, and
// a pure broadcast with an unused init.
// CHECK-LABEL: func.func @unit_dims(
// CHECK: %0 = doppler.einsum "ljk->jk" join(identity) agg(mul) (%arg1) : (tensor<1x8x16xf32>) -> tensor<8x16xf32>
// CHECK: %1 = doppler.einsum "ijk,jk->ijk" join(mul) (%arg0, %0) : (tensor<4x8x16xf32>, tensor<8x16xf32>) -> tensor<4x8x16xf32>
// CHECK: return %1 : tensor<4x8x16xf32>
// CHECK-NOT: linalg.
func.func @unit_dims(%x: tensor<4x8x16xf32>, %y: tensor<1x8x16xf32>) -> tensor<4x8x16xf32> {
  %e = tensor.empty() : tensor<4x8x16xf32>
  %0 = linalg.generic {indexing_maps = [#id3, #unit, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %y : tensor<4x8x16xf32>, tensor<1x8x16xf32>) outs(%e : tensor<4x8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.mulf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x8x16xf32>
  return %0 : tensor<4x8x16xf32>
}

// CHECK-LABEL: func.func @sum_of_squares(
// CHECK: %0 = doppler.einsum "ijk->ij" join(square) agg(add) (%arg0) : (tensor<4x8x16xf32>) -> tensor<4x8xf32>
// CHECK: return %0 : tensor<4x8xf32>
// CHECK-NOT: linalg.
func.func @sum_of_squares(%x: tensor<4x8x16xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %0 = linalg.generic {indexing_maps = [#id3, #red], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<4x8x16xf32>) outs(%init : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %a : f32
    %t = arith.addf %o, %s : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @max_accumulate(
// CHECK: %0 = doppler.fill -3.4028234663852886e+38 : tensor<4x8xf32>
// CHECK: %1 = doppler.einsum "ijk->ij" join(identity) agg(max) (%arg0) : (tensor<4x8x16xf32>) -> tensor<4x8xf32>
// CHECK: %2 = doppler.einsum "ij,ij->ij" join(max) (%1, %0) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK: return %2 : tensor<4x8xf32>
// CHECK-NOT: linalg.
func.func @max_accumulate(%x: tensor<4x8x16xf32>) -> tensor<4x8xf32> {
  %low = arith.constant -3.40282347E+38 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %init = linalg.fill ins(%low : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %0 = linalg.generic {indexing_maps = [#id3, #red], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<4x8x16xf32>) outs(%init : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.maximumf %a, %o : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @broadcast_exp(
// CHECK: %0 = doppler.einsum "k->k" join(exp) (%arg0) : (tensor<16xf32>) -> tensor<16xf32>
// CHECK: %1 = doppler.fill -0.0 : tensor<4x8xf32>
// CHECK: %2 = doppler.einsum "k,ij->ijk" join(add) (%0, %1) : (tensor<16xf32>, tensor<4x8xf32>) -> tensor<4x8x16xf32>
// CHECK: return %2 : tensor<4x8x16xf32>
// CHECK-NOT: linalg.
func.func @broadcast_exp(%b: tensor<16xf32>) -> tensor<4x8x16xf32> {
  %e = tensor.empty() : tensor<4x8x16xf32>
  %0 = linalg.generic {indexing_maps = [#bcast, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%b : tensor<16xf32>) outs(%e : tensor<4x8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %x1 = math.exp %a : f32
    linalg.yield %x1 : f32
  } -> tensor<4x8x16xf32>
  return %0 : tensor<4x8x16xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// linalg.generic whose body reads the init of a parallel op (an in-place
// update): the init is an operand.
// CHECK-LABEL: func.func @reads_init(
// CHECK: %0 = doppler.einsum "ij,ij->ij" join(add) (%arg1, %arg0) : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK: return %0 : tensor<8x16xf32>
// CHECK-NOT: linalg.
func.func @reads_init(%x: tensor<8x16xf32>, %acc: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x16xf32>) outs(%acc : tensor<8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
