// Integers and booleans computed from data, carried as f64 floats
// (IntegerCarriers.cpp): an i64 attention mask compared with 0, and-ed with
// a constant causal mask, gathered at constant positions and selected on;
// RoBERTa's positions cumsum(ids != pad) * mask + pad (a tm_tensor.scan)
// and the gather at them; a mask over the fold limit computed where the
// program runs. Numerically: the round trip of roundtrip-masks.mlir and
// the zoo's BERT, LLaMA, Mistral, DistilBERT and RoBERTa against PyTorch
// (python/tests/test_zoo_linalg.py, docs/zoo.md).
// RUN: doppler-opt %s --allow-unregistered-dialect --split-input-file --convert-linalg-to-doppler="full=true fold-limit=4" | FileCheck %s

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>

// CHECK-LABEL: func.func @padding_mask
// CHECK: %[[M:.*]] = doppler.einsum "ij->ij" join(identity) (%arg0) : (tensor<2x4xi64>) -> tensor<2x4xf64>
// CHECK: doppler.einsum "ij,->ij" join(ne) (%[[M]], %{{.*}}) : (tensor<2x4xf64>, tensor<f64>) -> tensor<2x4xf64>
// CHECK: join(mul)
// CHECK: doppler.einsum "ij->ij" join(identity) (%{{.*}}) : (tensor<2x4xf64>) -> tensor<2x4xf32>
// CHECK: join(where)
// CHECK: join(eq)
// CHECK: join(where)
// CHECK: join(add)
// CHECK-NOT: linalg.
func.func @padding_mask(%mask: tensor<2x4xi64>, %scores: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %c0 = arith.constant 0 : i64
  %causal = arith.constant dense<[[true, false, true, true], [true, true, false, true]]> : tensor<2x4xi1>
  %eb = tensor.empty() : tensor<2x4xi1>
  %keep = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mask : tensor<2x4xi64>) outs(%eb : tensor<2x4xi1>) {
  ^bb0(%m: i64, %o: i1):
    %ne = arith.cmpi ne, %m, %c0 : i64
    linalg.yield %ne : i1
  } -> tensor<2x4xi1>
  %both = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%keep, %causal : tensor<2x4xi1>, tensor<2x4xi1>) outs(%eb : tensor<2x4xi1>) {
  ^bb0(%a: i1, %b: i1, %o: i1):
    %and = arith.andi %a, %b : i1
    linalg.yield %and : i1
  } -> tensor<2x4xi1>
  %min = arith.constant -3.40282347E+38 : f32
  %ef = tensor.empty() : tensor<2x4xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%both, %scores : tensor<2x4xi1>, tensor<2x4xf32>) outs(%ef : tensor<2x4xf32>) {
  ^bb0(%c: i1, %s: f32, %o: f32):
    %v = arith.select %c, %s, %min : f32
    linalg.yield %v : f32
  } -> tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#gather = affine_map<(d0, d1, d2) -> (d0, d1)>
