// convert-linalg-to-doppler on the named linalg ops: contractions (matmul,
// its transposed forms through indexing_maps, batch_matmul,
// batch_reduce_matmul, matvec, vecmat, dot, contract), transpose, broadcast,
// copy, fill, reduce, the named elementwise ops, linalg.elementwise and
// linalg.softmax.
// RUN: doppler-opt %s --split-input-file --convert-linalg-to-doppler="full=true" | FileCheck %s

// linalg.matmul with a zero-filled init: the init is dropped.
// CHECK-LABEL: func.func @matmul(
// CHECK: %0 = doppler.einsum "ik,kj->ij" join(mul) agg(add) (%arg0, %arg1) : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
// CHECK: return %0 : tensor<8x32xf32>
// CHECK-NOT: linalg.
func.func @matmul(%a: tensor<8x16xf32>, %b: tensor<16x32xf32>) -> tensor<8x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  %r = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x32xf32>)
                     outs(%init : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %r : tensor<8x32xf32>
}

// -----

// linalg.matmul accumulating into an argument: one more einsum adds it.
// CHECK-LABEL: func.func @matmul_accumulate(
// CHECK: %0 = doppler.einsum "ik,kj->ij" join(mul) agg(add) (%arg0, %arg1) : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
// CHECK: %1 = doppler.einsum "ij,ij->ij" join(add) (%0, %arg2) : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
// CHECK: return %1 : tensor<8x32xf32>
// CHECK-NOT: linalg.
func.func @matmul_accumulate(%a: tensor<8x16xf32>, %b: tensor<16x32xf32>, %c: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x32xf32>)
                     outs(%c : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %r : tensor<8x32xf32>
}

// -----

// linalg.matmul with indexing_maps: A transposed, then B transposed.
// CHECK-LABEL: func.func @matmul_transpose_a(
// CHECK: %0 = doppler.einsum "ki,kj->ij" join(mul) agg(add) (%arg0, %arg1) : (tensor<16x8xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
// CHECK: return %0 : tensor<8x32xf32>
// CHECK-NOT: linalg.
func.func @matmul_transpose_a(%a: tensor<16x8xf32>, %b: tensor<16x32xf32>, %c: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %zero = arith.constant 0.0 : f32
  %init = linalg.fill ins(%zero : f32) outs(%c : tensor<8x32xf32>) -> tensor<8x32xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>,
                                      affine_map<(m, n, k) -> (k, n)>,
                                      affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : tensor<16x8xf32>, tensor<16x32xf32>)
      outs(%init : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %r : tensor<8x32xf32>
}

// -----

// CHECK-LABEL: func.func @matmul_transpose_b(
// CHECK: %0 = doppler.einsum "ik,jk->ij" join(mul) agg(add) (%arg0, %arg1) : (tensor<8x16xf32>, tensor<32x16xf32>) -> tensor<8x32xf32>
// CHECK: return %0 : tensor<8x32xf32>
// CHECK-NOT: linalg.
func.func @matmul_transpose_b(%a: tensor<8x16xf32>, %b: tensor<32x16xf32>, %c: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %zero = arith.constant 0.0 : f32
  %init = linalg.fill ins(%zero : f32) outs(%c : tensor<8x32xf32>) -> tensor<8x32xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                      affine_map<(m, n, k) -> (n, k)>,
                                      affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : tensor<8x16xf32>, tensor<32x16xf32>)
      outs(%init : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %r : tensor<8x32xf32>
}

// -----

// linalg.batch_matmul
// CHECK-LABEL: func.func @batch_matmul(
// CHECK: %0 = doppler.einsum "ijl,ilk->ijk" join(mul) agg(add) (%arg0, %arg1) : (tensor<4x8x16xf32>, tensor<4x16x32xf32>) -> tensor<4x8x32xf32>
// CHECK: return %0 : tensor<4x8x32xf32>
// CHECK-NOT: linalg.
func.func @batch_matmul(%a: tensor<4x8x16xf32>, %b: tensor<4x16x32xf32>) -> tensor<4x8x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8x32xf32>) -> tensor<4x8x32xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<4x8x16xf32>, tensor<4x16x32xf32>)
                           outs(%init : tensor<4x8x32xf32>) -> tensor<4x8x32xf32>
  return %r : tensor<4x8x32xf32>
}

// -----

