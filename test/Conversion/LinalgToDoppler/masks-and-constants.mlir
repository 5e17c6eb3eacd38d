// What torch-mlir writes around attention and embeddings, converted with
// nothing left (full=true): ops on constants only folded (an iota, a causal
// mask compared from it, a cumsum of constants in tm_tensor.scan), `where`
// on a constant mask as the frontend writes it (a constant added beside an
// infinite branch; both branches computed: each times its 0/1 mask),
// torch's safe softmax (a clamped row max, 1e-30 added to the sum), an
// f32 -> f64 -> f32 variance computed in f32, embedding gathers (ids from
// an argument; ids folded from an iota; every index a constant, as
// `as_strided` gives) and the exact erf GELU.
// RUN: doppler-opt %s --allow-unregistered-dialect --split-input-file --convert-linalg-to-doppler=full=true | FileCheck %s
// RUN: doppler-opt %s --allow-unregistered-dialect --split-input-file --convert-linalg-to-doppler=full=true | FileCheck %s --check-prefix=LEFT
// LEFT-NOT: linalg.
// LEFT-NOT: tm_tensor
// LEFT-NOT: xf64>

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>

// CHECK-LABEL: func.func @causal_mask
// The mask's -inf above the diagonal and 0 elsewhere, added to the scores.
// CHECK: %[[FILL:.*]] = arith.constant dense<{{\[\[}}0.000000e+00, 0xFF800000, 0xFF800000, 0xFF800000], [0.000000e+00, 0.000000e+00, 0xFF800000, 0xFF800000]
// CHECK: doppler.einsum "ij,ij->ij" join(add) (%arg0, %[[FILL]])
func.func @causal_mask(%scores: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %e = tensor.empty() : tensor<4xi64>
  %pos = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      outs(%e : tensor<4xi64>) {
  ^bb0(%o: i64):
    %i = linalg.index 0 : index
    %c = arith.index_cast %i : index to i64
    linalg.yield %c : i64
  } -> tensor<4xi64>
  %em = tensor.empty() : tensor<4x4xi1>
  %mask = linalg.generic {indexing_maps = [#row, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%pos, %pos : tensor<4xi64>, tensor<4xi64>) outs(%em : tensor<4x4xi1>) {
  ^bb0(%q: i64, %k: i64, %o: i1):
    %le = arith.cmpi sle, %k, %q : i64
    linalg.yield %le : i1
  } -> tensor<4x4xi1>
  %ninf = arith.constant 0xFF800000 : f32
  %ef = tensor.empty() : tensor<4x4xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mask, %scores : tensor<4x4xi1>, tensor<4x4xf32>) outs(%ef : tensor<4x4xf32>) {
  ^bb0(%m: i1, %s: f32, %o: f32):
    %v = arith.select %m, %s, %ninf : f32
    linalg.yield %v : f32
  } -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>

// CHECK-LABEL: func.func @both_computed
// CHECK-DAG: %[[T:.*]] = arith.constant dense<{{\[\[}}1.000000e+00, 0.000000e+00], [0.000000e+00, 1.000000e+00]]> : tensor<2x2xf32>
// CHECK-DAG: %[[F:.*]] = arith.constant dense<{{\[\[}}0.000000e+00, 1.000000e+00], [1.000000e+00, 0.000000e+00]]> : tensor<2x2xf32>
// CHECK-DAG: %[[A:.*]] = doppler.einsum "ij,ij->ij" join(mul) (%arg0, %[[T]])
// CHECK-DAG: %[[B:.*]] = doppler.einsum "ij,ij->ij" join(mul) (%arg1, %[[F]])
// CHECK: doppler.einsum "ij,ij->ij" join(add) (%[[A]], %[[B]])
func.func @both_computed(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %mask = arith.constant dense<[[true, false], [false, true]]> : tensor<2x2xi1>
  %e = tensor.empty() : tensor<2x2xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mask, %a, %b : tensor<2x2xi1>, tensor<2x2xf32>, tensor<2x2xf32>) outs(%e : tensor<2x2xf32>) {
  ^bb0(%m: i1, %x: f32, %y: f32, %o: f32):
    %v = arith.select %m, %x, %y : f32
    linalg.yield %v : f32
  } -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}

