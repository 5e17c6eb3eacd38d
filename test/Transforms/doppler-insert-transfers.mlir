// RUN: doppler-opt %s --split-input-file --doppler-insert-transfers --doppler-verify-transfers | FileCheck %s

// One transfer per (value, destination device), shared by every consumer
// there, inserted after the producer and placed on the destination.
// CHECK-LABEL: func.func @fan_out
// CHECK: %[[X:.*]] = doppler.einsum "i->i" join(exp) {{.*}}doppler.device = #doppler.device<0>
// CHECK-NEXT: %[[T1:.*]] = doppler.transfer %[[X]] from <0> to <1> {doppler.device = #doppler.device<1>}
// CHECK-NEXT: %[[T2:.*]] = doppler.transfer %[[X]] from <0> to <2> {doppler.device = #doppler.device<2>}
// CHECK-NOT: doppler.transfer
// CHECK: doppler.einsum "i->i" join(neg) (%[[X]])
// CHECK: doppler.einsum "i->i" join(relu) (%[[T1]])
// CHECK: doppler.einsum "i,i->i" join(add) (%[[T1]], %[[T1]])
// CHECK: doppler.einsum "i->i" join(tanh) (%[[T2]])
func.func @fan_out(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %x = doppler.einsum "i->i" join(exp) (%a) {doppler.device = #doppler.device<0>} : (tensor<4xf32>) -> tensor<4xf32>
  %n = doppler.einsum "i->i" join(neg) (%x) {doppler.device = #doppler.device<0>} : (tensor<4xf32>) -> tensor<4xf32>
  %r = doppler.einsum "i->i" join(relu) (%x) {doppler.device = #doppler.device<1>} : (tensor<4xf32>) -> tensor<4xf32>
  %s = doppler.einsum "i,i->i" join(add) (%x, %x) {doppler.device = #doppler.device<1>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %t = doppler.einsum "i->i" join(tanh) (%x) {doppler.device = #doppler.device<2>} : (tensor<4xf32>) -> tensor<4xf32>
  return %n, %r, %s, %t : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Function arguments are everywhere and returned values stay put: no
// transfer. Running the pass twice adds nothing.
// CHECK-LABEL: func.func @no_moves
// CHECK-NOT: doppler.transfer
// CHECK: return
func.func @no_moves(%a: tensor<4xf32>) -> tensor<4xf32> {
  %x = doppler.einsum "i->i" join(exp) (%a) {doppler.device = #doppler.device<3>} : (tensor<4xf32>) -> tensor<4xf32>
  %y = doppler.einsum "i->i" join(exp) (%a) {doppler.device = #doppler.device<1>} : (tensor<4xf32>) -> tensor<4xf32>
  return %x : tensor<4xf32>
}

// -----

// Cost-only values move too.
// CHECK-LABEL: func.func @tasks
// CHECK: %[[A:.*]] = doppler.task "a"
// CHECK-NEXT: %[[T:.*]] = doppler.transfer %[[A]] from <0> to <1> {doppler.device = #doppler.device<1>} : !doppler.value
// CHECK-NEXT: doppler.task "b" (%[[T]])
func.func @tasks() -> !doppler.value {
  %a = doppler.task "a" compute(1.0) transfer(1.0) {doppler.device = #doppler.device<0>}
  %b = doppler.task "b" (%a) compute(1.0) transfer(1.0) {doppler.device = #doppler.device<1>}
  return %b : !doppler.value
}

// -----

// A reload reads a host value and waits for values on any device: no
// transfer for it; its result is an ordinary value on its device.
// CHECK-LABEL: func.func @reload_elsewhere
// CHECK: %[[A:.*]] = doppler.einsum "i->i" join(exp)
// CHECK-NEXT: %[[H:.*]] = doppler.evict %[[A]] from <0>
// CHECK-NEXT: %[[T:.*]] = doppler.einsum "i->i" join(neg)
// CHECK-NEXT: %[[R:.*]] = doppler.reload %[[H]] to <1> after(%[[A]] : tensor<4xf32>)
// CHECK-NEXT: %[[B:.*]] = doppler.einsum "i,i->i" join(add) (%[[R]], %[[T]])
// CHECK-NEXT: %[[M:.*]] = doppler.transfer %[[B]] from <1> to <0>
// CHECK-NEXT: doppler.einsum "i->i" join(relu) (%[[M]])
func.func @reload_elsewhere(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = doppler.einsum "i->i" join(exp) (%x) {doppler.device = #doppler.device<0>} : (tensor<4xf32>) -> tensor<4xf32>
  %h = doppler.evict %a from <0> {doppler.device = #doppler.device<0>} : tensor<4xf32>
  %t = doppler.einsum "i->i" join(neg) (%x) {doppler.device = #doppler.device<1>} : (tensor<4xf32>) -> tensor<4xf32>
  %r = doppler.reload %h to <1> after(%a : tensor<4xf32>) {doppler.device = #doppler.device<1>} : tensor<4xf32>
  %b = doppler.einsum "i,i->i" join(add) (%r, %t) {doppler.device = #doppler.device<1>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %c = doppler.einsum "i->i" join(relu) (%b) {doppler.device = #doppler.device<0>} : (tensor<4xf32>) -> tensor<4xf32>
  return %c : tensor<4xf32>
}