// linalg.batch_reduce_matmul: the batch is reduced too.
// CHECK-LABEL: func.func @batch_reduce_matmul(
// CHECK: %0 = doppler.einsum "ijl,ilk->jk" join(mul) agg(add) (%arg0, %arg1) : (tensor<4x8x16xf32>, tensor<4x16x32xf32>) -> tensor<8x32xf32>
// CHECK: return %0 : tensor<8x32xf32>
// CHECK-NOT: linalg.
func.func @batch_reduce_matmul(%a: tensor<4x8x16xf32>, %b: tensor<4x16x32xf32>) -> tensor<8x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  %r = linalg.batch_reduce_matmul ins(%a, %b : tensor<4x8x16xf32>, tensor<4x16x32xf32>)
                                  outs(%init : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %r : tensor<8x32xf32>
}

// -----

// linalg.matvec, linalg.vecmat, linalg.dot
// CHECK-LABEL: func.func @matvec(
// CHECK: %0 = doppler.einsum "ij,j->i" join(mul) agg(add) (%arg0, %arg1) : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8xf32>
// CHECK: return %0 : tensor<8xf32>
// CHECK-NOT: linalg.
func.func @matvec(%a: tensor<8x16xf32>, %x: tensor<16xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
  %zero = arith.constant 0.0 : f32
  %init = linalg.fill ins(%zero : f32) outs(%y : tensor<8xf32>) -> tensor<8xf32>
  %r = linalg.matvec ins(%a, %x : tensor<8x16xf32>, tensor<16xf32>) outs(%init : tensor<8xf32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// CHECK-LABEL: func.func @vecmat(
// CHECK: %0 = doppler.einsum "j,ji->i" join(mul) agg(add) (%arg0, %arg1) : (tensor<8xf32>, tensor<8x16xf32>) -> tensor<16xf32>
// CHECK: return %0 : tensor<16xf32>
// CHECK-NOT: linalg.
func.func @vecmat(%x: tensor<8xf32>, %a: tensor<8x16xf32>, %y: tensor<16xf32>) -> tensor<16xf32> {
  %zero = arith.constant 0.0 : f32
  %init = linalg.fill ins(%zero : f32) outs(%y : tensor<16xf32>) -> tensor<16xf32>
  %r = linalg.vecmat ins(%x, %a : tensor<8xf32>, tensor<8x16xf32>) outs(%init : tensor<16xf32>) -> tensor<16xf32>
  return %r : tensor<16xf32>
}

// CHECK-LABEL: func.func @dot(
// CHECK: %0 = doppler.einsum "i,i->" join(mul) agg(add) (%arg0, %arg1) : (tensor<16xf32>, tensor<16xf32>) -> tensor<f32>
// CHECK: return %0 : tensor<f32>
// CHECK-NOT: linalg.
func.func @dot(%x: tensor<16xf32>, %y: tensor<16xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %r = linalg.dot ins(%x, %y : tensor<16xf32>, tensor<16xf32>) outs(%init : tensor<f32>) -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// linalg.contract: a batched contraction written with indexing maps.
// CHECK-LABEL: func.func @contract(
// CHECK: %0 = doppler.einsum "ijl,lik->ijk" join(mul) agg(add) (%arg0, %arg1) : (tensor<2x8x16xf32>, tensor<16x2x32xf32>) -> tensor<2x8x32xf32>
// CHECK: return %0 : tensor<2x8x32xf32>
// CHECK-NOT: linalg.
func.func @contract(%a: tensor<2x8x16xf32>, %b: tensor<16x2x32xf32>) -> tensor<2x8x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x8x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
  %r = linalg.contract indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>,
                                        affine_map<(b, m, n, k) -> (k, b, n)>,
                                        affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%a, %b : tensor<2x8x16xf32>, tensor<16x2x32xf32>)
      outs(%init : tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
  return %r : tensor<2x8x32xf32>
}

// -----

// linalg.transpose, linalg.broadcast, linalg.copy
// CHECK-LABEL: func.func @transpose(
// CHECK: %0 = doppler.einsum "jki->ijk" join(identity) (%arg0) : (tensor<8x16x4xf32>) -> tensor<4x8x16xf32>
// CHECK: return %0 : tensor<4x8x16xf32>
// CHECK-NOT: linalg.
func.func @transpose(%x: tensor<8x16x4xf32>) -> tensor<4x8x16xf32> {
  %e = tensor.empty() : tensor<4x8x16xf32>
  %r = linalg.transpose ins(%x : tensor<8x16x4xf32>) outs(%e : tensor<4x8x16xf32>) permutation = [2, 0, 1]
  return %r : tensor<4x8x16xf32>
}

// CHECK-LABEL: func.func @broadcast(
// CHECK: %0 = doppler.fill -0.0 : tensor<16xf32>
// CHECK: %1 = doppler.einsum "i,j->ij" join(add) (%arg0, %0) : (tensor<8xf32>, tensor<16xf32>) -> tensor<8x16xf32>
// CHECK: return %1 : tensor<8x16xf32>
// CHECK-NOT: linalg.
func.func @broadcast(%x: tensor<8xf32>) -> tensor<8x16xf32> {
  %e = tensor.empty() : tensor<8x16xf32>
  %r = linalg.broadcast ins(%x : tensor<8xf32>) outs(%e : tensor<8x16xf32>) dimensions = [1]
  return %r : tensor<8x16xf32>
}

// CHECK-LABEL: func.func @copy(
// CHECK: return %arg0 : tensor<8x16xf32>
// CHECK-NOT: linalg.
func.func @copy(%x: tensor<8x16xf32>, %y: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %r = linalg.copy ins(%x : tensor<8x16xf32>) outs(%y : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// -----

// linalg.fill of a constant.
// CHECK-LABEL: func.func @fill(
// CHECK: %0 = doppler.fill 2.5 : tensor<8x16xf32>
// CHECK: return %0 : tensor<8x16xf32>
// CHECK-NOT: linalg.
func.func @fill() -> tensor<8x16xf32> {
  %c = arith.constant 2.5 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %r = linalg.fill ins(%c : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// -----

// linalg.reduce: a sum with a zero init, a max with a -inf init, a sum
// accumulating into an argument.
// CHECK-LABEL: func.func @reduce_sum(
// CHECK: %0 = doppler.einsum "ij->i" join(identity) agg(add) (%arg0) : (tensor<8x16xf32>) -> tensor<8xf32>
// CHECK: return %0 : tensor<8xf32>
// CHECK-NOT: linalg.
func.func @reduce_sum(%x: tensor<8x16xf32>) -> tensor<8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %r = linalg.reduce ins(%x : tensor<8x16xf32>) outs(%init : tensor<8xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<8xf32>
}

// CHECK-LABEL: func.func @reduce_max(
// CHECK: %0 = doppler.einsum "ij->j" join(identity) agg(max) (%arg0) : (tensor<8x16xf32>) -> tensor<16xf32>
// CHECK: return %0 : tensor<16xf32>
// CHECK-NOT: linalg.
func.func @reduce_max(%x: tensor<8x16xf32>) -> tensor<16xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<16xf32>
  %init = linalg.fill ins(%ninf : f32) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %r = linalg.reduce ins(%x : tensor<8x16xf32>) outs(%init : tensor<16xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %m = arith.maximumf %in, %acc : f32
      linalg.yield %m : f32
    }
  return %r : tensor<16xf32>
}

// CHECK-LABEL: func.func @reduce_accumulate(
// CHECK: %0 = doppler.einsum "ij->i" join(identity) agg(mul) (%arg0) : (tensor<8x16xf32>) -> tensor<8xf32>
// CHECK: %1 = doppler.einsum "i,i->i" join(mul) (%0, %arg1) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
// CHECK: return %1 : tensor<8xf32>
// CHECK-NOT: linalg.
func.func @reduce_accumulate(%x: tensor<8x16xf32>, %acc0: tensor<8xf32>) -> tensor<8xf32> {
  %r = linalg.reduce ins(%x : tensor<8x16xf32>) outs(%acc0 : tensor<8xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.mulf %acc, %in : f32
      linalg.yield %s : f32
    }
  return %r : tensor<8xf32>
}

// -----

// The named elementwise ops: linalg.add, sub, mul, div, max, min, powf
// (binary), exp, log, sqrt, rsqrt, tanh, negf, abs, reciprocal, square
// (unary).
// CHECK-LABEL: func.func @binary(
// CHECK: %0 = doppler.einsum "ij,ij->ij" join(add) (%arg0, %arg1) : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK: %1 = doppler.einsum "ij,ij->ij" join(sub) (%0, %arg1) : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK: %2 = doppler.einsum "ij,ij->ij" join(mul) (%1, %arg1) : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK: %3 = doppler.einsum "ij,ij->ij" join(div) (%2, %arg1) : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK: %4 = doppler.einsum "ij,ij->ij" join(max) (%3, %arg1) : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK: %5 = doppler.einsum "ij,ij->ij" join(min) (%4, %arg1) : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK: %6 = doppler.einsum "ij,ij->ij" join(pow) (%5, %arg1) : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK: return %6 : tensor<8x16xf32>
// CHECK-NOT: linalg.
func.func @binary(%x: tensor<8x16xf32>, %y: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %e = tensor.empty() : tensor<8x16xf32>
  %0 = linalg.add ins(%x, %y : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %1 = linalg.sub ins(%0, %y : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %2 = linalg.mul ins(%1, %y : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %3 = linalg.div ins(%2, %y : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %4 = linalg.max ins(%3, %y : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %5 = linalg.min ins(%4, %y : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %6 = linalg.powf ins(%5, %y : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %6 : tensor<8x16xf32>
}

// CHECK-LABEL: func.func @unary(
// CHECK: %0 = doppler.einsum "ij->ij" join(exp) (%arg0) : (tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK: %1 = doppler.einsum "ij->ij" join(log) (%0) : (tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK: %2 = doppler.einsum "ij->ij" join(sqrt) (%1) : (tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK: %3 = doppler.einsum "ij->ij" join(rsqrt) (%2) : (tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK: %4 = doppler.einsum "ij->ij" join(tanh) (%3) : (tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK: %5 = doppler.einsum "ij->ij" join(neg) (%4) : (tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK: %6 = doppler.einsum "ij->ij" join(abs) (%5) : (tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK: %7 = doppler.einsum "ij->ij" join(reciprocal) (%6) : (tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK: %8 = doppler.einsum "ij->ij" join(square) (%7) : (tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK: return %8 : tensor<8x16xf32>
// CHECK-NOT: linalg.
func.func @unary(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %e = tensor.empty() : tensor<8x16xf32>
  %0 = linalg.exp ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %1 = linalg.log ins(%0 : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %2 = linalg.sqrt ins(%1 : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %3 = linalg.rsqrt ins(%2 : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %4 = linalg.tanh ins(%3 : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %5 = linalg.negf ins(%4 : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %6 = linalg.abs ins(%5 : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %7 = linalg.reciprocal ins(%6 : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %8 = linalg.square ins(%7 : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %8 : tensor<8x16xf32>
}

// -----

// linalg.elementwise, unary and binary kinds, with a transposed operand.
// CHECK-LABEL: func.func @elementwise(
// CHECK: %0 = doppler.einsum "ij->ij" join(exp) (%arg0) : (tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK: %1 = doppler.einsum "ij,ji->ij" join(mul) (%0, %arg1) : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x16xf32>
// CHECK: return %1 : tensor<8x16xf32>
// CHECK-NOT: linalg.
func.func @elementwise(%x: tensor<8x16xf32>, %y: tensor<16x8xf32>) -> tensor<8x16xf32> {
  %e = tensor.empty() : tensor<8x16xf32>
  %0 = linalg.elementwise kind=#linalg.elementwise_kind<exp>
      ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %1 = linalg.elementwise kind=#linalg.elementwise_kind<mul>
      indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                       affine_map<(d0, d1) -> (d1, d0)>,
                       affine_map<(d0, d1) -> (d0, d1)>]
      ins(%0, %y : tensor<8x16xf32>, tensor<16x8xf32>) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}

// -----

// linalg.softmax: max, subtract, exp, sum, divide.
// CHECK-LABEL: func.func @softmax(
// CHECK: %0 = doppler.einsum "ijk->ij" join(identity) agg(max) (%arg0) : (tensor<2x8x16xf32>) -> tensor<2x8xf32>
// CHECK: %1 = doppler.einsum "ijk,ij->ijk" join(sub) (%arg0, %0) : (tensor<2x8x16xf32>, tensor<2x8xf32>) -> tensor<2x8x16xf32>
// CHECK: %2 = doppler.einsum "ijk->ijk" join(exp) (%1) : (tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
// CHECK: %3 = doppler.einsum "ijk->ij" join(identity) agg(add) (%2) : (tensor<2x8x16xf32>) -> tensor<2x8xf32>
// CHECK: %4 = doppler.einsum "ijk,ij->ijk" join(div) (%2, %3) : (tensor<2x8x16xf32>, tensor<2x8xf32>) -> tensor<2x8x16xf32>
// CHECK: return %4 : tensor<2x8x16xf32>
// CHECK-NOT: linalg.
func.func @softmax(%x: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  %e = tensor.empty() : tensor<2x8x16xf32>
  %r = linalg.softmax dimension(2) ins(%x : tensor<2x8x16xf32>) outs(%e : tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  return %r : tensor<2x8x16xf32>
}
