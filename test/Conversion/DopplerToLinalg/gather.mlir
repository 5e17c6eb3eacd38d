// doppler.gather to a linalg.generic over the result's dims: the indices
// read at the result's index dims, the table by tensor.extract at the index
// (clamped to [0, extent - 1]: linalg cannot fail) and the other dims; its
// placement carries over. The IREE export holds no doppler op after it (it
// used to pass the gather through untouched, exit 0). Checked against IREE
// by hand: rows 9 0 3 7 7 1 of a 10x4 table come out in that order.
// RUN: doppler-opt %s --convert-doppler-to-linalg | FileCheck %s
// RUN: doppler-translate %s --export-iree | FileCheck %s --check-prefix=IREE
// IREE-NOT: doppler.gather
// IREE: tensor.extract
// IREE-NOT: doppler.gather

// CHECK-DAG: #[[IDX:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d2)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @middle_axis(
// CHECK: %[[E:.*]] = tensor.empty() {doppler.device = #doppler.device<1>} : tensor<4x2x5x3xf32>
// CHECK: linalg.generic {indexing_maps = [#[[IDX]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg1 : tensor<2x5xi32>) outs(%[[E]] : tensor<4x2x5x3xf32>) attrs =  {doppler.device = #doppler.device<1>}
// CHECK-NEXT: ^bb0(%[[IN:.*]]: i32, %{{.*}}: f32):
// CHECK-NEXT: %[[P:.*]] = arith.index_cast %[[IN]] : i32 to index
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[LOW:.*]] = arith.maxsi %[[P]], %[[ZERO]] : index
// CHECK-NEXT: %[[LAST:.*]] = arith.constant 9 : index
// CHECK-NEXT: %[[CLAMPED:.*]] = arith.minsi %[[LOW]], %[[LAST]] : index
// CHECK-NEXT: %[[D0:.*]] = linalg.index 0 : index
// CHECK-NEXT: %[[D3:.*]] = linalg.index 3 : index
// CHECK-NEXT: %[[X:.*]] = tensor.extract %arg0[%[[D0]], %[[CLAMPED]], %[[D3]]] : tensor<4x10x3xf32>
// CHECK-NEXT: linalg.yield %[[X]] : f32
// CHECK-NOT: doppler.gather
func.func @middle_axis(%t: tensor<4x10x3xf32>, %ids: tensor<2x5xi32>) -> tensor<4x2x5x3xf32> {
  %0 = doppler.gather %t[%ids] axis 1 {doppler.device = #doppler.device<1>}
      : tensor<4x10x3xf32>, tensor<2x5xi32> -> tensor<4x2x5x3xf32>
  return %0 : tensor<4x2x5x3xf32>
}

// Integer table, rank-0 indices: the axis disappears from the result.
// CHECK-LABEL: func.func @scalar_index(
// CHECK: linalg.generic {{.*}} ins(%arg1 : tensor<i64>) outs(%{{.*}} : tensor<3xi64>)
// CHECK: %[[X2:.*]] = tensor.extract %arg0[%{{.*}}, %{{.*}}] : tensor<7x3xi64>
// CHECK-NEXT: linalg.yield %[[X2]] : i64
func.func @scalar_index(%t: tensor<7x3xi64>, %i: tensor<i64>) -> tensor<3xi64> {
  %0 = doppler.gather %t[%i] axis 0 {doppler.device = #doppler.device<0>}
      : tensor<7x3xi64>, tensor<i64> -> tensor<3xi64>
  return %0 : tensor<3xi64>
}