#out3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// RoBERTa's position ids: cumsum(ids != 1) * (ids != 1) + 1, gathered at.
// CHECK-LABEL: func.func @positions
// CHECK: join(ne)
// The triangle of the cumsum (j <= i, from two iotas) and the contraction.
// CHECK: doppler.einsum "i,j->ij" join(le)
// CHECK: doppler.einsum "ik,kj->ij" join(mul) agg(add)
// CHECK: join(mul)
// CHECK: join(shift, 1.0)
// CHECK: doppler.gather %{{.*}}[%{{.*}}] axis 0 : tensor<6x3xf32>, tensor<2x4xf64> -> tensor<2x4x3xf32>
// CHECK-NOT: linalg.
// CHECK-NOT: tm_tensor
func.func @positions(%ids: tensor<2x4xi64>, %table: tensor<6x3xf32>) -> tensor<2x4x3xf32> {
  %c1 = arith.constant 1 : i64
  %c0 = arith.constant 0 : i64
  %eb = tensor.empty() : tensor<2x4xi1>
  %real = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<2x4xi64>) outs(%eb : tensor<2x4xi1>) {
  ^bb0(%i: i64, %o: i1):
    %ne = arith.cmpi ne, %i, %c1 : i64
    linalg.yield %ne : i1
  } -> tensor<2x4xi1>
  %ei = tensor.empty() : tensor<2x4xi64>
  %asint = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%real : tensor<2x4xi1>) outs(%ei : tensor<2x4xi64>) {
  ^bb0(%b: i1, %o: i64):
    %x = arith.extui %b : i1 to i64
    linalg.yield %x : i64
  } -> tensor<2x4xi64>
  %zeros = linalg.fill ins(%c0 : i64) outs(%ei : tensor<2x4xi64>) -> tensor<2x4xi64>
  %e1 = tensor.empty() : tensor<2xi64>
  %acc = linalg.fill ins(%c0 : i64) outs(%e1 : tensor<2xi64>) -> tensor<2xi64>
  %scan:2 = "tm_tensor.scan"(%asint, %zeros, %acc) <{dimension = 1 : i64, inclusive = true, operandSegmentSizes = array<i32: 1, 2>}> ({
  ^bb0(%a: i64, %b: i64):
    %s = arith.addi %a, %b : i64
    "tm_tensor.yield"(%s) : (i64) -> ()
  }) : (tensor<2x4xi64>, tensor<2x4xi64>, tensor<2xi64>) -> (tensor<2x4xi64>, tensor<2xi64>)
  %pos = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%scan#0, %asint : tensor<2x4xi64>, tensor<2x4xi64>) outs(%ei : tensor<2x4xi64>) {
  ^bb0(%s: i64, %m: i64, %o: i64):
    %p = arith.muli %s, %m : i64
    %q = arith.addi %p, %c1 : i64
    linalg.yield %q : i64
  } -> tensor<2x4xi64>
  %ef = tensor.empty() : tensor<2x4x3xf32>
  %emb = linalg.generic {indexing_maps = [#gather, #out3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%pos : tensor<2x4xi64>) outs(%ef : tensor<2x4x3xf32>) {
  ^bb0(%p: i64, %o: f32):
    %r = arith.index_cast %p : i64 to index
    %d = linalg.index 2 : index
    %v = tensor.extract %table[%r, %d] : tensor<6x3xf32>
    linalg.yield %v : f32
  } -> tensor<2x4x3xf32>
  return %emb : tensor<2x4x3xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>

// A causal mask from constants over fold-limit (here 4; 16 elements) is
// computed where the program runs, on floats.
// CHECK-LABEL: func.func @mask_over_the_limit
// CHECK: arith.constant dense<[0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<4xf64>
// CHECK: join(le)
// CHECK: join(where)
// CHECK-NOT: linalg.
func.func @mask_over_the_limit(%scores: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %pos = arith.constant dense<[0, 1, 2, 3]> : tensor<4xi64>
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

// A batched gather at positions computed from data (RoBERTa's positions at
// batch 2: out[b, t] = table[b, pos[b, t]]): the table flattened, the
// positions offset by b * 6 (exact in f64), one gather.
// CHECK-LABEL: func.func @take_along
// CHECK: doppler.reshape %arg1 : tensor<2x6xf32> -> tensor<12xf32>
// CHECK: join(ge)
// CHECK: join(lt)
// CHECK: arith.constant dense<[0.000000e+00, 6.000000e+00]> : tensor<2xf64>
// CHECK: doppler.einsum "ij,i->ij" join(add)
// An index outside its row becomes -1 (an error where the gather runs).
// CHECK: doppler.fill -1.0
// CHECK: join(where)
// CHECK: join(where)
// CHECK: doppler.gather %{{.*}}[%{{.*}}] axis 0 : tensor<12xf32>, tensor<2x4xf64> -> tensor<2x4xf32>
// CHECK-NOT: linalg.
func.func @take_along(%ids: tensor<2x4xi64>, %table: tensor<2x6xf32>) -> tensor<2x4xf32> {
  %c1 = arith.constant 1 : i64
  %ei = tensor.empty() : tensor<2x4xi64>
  %pos = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<2x4xi64>) outs(%ei : tensor<2x4xi64>) {
  ^bb0(%i: i64, %o: i64):
    %p = arith.addi %i, %c1 : i64
    linalg.yield %p : i64
  } -> tensor<2x4xi64>
  %ef = tensor.empty() : tensor<2x4xf32>
  %g = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%pos : tensor<2x4xi64>) outs(%ef : tensor<2x4xf32>) {
  ^bb0(%p: i64, %o: f32):
    %b = linalg.index 0 : index
    %r = arith.index_cast %p : i64 to index
    %v = tensor.extract %table[%b, %r] : tensor<2x6xf32>
    linalg.yield %v : f32
  } -> tensor<2x4xf32>
  return %g : tensor<2x4xf32>
}
