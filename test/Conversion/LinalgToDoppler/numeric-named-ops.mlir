// Numeric check of convert-linalg-to-doppler on hand-written linalg:
// each function converted (full=true, nothing left) computes what the
// same-named hand-written doppler function of Inputs/named-ops-reference.mlir
// computes (reference interpreter, seeded inputs in [-1, 1), relative error
// <= 1e-5 per output).
// RUN: doppler-opt %s --convert-linalg-to-doppler=full=true -o %t.mlir
// RUN: FileCheck %s --check-prefix=OPS < %t.mlir
// OPS-NOT: {{linalg\.|tensor\.}}
// RUN: doppler-interpret %t.mlir --function=contractions --compare %S/Inputs/named-ops-reference.mlir --tolerance 1e-5 | FileCheck %s
// RUN: doppler-interpret %t.mlir --function=batched --compare %S/Inputs/named-ops-reference.mlir --tolerance 1e-5 | FileCheck %s
// RUN: doppler-interpret %t.mlir --function=reductions --compare %S/Inputs/named-ops-reference.mlir --tolerance 1e-5 | FileCheck %s
// RUN: doppler-interpret %t.mlir --function=elementwise --compare %S/Inputs/named-ops-reference.mlir --tolerance 1e-5 | FileCheck %s
// RUN: doppler-interpret %t.mlir --function=elementwise --seed 5 --compare %S/Inputs/named-ops-reference.mlir --tolerance 1e-5 | FileCheck %s
// RUN: doppler-interpret %t.mlir --function=movement --compare %S/Inputs/named-ops-reference.mlir --tolerance 1e-5 | FileCheck %s
// RUN: doppler-interpret %t.mlir --function=softmax --compare %S/Inputs/named-ops-reference.mlir --tolerance 1e-5 | FileCheck %s
// RUN: doppler-interpret %t.mlir --function=bodies --compare %S/Inputs/named-ops-reference.mlir --tolerance 1e-5 | FileCheck %s
// CHECK: max rel-error {{.*}} <= tolerance 1e-05: ok

#mk = affine_map<(m, n, k) -> (m, k)>
#km = affine_map<(m, n, k) -> (k, m)>
#kn = affine_map<(m, n, k) -> (k, n)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>

// matmul (zero init, accumulating init, A or B transposed), matvec, vecmat, dot.
func.func @contractions(%a: tensor<6x5xf32>, %b: tensor<5x7xf32>, %c: tensor<6x7xf32>,
                        %at: tensor<5x6xf32>, %bt: tensor<7x5xf32>, %x: tensor<5xf32>,
                        %y: tensor<6xf32>)
    -> (tensor<6x7xf32>, tensor<6x7xf32>, tensor<6x7xf32>, tensor<6x7xf32>,
        tensor<6xf32>, tensor<5xf32>, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<6x7xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<6x7xf32>) -> tensor<6x7xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<6x5xf32>, tensor<5x7xf32>) outs(%z : tensor<6x7xf32>) -> tensor<6x7xf32>
  %1 = linalg.matmul ins(%a, %b : tensor<6x5xf32>, tensor<5x7xf32>) outs(%c : tensor<6x7xf32>) -> tensor<6x7xf32>
  %2 = linalg.matmul indexing_maps = [#km, #kn, #mn]
      ins(%at, %b : tensor<5x6xf32>, tensor<5x7xf32>) outs(%z : tensor<6x7xf32>) -> tensor<6x7xf32>
  %3 = linalg.matmul indexing_maps = [#mk, #nk, #mn]
      ins(%a, %bt : tensor<6x5xf32>, tensor<7x5xf32>) outs(%c : tensor<6x7xf32>) -> tensor<6x7xf32>
  %ey = tensor.empty() : tensor<6xf32>
  %zy = linalg.fill ins(%zero : f32) outs(%ey : tensor<6xf32>) -> tensor<6xf32>
  %4 = linalg.matvec ins(%a, %x : tensor<6x5xf32>, tensor<5xf32>) outs(%zy : tensor<6xf32>) -> tensor<6xf32>
  %ex = tensor.empty() : tensor<5xf32>
  %zx = linalg.fill ins(%zero : f32) outs(%ex : tensor<5xf32>) -> tensor<5xf32>
  %5 = linalg.vecmat ins(%y, %a : tensor<6xf32>, tensor<6x5xf32>) outs(%zx : tensor<5xf32>) -> tensor<5xf32>
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %6 = linalg.dot ins(%x, %x : tensor<5xf32>, tensor<5xf32>) outs(%zs : tensor<f32>) -> tensor<f32>
  return %0, %1, %2, %3, %4, %5, %6
      : tensor<6x7xf32>, tensor<6x7xf32>, tensor<6x7xf32>, tensor<6x7xf32>,
        tensor<6xf32>, tensor<5xf32>, tensor<f32>
}

// batch_matmul (plain, B transposed through indexing_maps), batch_reduce_matmul.
func.func @batched(%a: tensor<3x4x5xf32>, %b: tensor<3x5x6xf32>, %bt: tensor<3x6x5xf32>)
    -> (tensor<3x4x6xf32>, tensor<3x4x6xf32>, tensor<4x6xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x4x6xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<3x4x6xf32>) -> tensor<3x4x6xf32>
  %0 = linalg.batch_matmul ins(%a, %b : tensor<3x4x5xf32>, tensor<3x5x6xf32>)
      outs(%z : tensor<3x4x6xf32>) -> tensor<3x4x6xf32>
  %1 = linalg.batch_matmul indexing_maps = [
          affine_map<(b, m, n, k) -> (b, m, k)>,
          affine_map<(b, m, n, k) -> (b, n, k)>,
          affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%a, %bt : tensor<3x4x5xf32>, tensor<3x6x5xf32>)
      outs(%z : tensor<3x4x6xf32>) -> tensor<3x4x6xf32>
  %e2 = tensor.empty() : tensor<4x6xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x6xf32>) -> tensor<4x6xf32>
  %2 = linalg.batch_reduce_matmul ins(%a, %b : tensor<3x4x5xf32>, tensor<3x5x6xf32>)
      outs(%z2 : tensor<4x6xf32>) -> tensor<4x6xf32>
  return %0, %1, %2 : tensor<3x4x6xf32>, tensor<3x4x6xf32>, tensor<4x6xf32>
}

