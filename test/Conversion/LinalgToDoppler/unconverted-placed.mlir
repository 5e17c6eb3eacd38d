// An op convert-linalg-to-doppler leaves (a linalg.generic computing sin,
// which has no doppler join) still goes through doppler-pipeline: it is
// costed from its work (WorkOpInterface external model: 16x32 points x 1
// body op, 2 KiB read and written), placed, gets transfers and simulated
// times like the einsums around it. The tensor.collapse_shape after it
// becomes a doppler.reshape of its result.
// RUN: doppler-opt %s --convert-linalg-to-doppler --doppler-pipeline="devices=2" 2>&1 | FileCheck %s
// RUN: doppler-opt %s --convert-linalg-to-doppler --doppler-annotate-costs --doppler-work-summary -o /dev/null 2>&1 | FileCheck %s --check-prefix=WORK

#id = affine_map<(d0, d1) -> (d0, d1)>

// CHECK: remark: converted 3 op(s) to doppler (linalg.exp: 1, linalg.matmul: 1, tensor.collapse_shape: 1); left 1 (linalg.generic: 1)
// CHECK-LABEL: func.func @left({{.*}}doppler.makespan
// CHECK: doppler.einsum "ik,kj->ij" join(mul) agg(add) {{.*}}doppler.device = #doppler.device<
// CHECK: linalg.generic {{.*}}attrs = {doppler.compute_cost = {{[0-9.e+-]+}} : f64, doppler.device = #doppler.device<{{[01]}}>, doppler.end = {{.*}}, doppler.start = {{.*}}, doppler.transfer_cost
// CHECK: math.sin
// CHECK: doppler.reshape {{.*}}doppler.device = #doppler.device<
// CHECK: doppler.einsum "i->i" join(exp) {{.*}}doppler.device = #doppler.device<
// The matmul 2*16*32*8, sin 16*32 points x 1 op, the collapse (a reshape)
// none, exp 512.
// WORK: flops: 9216
func.func @left(%x: tensor<16x8xf32>, %w: tensor<8x32xf32>) -> tensor<512xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x32xf32>) -> tensor<16x32xf32>
  %m = linalg.matmul ins(%x, %w : tensor<16x8xf32>, tensor<8x32xf32>) outs(%f : tensor<16x32xf32>) -> tensor<16x32xf32>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m : tensor<16x32xf32>) outs(%e : tensor<16x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.sin %a : f32
    linalg.yield %r : f32
  } -> tensor<16x32xf32>
  %c = tensor.collapse_shape %g [[0, 1]] : tensor<16x32xf32> into tensor<512xf32>
  %e1 = tensor.empty() : tensor<512xf32>
  %r = linalg.exp ins(%c : tensor<512xf32>) outs(%e1 : tensor<512xf32>) -> tensor<512xf32>
  return %r : tensor<512xf32>
}
