// doppler-verify-transfers accepts explicit moves and same-device uses, and
// arguments read on any device; it changes nothing.
// RUN: doppler-opt %s --doppler-verify-transfers | FileCheck %s
// RUN: doppler-opt %s --pass-pipeline="builtin.module(func.func(doppler-verify-transfers))" | FileCheck %s

// CHECK-LABEL: func.func @moved
// CHECK: %[[X:.*]] = doppler.einsum "i->i" join(exp)
// CHECK: %[[T:.*]] = doppler.transfer %[[X]] from <0> to <1>
// CHECK: doppler.einsum "i,i->i" join(add) (%[[T]], %{{.*}})
func.func @moved(%a: tensor<4xf32>) -> tensor<4xf32> {
  %x = doppler.einsum "i->i" join(exp) (%a) {doppler.device = #doppler.device<0>} : (tensor<4xf32>) -> tensor<4xf32>
  %t = doppler.transfer %x from <0> to <1> {doppler.device = #doppler.device<1>} : tensor<4xf32>
  %y = doppler.einsum "i,i->i" join(add) (%t, %a) {doppler.device = #doppler.device<1>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