// linalg.reduce: sum into an argument (accumulates), max from -inf, mul, min.
func.func @reductions(%x: tensor<6x8xf32>, %acc: tensor<6xf32>)
    -> (tensor<6xf32>, tensor<8xf32>, tensor<6xf32>, tensor<8xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %one = arith.constant 1.0 : f32
  %half = arith.constant 0.5 : f32
  %0 = linalg.reduce ins(%x : tensor<6x8xf32>) outs(%acc : tensor<6xf32>) dimensions = [1]
    (%in: f32, %init: f32) {
      %s = arith.addf %in, %init : f32
      linalg.yield %s : f32
    }
  %e8 = tensor.empty() : tensor<8xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e8 : tensor<8xf32>) -> tensor<8xf32>
  %1 = linalg.reduce ins(%x : tensor<6x8xf32>) outs(%m0 : tensor<8xf32>) dimensions = [0]
    (%in: f32, %init: f32) {
      %m = arith.maximumf %in, %init : f32
      linalg.yield %m : f32
    }
  %e6 = tensor.empty() : tensor<6xf32>
  %p0 = linalg.fill ins(%one : f32) outs(%e6 : tensor<6xf32>) -> tensor<6xf32>
  %2 = linalg.reduce ins(%x : tensor<6x8xf32>) outs(%p0 : tensor<6xf32>) dimensions = [1]
    (%in: f32, %init: f32) {
      %p = arith.mulf %in, %init : f32
      linalg.yield %p : f32
    }
  // min with an init of 0.5 that is not min's identity: combined after.
  %h0 = linalg.fill ins(%half : f32) outs(%e8 : tensor<8xf32>) -> tensor<8xf32>
  %3 = linalg.reduce ins(%x : tensor<6x8xf32>) outs(%h0 : tensor<8xf32>) dimensions = [0]
    (%in: f32, %init: f32) {
      %m = arith.minimumf %in, %init : f32
      linalg.yield %m : f32
    }
  return %0, %1, %2, %3 : tensor<6xf32>, tensor<8xf32>, tensor<6xf32>, tensor<8xf32>
}

