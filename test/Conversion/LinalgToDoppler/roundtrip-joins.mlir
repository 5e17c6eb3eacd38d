// Numeric round trip of every join and aggregation: this doppler program
// -> convert-doppler-to-linalg -> convert-linalg-to-doppler (full=true)
// leaves no linalg or tensor op and computes what the original computes
// (reference interpreter, seeded inputs in [-1, 1), two seeds).
// RUN: doppler-opt %s --convert-doppler-to-linalg -o %t.linalg.mlir
// RUN: doppler-opt %t.linalg.mlir --convert-linalg-to-doppler=full=true -o %t.back.mlir
// RUN: FileCheck %s --check-prefix=OPS < %t.back.mlir
// RUN: doppler-interpret %t.back.mlir --compare %s --tolerance 1e-5 | FileCheck %s
// RUN: doppler-interpret %t.back.mlir --compare %s --tolerance 1e-5 --seed 7 | FileCheck %s
// OPS-NOT: linalg.
// OPS-NOT: tensor.
// CHECK: compared with '{{.*}}': max rel-error {{.*}} <= tolerance 1e-05: ok

func.func @every_join(%a: tensor<6x8xf32>, %b: tensor<6x8xf32>, %v: tensor<8xf32>)
    -> (tensor<6x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>,
        tensor<6x8xf32>, tensor<6x8xf32>, tensor<6xf32>, tensor<8xf32>,
        tensor<6xf32>, tensor<6xf32>, tensor<6x6xf32>, tensor<6x8xf32>) {
  // A positive copy of each input (|x| + 1) for log, sqrt, pow, div, ...
  %absa = doppler.einsum "ij->ij" join(abs) (%a) : (tensor<6x8xf32>) -> tensor<6x8xf32>
  %pa = doppler.einsum "ij->ij" join(shift, 1.0) (%absa) : (tensor<6x8xf32>) -> tensor<6x8xf32>
  %sqb = doppler.einsum "ij->ij" join(square) (%b) : (tensor<6x8xf32>) -> tensor<6x8xf32>
  %pb = doppler.einsum "ij->ij" join(shift, 0.5) (%sqb) : (tensor<6x8xf32>) -> tensor<6x8xf32>
  // Binary joins, one with a broadcast operand.
  %add = doppler.einsum "ij,j->ij" join(add) (%a, %v) : (tensor<6x8xf32>, tensor<8xf32>) -> tensor<6x8xf32>
  %sub = doppler.einsum "ij,ij->ij" join(sub) (%add, %b) : (tensor<6x8xf32>, tensor<6x8xf32>) -> tensor<6x8xf32>
  %mul = doppler.einsum "ij,ij->ij" join(mul) (%sub, %b) : (tensor<6x8xf32>, tensor<6x8xf32>) -> tensor<6x8xf32>
  %div = doppler.einsum "ij,ij->ij" join(div) (%mul, %pa) : (tensor<6x8xf32>, tensor<6x8xf32>) -> tensor<6x8xf32>
  %max = doppler.einsum "ij,ij->ij" join(max) (%div, %a) : (tensor<6x8xf32>, tensor<6x8xf32>) -> tensor<6x8xf32>
  %min = doppler.einsum "ij,ij->ij" join(min) (%max, %b) : (tensor<6x8xf32>, tensor<6x8xf32>) -> tensor<6x8xf32>
  %pow = doppler.einsum "ij,ij->ij" join(pow) (%pa, %b) : (tensor<6x8xf32>, tensor<6x8xf32>) -> tensor<6x8xf32>
  // Unary joins.
  %neg = doppler.einsum "ij->ij" join(neg) (%a) : (tensor<6x8xf32>) -> tensor<6x8xf32>
  %exp = doppler.einsum "ij->ij" join(exp) (%neg) : (tensor<6x8xf32>) -> tensor<6x8xf32>
  %log = doppler.einsum "ij->ij" join(log) (%pb) : (tensor<6x8xf32>) -> tensor<6x8xf32>
  %sqrt = doppler.einsum "ij->ij" join(sqrt) (%pa) : (tensor<6x8xf32>) -> tensor<6x8xf32>
  %rsqrt = doppler.einsum "ij->ij" join(rsqrt) (%pb) : (tensor<6x8xf32>) -> tensor<6x8xf32>
  %rcp = doppler.einsum "ij->ij" join(reciprocal) (%pa) : (tensor<6x8xf32>) -> tensor<6x8xf32>
  %relu = doppler.einsum "ij->ij" join(relu) (%b) : (tensor<6x8xf32>) -> tensor<6x8xf32>
  %silu = doppler.einsum "ij->ij" join(silu) (%a) : (tensor<6x8xf32>) -> tensor<6x8xf32>
  %gelu = doppler.einsum "ij->ij" join(gelu) (%b) : (tensor<6x8xf32>) -> tensor<6x8xf32>
  %tanh = doppler.einsum "ij->ij" join(tanh) (%a) : (tensor<6x8xf32>) -> tensor<6x8xf32>
  %sig = doppler.einsum "ij->ij" join(sigmoid) (%b) : (tensor<6x8xf32>) -> tensor<6x8xf32>
  %scale = doppler.einsum "ij->ij" join(scale, 0.3) (%a) : (tensor<6x8xf32>) -> tensor<6x8xf32>
  %shift = doppler.einsum "ij->ij" join(shift, -2.5) (%scale) : (tensor<6x8xf32>) -> tensor<6x8xf32>
  %t = doppler.einsum "ij->ji" join(identity) (%shift) : (tensor<6x8xf32>) -> tensor<8x6xf32>
  // Mix them so that each output depends on several joins.
  %u1 = doppler.einsum "ij,ij->ij" join(add) (%exp, %log) : (tensor<6x8xf32>, tensor<6x8xf32>) -> tensor<6x8xf32>
  %u2 = doppler.einsum "ij,ij->ij" join(mul) (%sqrt, %rsqrt) : (tensor<6x8xf32>, tensor<6x8xf32>) -> tensor<6x8xf32>
  %u3 = doppler.einsum "ij,ij->ij" join(sub) (%silu, %gelu) : (tensor<6x8xf32>, tensor<6x8xf32>) -> tensor<6x8xf32>
  %erf = doppler.einsum "ij->ij" join(erf) (%b) : (tensor<6x8xf32>) -> tensor<6x8xf32>
  %tanherf = doppler.einsum "ij,ij->ij" join(add) (%tanh, %erf) : (tensor<6x8xf32>, tensor<6x8xf32>) -> tensor<6x8xf32>
  %u4 = doppler.einsum "ij,ij->ij" join(add) (%tanherf, %sig) : (tensor<6x8xf32>, tensor<6x8xf32>) -> tensor<6x8xf32>
  %u5 = doppler.einsum "ij,ji->ij" join(add) (%rcp, %t) : (tensor<6x8xf32>, tensor<8x6xf32>) -> tensor<6x8xf32>
  // Every aggregation, with and without a join.
  %sum = doppler.einsum "ij->i" join(identity) agg(add) (%u1) : (tensor<6x8xf32>) -> tensor<6xf32>
  %prod = doppler.einsum "ij->j" join(identity) agg(mul) (%pa) : (tensor<6x8xf32>) -> tensor<8xf32>
  %amax = doppler.einsum "ij->i" join(relu) agg(max) (%u3) : (tensor<6x8xf32>) -> tensor<6xf32>
  %amin = doppler.einsum "ij,j->i" join(mul) agg(min) (%u4, %v) : (tensor<6x8xf32>, tensor<8xf32>) -> tensor<6xf32>
  %mm = doppler.einsum "ik,jk->ij" join(mul) agg(add) (%a, %b) : (tensor<6x8xf32>, tensor<6x8xf32>) -> tensor<6x6xf32>
  // Glue: slice, fill, assemble.
  %left = doppler.slice %relu [0, 0] : tensor<6x8xf32> to tensor<6x3xf32>
  %right = doppler.slice %pow [0, 3] : tensor<6x8xf32> to tensor<6x5xf32>
  %f = doppler.fill 0.25 : tensor<6x5xf32>
  %r2 = doppler.einsum "ij,ij->ij" join(add) (%right, %f) : (tensor<6x5xf32>, tensor<6x5xf32>) -> tensor<6x5xf32>
  %glued = doppler.assemble [1, 2] (%left, %r2) : tensor<6x3xf32>, tensor<6x5xf32> -> tensor<6x8xf32>
  return %u2, %u5, %min, %div, %sub, %glued, %sum, %prod, %amax, %amin, %mm, %u1
      : tensor<6x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>,
        tensor<6x8xf32>, tensor<6x8xf32>, tensor<6xf32>, tensor<8xf32>,
        tensor<6xf32>, tensor<6xf32>, tensor<6x6xf32>, tensor<6x8xf32>
}