// -----

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#keep = affine_map<(d0, d1, d2) -> (d0, d1, 0)>

// torch-mlir's _safe_softmax over the last dim of [2, 3, 4]. The row max
// is max-ed with the lowest f32, the sum shifted by 1e-30, the select gone.
// CHECK-LABEL: func.func @safe_softmax
// CHECK: join(identity) agg(max)
// CHECK: join(max)
// CHECK: join(exp)
// CHECK: join(identity) agg(add)
// CHECK: join(shift, 1.0000000031710769e-30)
// CHECK: join(div)
// CHECK-NOT: doppler.
// CHECK: return
func.func @safe_softmax(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %ninf64 = arith.constant 0xFFF0000000000000 : f64
  %zero = arith.constant 0.0 : f32
  %true = arith.constant true
  %zeros = arith.constant dense<0.0> : tensor<2x3x4xf32>
  %e1 = tensor.empty() : tensor<2x3x1xf32>
  %mi = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<2x3x1xf32>) -> tensor<2x3x1xf32>
  %m = linalg.generic {indexing_maps = [#id3, #keep], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<2x3x4xf32>) outs(%mi : tensor<2x3x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.maximumf %a, %o : f32
    linalg.yield %v : f32
  } -> tensor<2x3x1xf32>
  %e = tensor.empty() : tensor<2x3x4xf32>
  %d = linalg.generic {indexing_maps = [#id3, #keep, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %m : tensor<2x3x4xf32>, tensor<2x3x1xf32>) outs(%e : tensor<2x3x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %v = arith.subf %a, %b : f32
    linalg.yield %v : f32
  } -> tensor<2x3x4xf32>
  %ex = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%d : tensor<2x3x4xf32>) outs(%e : tensor<2x3x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = math.exp %a : f32
    linalg.yield %v : f32
  } -> tensor<2x3x4xf32>
  %si = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x3x1xf32>) -> tensor<2x3x1xf32>
  %s = linalg.generic {indexing_maps = [#id3, #keep], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%ex : tensor<2x3x4xf32>) outs(%si : tensor<2x3x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.addf %a, %o : f32
    linalg.yield %v : f32
  } -> tensor<2x3x1xf32>
  %y = linalg.generic {indexing_maps = [#id3, #keep, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ex, %s : tensor<2x3x4xf32>, tensor<2x3x1xf32>) outs(%e : tensor<2x3x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %v = arith.divf %a, %b : f32
    linalg.yield %v : f32
  } -> tensor<2x3x4xf32>
  %eb = tensor.empty() : tensor<2x3x4xi1>
  %c = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x3x4xf32>) outs(%eb : tensor<2x3x4xi1>) {
  ^bb0(%a: f32, %o: i1):
    %w = arith.extf %a : f32 to f64
    %v = arith.cmpf oeq, %w, %ninf64 : f64
    linalg.yield %v : i1
  } -> tensor<2x3x4xi1>
  %eb1 = tensor.empty() : tensor<2x3x1xi1>
  %ai = linalg.fill ins(%true : i1) outs(%eb1 : tensor<2x3x1xi1>) -> tensor<2x3x1xi1>
  %all = linalg.generic {indexing_maps = [#id3, #keep], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%c : tensor<2x3x4xi1>) outs(%ai : tensor<2x3x1xi1>) {
  ^bb0(%a: i1, %o: i1):
    %v = arith.andi %a, %o : i1
    linalg.yield %v : i1
  } -> tensor<2x3x1xi1>
  %r = linalg.generic {indexing_maps = [#keep, #id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%all, %zeros, %y : tensor<2x3x1xi1>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) outs(%e : tensor<2x3x4xf32>) {
  ^bb0(%a: i1, %z: f32, %v: f32, %o: f32):
    %w = arith.select %a, %z, %v : f32
    linalg.yield %w : f32
  } -> tensor<2x3x4xf32>
  return %r : tensor<2x3x4xf32>
}

// -----

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#red = affine_map<(d0, d1, d2) -> (d0, d1)>

// LayerNorm's variance as torch-mlir writes it: computed in f32.
// CHECK-LABEL: func.func @variance_in_f64
// CHECK: doppler.einsum "ijk->ij" join(square) agg(add) (%arg0) : (tensor<2x3x8xf32>) -> tensor<2x3xf32>
// CHECK: join(scale, 0.125)
func.func @variance_in_f64(%x: tensor<2x3x8xf32>) -> tensor<2x3xf32> {
  %zero = arith.constant 0.0 : f64
  %n = arith.constant 8.0 : f64
  %e64 = tensor.empty() : tensor<2x3x8xf64>
  %w = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x3x8xf32>) outs(%e64 : tensor<2x3x8xf64>) {
  ^bb0(%a: f32, %o: f64):
    %v = arith.extf %a : f32 to f64
    linalg.yield %v : f64
  } -> tensor<2x3x8xf64>
  %er = tensor.empty() : tensor<2x3xf64>
  %f = linalg.fill ins(%zero : f64) outs(%er : tensor<2x3xf64>) -> tensor<2x3xf64>
  %s = linalg.generic {indexing_maps = [#id3, #red], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%w : tensor<2x3x8xf64>) outs(%f : tensor<2x3xf64>) {
  ^bb0(%a: f64, %o: f64):
    %sq = arith.mulf %a, %a : f64
    %v = arith.addf %sq, %o : f64
    linalg.yield %v : f64
  } -> tensor<2x3xf64>
  %m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<2x3xf64>) outs(%er : tensor<2x3xf64>) {
  ^bb0(%a: f64, %o: f64):
    %v = arith.divf %a, %n : f64
    linalg.yield %v : f64
  } -> tensor<2x3xf64>
  %e32 = tensor.empty() : tensor<2x3xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%m : tensor<2x3xf64>) outs(%e32 : tensor<2x3xf32>) {
  ^bb0(%a: f64, %o: f32):
    %v = arith.truncf %a : f64 to f32
    linalg.yield %v : f32
  } -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

#ids = affine_map<(d0, d1, d2) -> (d0, d1)>
#out = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// An embedding (torch-mlir's form, bounds checks dead) at ids from an
// argument, and one at positions cumsum(ones) - 1 = [0, 1, 2] (a
// tm_tensor.scan of constants, folded).
// CHECK-LABEL: func.func @embeddings
// CHECK-DAG: %[[POS:.*]] = arith.constant dense<{{\[\[}}0, 1, 2]]> : tensor<1x3xi64>
// CHECK-DAG: %[[TOK:.*]] = doppler.gather %arg1[%arg0] axis 0 : tensor<10x4xf32>, tensor<1x3xi64> -> tensor<1x3x4xf32>
// CHECK-DAG: %[[P:.*]] = doppler.gather %arg2[%[[POS]]] axis 0 : tensor<5x4xf32>, tensor<1x3xi64> -> tensor<1x3x4xf32>
// CHECK: doppler.einsum "ijk,ijk->ijk" join(add) (%[[TOK]], %[[P]])
func.func @embeddings(%ids: tensor<1x3xi64>, %tok: tensor<10x4xf32>, %pos: tensor<5x4xf32>) -> tensor<1x3x4xf32> {
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %c10 = arith.constant 10 : index
  %e = tensor.empty() : tensor<1x3x4xf32>
  %t = linalg.generic {indexing_maps = [#ids, #out], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ids : tensor<1x3xi64>) outs(%e : tensor<1x3x4xf32>) {
  ^bb0(%i: i64, %o: f32):
    %r = arith.index_cast %i : i64 to index
    %d = linalg.index 2 : index
    %b0 = arith.cmpi slt, %r, %c10 : index
    %v = tensor.extract %tok[%r, %d] : tensor<10x4xf32>
    linalg.yield %v : f32
  } -> tensor<1x3x4xf32>
  %ei = tensor.empty() : tensor<1x3xi64>
  %ones = linalg.fill ins(%c1 : i64) outs(%ei : tensor<1x3xi64>) -> tensor<1x3xi64>
  %z = linalg.fill ins(%c0 : i64) outs(%ei : tensor<1x3xi64>) -> tensor<1x3xi64>
  %ea = tensor.empty() : tensor<1xi64>
  %za = linalg.fill ins(%c0 : i64) outs(%ea : tensor<1xi64>) -> tensor<1xi64>
  %cs:2 = "tm_tensor.scan"(%ones, %z, %za) <{dimension = 1 : i64, inclusive = true, operandSegmentSizes = array<i32: 1, 2>}> ({
  ^bb0(%a: i64, %b: i64):
    %s = arith.addi %a, %b : i64
    "tm_tensor.yield"(%s) : (i64) -> ()
  }) : (tensor<1x3xi64>, tensor<1x3xi64>, tensor<1xi64>) -> (tensor<1x3xi64>, tensor<1xi64>)
  %pids = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%cs#0 : tensor<1x3xi64>) outs(%ei : tensor<1x3xi64>) {
  ^bb0(%a: i64, %o: i64):
    %s = arith.subi %a, %c1 : i64
    linalg.yield %s : i64
  } -> tensor<1x3xi64>
  %p = linalg.generic {indexing_maps = [#ids, #out], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%pids : tensor<1x3xi64>) outs(%e : tensor<1x3x4xf32>) {
  ^bb0(%i: i64, %o: f32):
    %r = arith.index_cast %i : i64 to index
    %d = linalg.index 2 : index
    %v = tensor.extract %pos[%r, %d] : tensor<5x4xf32>
    linalg.yield %v : f32
  } -> tensor<1x3x4xf32>
  %sum = linalg.generic {indexing_maps = [#out, #out, #out], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%t, %p : tensor<1x3x4xf32>, tensor<1x3x4xf32>) outs(%e : tensor<1x3x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<1x3x4xf32>
  return %sum : tensor<1x3x4xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>

// Every index a constant (torch's as_strided after a pool, advanced
// indexing at constant positions): the table read flat at positions
// computed now, here its transpose.
// CHECK-LABEL: func.func @constant_positions
// CHECK: %[[FLAT:.*]] = doppler.reshape %arg0 : tensor<2x3xf32> -> tensor<6xf32>
// CHECK: %[[AT:.*]] = arith.constant dense<{{\[\[}}0, 3], [1, 4], [2, 5]]> : tensor<3x2xi64>
// CHECK: doppler.gather %[[FLAT]][%[[AT]]] axis 0 : tensor<6xf32>, tensor<3x2xi64> -> tensor<3x2xf32>
func.func @constant_positions(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %rows = arith.constant dense<[[0, 1], [0, 1], [0, 1]]> : tensor<3x2xi64>
  %e = tensor.empty() : tensor<3x2xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%rows : tensor<3x2xi64>) outs(%e : tensor<3x2xf32>) {
  ^bb0(%i: i64, %o: f32):
    %a = arith.index_cast %i : i64 to index
    %b = linalg.index 0 : index
    %v = tensor.extract %x[%a, %b] : tensor<2x3xf32>
    linalg.yield %v : f32
  } -> tensor<3x2xf32>
  return %r : tensor<3x2xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>

// The exact GELU: 0.5 x (1 + erf(x / sqrt 2)), erf a join.
// CHECK-LABEL: func.func @erf_gelu
// CHECK: join(erf)
// CHECK-NOT: gelu
func.func @erf_gelu(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %rsqrt2 = arith.constant 0.707106769 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %rsqrt2 : f32
    %f = math.erf %s : f32
    %p = arith.addf %f, %one : f32
    %h = arith.mulf %a, %half : f32
    %v = arith.mulf %h, %p : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