// The named elementwise ops and linalg.elementwise (one operand transposed).
func.func @elementwise(%x: tensor<6x8xf32>, %y: tensor<6x8xf32>, %yt: tensor<8x6xf32>)
    -> (tensor<6x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>) {
  %e = tensor.empty() : tensor<6x8xf32>
  %0 = linalg.add ins(%x, %y : tensor<6x8xf32>, tensor<6x8xf32>) outs(%e : tensor<6x8xf32>) -> tensor<6x8xf32>
  %1 = linalg.sub ins(%0, %y : tensor<6x8xf32>, tensor<6x8xf32>) outs(%e : tensor<6x8xf32>) -> tensor<6x8xf32>
  %2 = linalg.mul ins(%1, %y : tensor<6x8xf32>, tensor<6x8xf32>) outs(%e : tensor<6x8xf32>) -> tensor<6x8xf32>
  %3 = linalg.max ins(%2, %x : tensor<6x8xf32>, tensor<6x8xf32>) outs(%e : tensor<6x8xf32>) -> tensor<6x8xf32>
  %4 = linalg.min ins(%3, %y : tensor<6x8xf32>, tensor<6x8xf32>) outs(%e : tensor<6x8xf32>) -> tensor<6x8xf32>
  %5 = linalg.abs ins(%4 : tensor<6x8xf32>) outs(%e : tensor<6x8xf32>) -> tensor<6x8xf32>
  %6 = linalg.exp ins(%5 : tensor<6x8xf32>) outs(%e : tensor<6x8xf32>) -> tensor<6x8xf32>
  %7 = linalg.log ins(%6 : tensor<6x8xf32>) outs(%e : tensor<6x8xf32>) -> tensor<6x8xf32>
  %8 = linalg.sqrt ins(%6 : tensor<6x8xf32>) outs(%e : tensor<6x8xf32>) -> tensor<6x8xf32>
  %9 = linalg.rsqrt ins(%8 : tensor<6x8xf32>) outs(%e : tensor<6x8xf32>) -> tensor<6x8xf32>
  %10 = linalg.div ins(%7, %9 : tensor<6x8xf32>, tensor<6x8xf32>) outs(%e : tensor<6x8xf32>) -> tensor<6x8xf32>
  %11 = linalg.powf ins(%6, %x : tensor<6x8xf32>, tensor<6x8xf32>) outs(%e : tensor<6x8xf32>) -> tensor<6x8xf32>
  %12 = linalg.tanh ins(%11 : tensor<6x8xf32>) outs(%e : tensor<6x8xf32>) -> tensor<6x8xf32>
  %13 = linalg.negf ins(%12 : tensor<6x8xf32>) outs(%e : tensor<6x8xf32>) -> tensor<6x8xf32>
  %14 = linalg.reciprocal ins(%6 : tensor<6x8xf32>) outs(%e : tensor<6x8xf32>) -> tensor<6x8xf32>
  %15 = linalg.square ins(%14 : tensor<6x8xf32>) outs(%e : tensor<6x8xf32>) -> tensor<6x8xf32>
  %16 = linalg.elementwise kind=#linalg.elementwise_kind<mul>
      indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                       affine_map<(d0, d1) -> (d1, d0)>,
                       affine_map<(d0, d1) -> (d0, d1)>]
      ins(%15, %yt : tensor<6x8xf32>, tensor<8x6xf32>) outs(%e : tensor<6x8xf32>) -> tensor<6x8xf32>
  %17 = linalg.elementwise kind=#linalg.elementwise_kind<exp>
      ins(%16 : tensor<6x8xf32>) outs(%e : tensor<6x8xf32>) -> tensor<6x8xf32>
  return %10, %13, %17 : tensor<6x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>
}

// transpose, broadcast, copy, fill, map.
func.func @movement(%x: tensor<4x6x8xf32>, %v: tensor<6xf32>)
    -> (tensor<8x4x6xf32>, tensor<4x6x8xf32>, tensor<4x6x8xf32>) {
  %c = arith.constant 1.5 : f32
  %e = tensor.empty() : tensor<8x4x6xf32>
  %0 = linalg.transpose ins(%x : tensor<4x6x8xf32>) outs(%e : tensor<8x4x6xf32>) permutation = [2, 0, 1]
  %e2 = tensor.empty() : tensor<4x6x8xf32>
  %1 = linalg.broadcast ins(%v : tensor<6xf32>) outs(%e2 : tensor<4x6x8xf32>) dimensions = [0, 2]
  %2 = linalg.copy ins(%x : tensor<4x6x8xf32>) outs(%e2 : tensor<4x6x8xf32>) -> tensor<4x6x8xf32>
  %f = linalg.fill ins(%c : f32) outs(%e2 : tensor<4x6x8xf32>) -> tensor<4x6x8xf32>
  %3 = linalg.map ins(%1, %2, %f : tensor<4x6x8xf32>, tensor<4x6x8xf32>, tensor<4x6x8xf32>) outs(%e2 : tensor<4x6x8xf32>)
    (%p: f32, %q: f32, %r: f32, %o: f32) {
      %s = arith.mulf %p, %q : f32
      %t = arith.subf %s, %r : f32
      linalg.yield %t : f32
    }
  return %0, %1, %3 : tensor<8x4x6xf32>, tensor<4x6x8xf32>, tensor<4x6x8xf32>
}

