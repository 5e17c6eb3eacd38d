// Forms torch-mlir's torch-to-linalg writes (as in the LLaMA/GPT blocks of
// scripts/torch_to_linalg.py): keepdim reductions (a constant 0 in the
// output map), scalar arguments as `arith.truncf` of an f64 constant,
// bodies computing through f64 (extf ... truncf), and torch's max with
// indices whose index result is dead. Each converts completely and is
// compared with hand-written doppler (Inputs/torch-forms-reference.mlir).
// RUN: doppler-opt %s --convert-linalg-to-doppler=full=true -o %t.mlir
// RUN: FileCheck %s < %t.mlir
// RUN: FileCheck %s --check-prefix=OPS < %t.mlir
// OPS-NOT: {{linalg\.|tensor\.|arith\.}}
// RUN: doppler-interpret %t.mlir --function=rms_norm --compare %S/Inputs/torch-forms-reference.mlir --tolerance 1e-5 | FileCheck %s --check-prefix=NUM
// RUN: doppler-interpret %t.mlir --function=softmax_by_max_with_indices --compare %S/Inputs/torch-forms-reference.mlir --tolerance 1e-5 | FileCheck %s --check-prefix=NUM
// RUN: doppler-interpret %t.mlir --function=through_f64 --compare %S/Inputs/torch-forms-reference.mlir --tolerance 1e-5 | FileCheck %s --check-prefix=NUM
// NUM: max rel-error {{.*}} <= tolerance 1e-05: ok

#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#keep = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#bcast = affine_map<(d0, d1, d2) -> (d0, d1, 0)>

// RMSNorm as torch-mlir writes it: sum of squares into [2, 16, 1], / 64,
// + eps (an f64 constant truncated in the body: rounded to f32), rsqrt,
// times x.
// CHECK-LABEL: func.func @rms_norm(
// CHECK: doppler.einsum "ijk->ij" join(square) agg(add)
// CHECK: doppler.einsum "ij,l->ijl" join(add)
// CHECK: join(scale, 0.015625)
// CHECK: join(shift, 9.999999747378752e-06)
func.func @rms_norm(%x: tensor<2x16x64xf32>) -> tensor<2x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 64.0 : f32
  %eps = arith.constant 1.0e-05 : f64
  %e1 = tensor.empty() : tensor<2x16x1xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x16x1xf32>) -> tensor<2x16x1xf32>
  %ss = linalg.generic {indexing_maps = [#map, #keep], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<2x16x64xf32>) outs(%z : tensor<2x16x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %sq, %out : f32
    linalg.yield %s : f32
  } -> tensor<2x16x1xf32>
  %inv = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ss : tensor<2x16x1xf32>) outs(%e1 : tensor<2x16x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.divf %in, %n : f32
    %c = arith.truncf %eps : f64 to f32
    %a = arith.addf %m, %c : f32
    %r = math.rsqrt %a : f32
    linalg.yield %r : f32
  } -> tensor<2x16x1xf32>
  %e = tensor.empty() : tensor<2x16x64xf32>
  %y = linalg.generic {indexing_maps = [#map, #bcast, #map], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %inv : tensor<2x16x64xf32>, tensor<2x16x1xf32>) outs(%e : tensor<2x16x64xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %r = arith.mulf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<2x16x64xf32>
  return %y : tensor<2x16x64xf32>
}

// Softmax through torch's max with indices (the index result unused) and
// a keepdim sum accumulated into an argument.
// CHECK-LABEL: func.func @softmax_by_max_with_indices(
// CHECK: doppler.einsum "ijk->ij" join(identity) agg(max)
func.func @softmax_by_max_with_indices(%x: tensor<2x4x8xf32>, %acc: tensor<2x4x1xf32>)
    -> (tensor<2x4x8xf32>, tensor<2x4x1xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %c0 = arith.constant 0 : i64
  %ei = tensor.empty() : tensor<2x4xi64>
  %i0 = linalg.fill ins(%c0 : i64) outs(%ei : tensor<2x4xi64>) -> tensor<2x4xi64>
  %ef = tensor.empty() : tensor<2x4xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%ef : tensor<2x4xf32>) -> tensor<2x4xf32>
  %max:2 = linalg.generic {indexing_maps = [#map, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>],
                           iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<2x4x8xf32>) outs(%m0, %i0 : tensor<2x4xf32>, tensor<2x4xi64>) {
  ^bb0(%in: f32, %out: f32, %idx: i64):
    %i = linalg.index 2 : index
    %ic = arith.index_cast %i : index to i64
    %m = arith.maximumf %in, %out : f32
    %gt = arith.cmpf ogt, %in, %out : f32
    %s = arith.select %gt, %ic, %idx : i64
    linalg.yield %m, %s : f32, i64
  } -> (tensor<2x4xf32>, tensor<2x4xi64>)
  %e = tensor.empty() : tensor<2x4x8xf32>
  %ex = linalg.generic {indexing_maps = [#map, affine_map<(d0, d1, d2) -> (d0, d1)>, #map], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %max#0 : tensor<2x4x8xf32>, tensor<2x4xf32>) outs(%e : tensor<2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %d = arith.subf %a, %b : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<2x4x8xf32>
  %sum = linalg.generic {indexing_maps = [#map, #keep], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%ex : tensor<2x4x8xf32>) outs(%acc : tensor<2x4x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<2x4x1xf32>
  %y = linalg.generic {indexing_maps = [#map, #bcast, #map], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ex, %sum : tensor<2x4x8xf32>, tensor<2x4x1xf32>) outs(%e : tensor<2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %r = arith.divf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<2x4x8xf32>
  return %y, %sum : tensor<2x4x8xf32>, tensor<2x4x1xf32>
}

// A body computing in f64: extf, the ops, truncf back; computed at f32.
// CHECK-LABEL: func.func @through_f64(
// CHECK: doppler.einsum "ijk,ijk->ijk" join(mul)
// CHECK: join(shift, 0.5)
func.func @through_f64(%x: tensor<2x4x8xf32>, %y: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %half = arith.constant 0.5 : f64
  %e = tensor.empty() : tensor<2x4x8xf32>
  %r = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %y : tensor<2x4x8xf32>, tensor<2x4x8xf32>) outs(%e : tensor<2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %a64 = arith.extf %a : f32 to f64
    %b64 = arith.extf %b : f32 to f64
    %p = arith.mulf %a64, %b64 : f64
    %s = arith.addf %p, %half : f64
    %t = arith.truncf %s : f64 to f32
    linalg.yield %t : f32
  } -> tensor<2x4x8xf32>
  return %r : tensor<2x4x8xf32>
}
