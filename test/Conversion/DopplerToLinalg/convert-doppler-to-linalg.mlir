// Every doppler op kind with tensor semantics, lowered to linalg on tensors;
// placements (doppler.device) and locations carry over.
// RUN: doppler-opt %s --split-input-file --convert-doppler-to-linalg | FileCheck %s

// einsum (contraction): loops (i, k, j), the output filled with 0.
func.func @einsum_matmul(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>) -> tensor<4x2xf32> {
  %0 = doppler.einsum "ij,jk->ik" join(mul) agg(add) (%a, %b) {doppler.device = #doppler.device<1>}
      : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// CHECK-DAG: #[[$MA:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[$MB:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-DAG: #[[$MC:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @einsum_matmul
// CHECK-SAME: (%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8x2xf32>)
// CHECK: %[[E:.*]] = tensor.empty() {doppler.device = #doppler.device<1>} : tensor<4x2xf32>
// CHECK: %[[Z:.*]] = arith.constant {doppler.device = #doppler.device<1>} 0.000000e+00 : f32
// CHECK: %[[F:.*]] = linalg.fill {doppler.device = #doppler.device<1>} ins(%[[Z]] : f32) outs(%[[E]] : tensor<4x2xf32>)
// CHECK: %[[G:.*]] = linalg.generic {indexing_maps = [#[[$MA]], #[[$MB]], #[[$MC]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[A]], %[[B]] : tensor<4x8xf32>, tensor<8x2xf32>) outs(%[[F]] : tensor<4x2xf32>) attrs = {doppler.device = #doppler.device<1>}
// CHECK: ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK:   %[[P:.*]] = arith.mulf %[[X]], %[[Y]] : f32
// CHECK:   %[[S:.*]] = arith.addf %[[ACC]], %[[P]] : f32
// CHECK:   linalg.yield %[[S]] : f32
// CHECK: return %[[G]]
// -----

// einsum (batched, transposed output): "hqe,hke->hqk".
func.func @einsum_attention_scores(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>) -> tensor<2x4x6xf32> {
  %0 = doppler.einsum "hqe,hke->hqk" join(mul) agg(add) (%q, %k)
      : (tensor<2x4x8xf32>, tensor<2x6x8xf32>) -> tensor<2x4x6xf32>
  return %0 : tensor<2x4x6xf32>
}

// CHECK-DAG: #[[$Q:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[$K:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-DAG: #[[$O:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @einsum_attention_scores
// CHECK: linalg.fill
// CHECK: linalg.generic {indexing_maps = [#[[$Q]], #[[$K]], #[[$O]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK-NOT: doppler.device
// -----

// einsum (elementwise with broadcast, permuted input), no reduction: no fill.
func.func @einsum_broadcast(%x: tensor<4x8xf32>, %m: tensor<8xf32>) -> tensor<8x4xf32> {
  %0 = doppler.einsum "ij,j->ji" join(sub) (%x, %m) {doppler.device = #doppler.device<0>}
      : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// CHECK-DAG: #[[$X:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-DAG: #[[$M:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[$O:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @einsum_broadcast
// CHECK-NOT: linalg.fill
// CHECK: %[[E:.*]] = tensor.empty() {doppler.device = #doppler.device<0>} : tensor<8x4xf32>
// CHECK: linalg.generic {indexing_maps = [#[[$X]], #[[$M]], #[[$O]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: outs(%[[E]] : tensor<8x4xf32>) attrs = {doppler.device = #doppler.device<0>}
// CHECK: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK:   %[[D:.*]] = arith.subf %[[A]], %[[B]] : f32
// CHECK:   linalg.yield %[[D]] : f32
// -----

// einsum (full reduction to a scalar, rank-0 result) in f64.
func.func @einsum_reduce_all(%x: tensor<4x8xf64>) -> tensor<f64> {
  %0 = doppler.einsum "ij->" join(square) agg(add) (%x) : (tensor<4x8xf64>) -> tensor<f64>
  return %0 : tensor<f64>
}

// CHECK-DAG: #[[$IN:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$OUT:.*]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @einsum_reduce_all
// CHECK: %[[Z:.*]] = arith.constant 0.000000e+00 : f64
// CHECK: linalg.fill ins(%[[Z]] : f64) outs(%{{.*}} : tensor<f64>) -> tensor<f64>
// CHECK: linalg.generic {indexing_maps = [#[[$IN]], #[[$OUT]]], iterator_types = ["reduction", "reduction"]}
// CHECK: ^bb0(%[[X:.*]]: f64, %[[ACC:.*]]: f64):
// CHECK:   %[[SQ:.*]] = arith.mulf %[[X]], %[[X]] : f64
// CHECK:   arith.addf %[[ACC]], %[[SQ]] : f64
// -----

// einsum (scalar term): "ij,->ij" reads a rank-0 tensor at every point.
func.func @einsum_scalar_operand(%x: tensor<4x8xf32>, %s: tensor<f32>) -> tensor<4x8xf32> {
  %0 = doppler.einsum "ij,->ij" join(mul) (%x, %s)
      : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$SC:.*]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @einsum_scalar_operand
// CHECK: linalg.generic {indexing_maps = [#[[$ID]], #[[$SC]], #[[$ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<f32>)
// -----

// slice: tensor.extract_slice at the offsets, unit strides.
func.func @slice(%x: tensor<8x16xf32>) -> tensor<4x8xf32> {
  %0 = doppler.slice %x [4, 8] {doppler.device = #doppler.device<2>} : tensor<8x16xf32> to tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @slice
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>)
// CHECK: %[[S:.*]] = tensor.extract_slice %[[X]][4, 8] [4, 8] [1, 1] {doppler.device = #doppler.device<2>} : tensor<8x16xf32> to tensor<4x8xf32>
// CHECK: return %[[S]]
// -----

// assemble: a 2x2 grid of blocks inserted into an empty tensor.
func.func @assemble(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>, %c: tensor<4x3xf32>, %d: tensor<4x5xf32>) -> tensor<6x8xf32> {
  %0 = doppler.assemble [2, 2] (%a, %b, %c, %d) {doppler.device = #doppler.device<1>}
      : tensor<2x3xf32>, tensor<2x5xf32>, tensor<4x3xf32>, tensor<4x5xf32> -> tensor<6x8xf32>
  return %0 : tensor<6x8xf32>
}

// CHECK-LABEL: func.func @assemble
// CHECK-SAME: (%[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<2x5xf32>, %[[C:.*]]: tensor<4x3xf32>, %[[D:.*]]: tensor<4x5xf32>)
// CHECK: %[[E:.*]] = tensor.empty() {doppler.device = #doppler.device<1>} : tensor<6x8xf32>
// CHECK: %[[R0:.*]] = tensor.insert_slice %[[A]] into %[[E]][0, 0] [2, 3] [1, 1] {doppler.device = #doppler.device<1>}
// CHECK: %[[R1:.*]] = tensor.insert_slice %[[B]] into %[[R0]][0, 3] [2, 5] [1, 1]
// CHECK: %[[R2:.*]] = tensor.insert_slice %[[C]] into %[[R1]][2, 0] [4, 3] [1, 1]
// CHECK: %[[R3:.*]] = tensor.insert_slice %[[D]] into %[[R2]][2, 3] [4, 5] [1, 1]
// CHECK: return %[[R3]]
// -----

// fill: linalg.fill of a tensor.empty.
func.func @fill() -> tensor<3x5xf32> {
  %0 = doppler.fill 1.500000e+00 {doppler.device = #doppler.device<3>} : tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// CHECK-LABEL: func.func @fill
// CHECK: %[[E:.*]] = tensor.empty() {doppler.device = #doppler.device<3>} : tensor<3x5xf32>
// CHECK: %[[V:.*]] = arith.constant {doppler.device = #doppler.device<3>} 1.500000e+00 : f32
// CHECK: %[[F:.*]] = linalg.fill {doppler.device = #doppler.device<3>} ins(%[[V]] : f32) outs(%[[E]] : tensor<3x5xf32>)
// CHECK: return %[[F]]
// -----

// transfer: kept as it is (export-iree turns it into flow.tensor.transfer).
func.func @transfer(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = doppler.einsum "ij->ij" join(exp) (%x) {doppler.device = #doppler.device<0>}
      : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = doppler.transfer %0 from <0> to <1> : tensor<4x8xf32>
  %2 = doppler.einsum "ij->ij" join(neg) (%1) {doppler.device = #doppler.device<1>}
      : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @transfer
// CHECK: %[[X:.*]] = linalg.generic
// CHECK: math.exp
// CHECK: %[[T:.*]] = doppler.transfer %[[X]] from <0> to <1> : tensor<4x8xf32>
// CHECK: linalg.generic {{.*}} ins(%[[T]] : tensor<4x8xf32>) {{.*}} attrs = {doppler.device = #doppler.device<1>}
// CHECK: arith.negf
// -----

// Ops of other dialects are left alone.
func.func @other_dialects(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %x, %x {doppler.device = #doppler.device<0>} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// CHECK-LABEL: func.func @other_dialects
// CHECK: arith.addf %{{.*}}, %{{.*}} {doppler.device = #doppler.device<0>} : tensor<4xf32>
