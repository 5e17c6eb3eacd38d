// doppler.evict and doppler.reload fold to the evicted value: linalg on
// tensors (and IREE after it) manage their own memory. The reload's users
// read the exp's result directly; the `after` dependency goes away.
// RUN: doppler-opt %s --convert-doppler-to-linalg | FileCheck %s

// CHECK-LABEL: func.func @offload
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK: %[[E:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<4x8xf32>)
// CHECK: math.exp
// CHECK: %[[T:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<4x8xf32>)
// CHECK: math.tanh
// CHECK: %[[A:.*]] = linalg.generic {{.*}} ins(%[[E]], %[[T]] : tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK: return %[[A]]
// CHECK-NOT: doppler.evict
// CHECK-NOT: doppler.reload
func.func @offload(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = doppler.einsum "ij->ij" join(exp) (%x) {doppler.device = #doppler.device<0>}
      : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %h = doppler.evict %e from <0> {doppler.device = #doppler.device<0>} : tensor<4x8xf32>
  %t = doppler.einsum "ij->ij" join(tanh) (%x) {doppler.device = #doppler.device<0>}
      : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = doppler.reload %h to <0> after(%t : tensor<4x8xf32>) {doppler.device = #doppler.device<0>} : tensor<4x8xf32>
  %a = doppler.einsum "ij,ij->ij" join(add) (%r, %t) {doppler.device = #doppler.device<0>}
      : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %a : tensor<4x8xf32>
}