func.func @softmax(%x: tensor<2x6x8xf32>) -> (tensor<2x6x8xf32>, tensor<2x6x8xf32>) {
  %e = tensor.empty() : tensor<2x6x8xf32>
  %0 = linalg.softmax dimension(2) ins(%x : tensor<2x6x8xf32>) outs(%e : tensor<2x6x8xf32>) -> tensor<2x6x8xf32>
  %1 = linalg.softmax dimension(1) ins(%x : tensor<2x6x8xf32>) outs(%e : tensor<2x6x8xf32>) -> tensor<2x6x8xf32>
  return %0, %1 : tensor<2x6x8xf32>, tensor<2x6x8xf32>
}

// Generic bodies as torch-mlir writes them: sigmoid, silu, tanh-gelu with
// x ** 3 (fpowi), relu by select, a bias broadcast and a mean.
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @bodies(%x: tensor<6x8xf32>, %bias: tensor<8xf32>)
    -> (tensor<6x8xf32>, tensor<6x8xf32>, tensor<6xf32>) {
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %c = arith.constant 0.044715 : f32
  %s2pi = arith.constant 0.797884583 : f32
  %eighth = arith.constant 0.125 : f32
  %three = arith.constant 3 : i32
  %e = tensor.empty() : tensor<6x8xf32>
  // silu(x + bias) * sigmoid(x)
  %0 = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %bias : tensor<6x8xf32>, tensor<8xf32>) outs(%e : tensor<6x8xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %y = arith.addf %a, %b : f32
      %n = arith.negf %y : f32
      %ex = math.exp %n : f32
      %d = arith.addf %ex, %one : f32
      %silu = arith.divf %y, %d : f32
      %na = arith.negf %a : f32
      %ea = math.exp %na : f32
      %da = arith.addf %ea, %one : f32
      %sig = arith.divf %one, %da : f32
      %r = arith.mulf %silu, %sig : f32
      linalg.yield %r : f32
  } -> tensor<6x8xf32>
  // gelu (tanh form) of relu(x) - x
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<6x8xf32>) outs(%e : tensor<6x8xf32>) {
    ^bb0(%a: f32, %out: f32):
      %gt = arith.cmpf ugt, %a, %zero : f32
      %relu = arith.select %gt, %a, %zero : f32
      %a3 = math.fpowi %a, %three : f32, i32
      %t0 = arith.mulf %a3, %c : f32
      %t1 = arith.addf %a, %t0 : f32
      %t2 = arith.mulf %t1, %s2pi : f32
      %t3 = math.tanh %t2 : f32
      %t4 = arith.addf %t3, %one : f32
      %t5 = arith.mulf %a, %half : f32
      %g = arith.mulf %t5, %t4 : f32
      %r = arith.subf %relu, %g : f32
      linalg.yield %r : f32
  } -> tensor<6x8xf32>
  // mean over the row: sum, then / 8 (a power of two: a scale)
  %e6 = tensor.empty() : tensor<6xf32>
  %z6 = linalg.fill ins(%zero : f32) outs(%e6 : tensor<6xf32>) -> tensor<6xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<6x8xf32>) outs(%z6 : tensor<6xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %r = arith.addf %a, %acc : f32
      linalg.yield %r : f32
  } -> tensor<6xf32>
  %2 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%s : tensor<6xf32>) outs(%e6 : tensor<6xf32>) {
    ^bb0(%a: f32, %out: f32):
      %r = arith.divf %a, %eighth : f32
      linalg.yield %r : f32
  } -> tensor<6xf32>
  return %0, %1, %2 : tensor<6x8xf32>, tensor<6x8xf32>, tensor<6xf32>
}
