// doppler-plan-memory on small placed programs (every op costs 10, moves in
// 1, 32x32xf32 tensors of 4096 bytes) with Inputs/offload-system.json: 16384
// bytes per device, a host link of 4096 bytes per microsecond (an evict or a
// reload of one tensor takes 1) with no latency.
// RUN: doppler-opt %s --doppler-plan-memory=system=%S/Inputs/offload-system.json | FileCheck %s
// The offloaded programs compute what the originals do.
// RUN: doppler-opt %s --doppler-plan-memory=system=%S/Inputs/offload-system.json -o %t.mlir
// RUN: doppler-interpret %t.mlir --function mid --compare %s | FileCheck %s --check-prefix=SAME
// RUN: doppler-interpret %t.mlir --function two --compare %s | FileCheck %s --check-prefix=SAME
// RUN: doppler-interpret %t.mlir --function cross --compare %s | FileCheck %s --check-prefix=SAME
// RUN: doppler-run %t.mlir --function cross --check --repeat 1 | FileCheck %s --check-prefix=RUNS
// When everything fits (1 MB per device) the pass changes nothing at all.
// RUN: doppler-opt %s -o %t.before.mlir
// RUN: doppler-opt %s --doppler-plan-memory="system=%S/Inputs/offload-system.json memory-limit=1048576" -o %t.after.mlir
// RUN: diff %t.before.mlir %t.after.mlir
// memory-limit overrides the system's capacity: 20480 bytes hold @mid
// without offload (its peak, argument included, is 20480); @two (24576)
// then needs one eviction instead of two.
// RUN: doppler-opt %s --doppler-plan-memory="system=%S/Inputs/offload-system.json memory-limit=20480" | FileCheck %s --check-prefix=LIMIT

// SAME: ok
// RUNS: check against the interpreter: {{.*}}: ok

// One eviction. %a is read only at the end; while %d runs, %a, %b, %c and
// %d (4 x 4096) and the argument (4096) need 20480 bytes. Evicted after it
// is made (10 -> 11) and reloaded after %d ends (40 -> 41), before %e ends
// (its reader starts at 50): the peak is 3 x 4096 + 4096 = 16384.
// CHECK-LABEL: func.func @mid
// CHECK-SAME: doppler.makespan = 6.000000e+01 : f64
// CHECK-SAME: doppler.offload = {bytes_evicted = 4096 : i64, evictions = 1 : i64, host_peak = 4096 : i64, unlimited_makespan = 6.000000e+01 : f64}
// CHECK-SAME: doppler.peak_memory = array<i64: 16384>
// CHECK-NEXT: %[[A:.*]] = doppler.einsum "ij->ij" join(exp)
// CHECK-NEXT: %[[H:.*]] = doppler.evict %[[A]] from <0> {doppler.device = #doppler.device<0>, doppler.end = 1.100000e+01 : f64, doppler.start = 1.000000e+01 : f64} : tensor<32x32xf32>
// CHECK-NEXT: doppler.einsum "ij->ij" join(tanh)
// CHECK-NEXT: doppler.einsum "ij->ij" join(neg)
// CHECK-NEXT: %[[D:.*]] = doppler.einsum "ij,ij->ij" join(add)
// CHECK-NEXT: %[[E:.*]] = doppler.einsum "ij->ij" join(relu) (%[[D]])
// CHECK-NEXT: %[[R:.*]] = doppler.reload %[[H]] to <0> after(%[[D]] : tensor<32x32xf32>) {doppler.device = #doppler.device<0>, doppler.end = 4.100000e+01 : f64, doppler.start = 4.000000e+01 : f64} : tensor<32x32xf32>
// CHECK-NEXT: doppler.einsum "ij,ij->ij" join(add) (%[[R]], %[[E]])
// LIMIT-LABEL: func.func @mid
// LIMIT-NOT: doppler.evict
// LIMIT-LABEL: func.func @two
func.func @mid(%x: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %a = doppler.einsum "ij->ij" join(exp) (%x) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %b = doppler.einsum "ij->ij" join(tanh) (%x) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %c = doppler.einsum "ij->ij" join(neg) (%x) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %d = doppler.einsum "ij,ij->ij" join(add) (%b, %c) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %e = doppler.einsum "ij->ij" join(relu) (%d) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %f = doppler.einsum "ij,ij->ij" join(add) (%a, %e) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  return %f : tensor<32x32xf32>
}

// Two evictions: %a1 and %a2 are read at the end; while %d runs, 7 x 4096
// bytes would be live. Each is reloaded just in time: %a1 after %d, %a2
// after %f (so its reload waits 1 more: makespan 80 -> 81). Peak: 3 x 4096
// + 4096 = 16384.
// CHECK-LABEL: func.func @two
// CHECK-SAME: doppler.offload = {bytes_evicted = 8192 : i64, evictions = 2 : i64, host_peak = 8192 : i64, unlimited_makespan = 8.000000e+01 : f64}
// CHECK-SAME: doppler.peak_memory = array<i64: 16384>
// CHECK-NEXT: %[[A1:.*]] = doppler.einsum "ij->ij" join(exp)
// CHECK-NEXT: %[[H1:.*]] = doppler.evict %[[A1]] from <0>
// CHECK-NEXT: %[[A2:.*]] = doppler.einsum "ij->ij" join(tanh)
// CHECK-NEXT: %[[H2:.*]] = doppler.evict %[[A2]] from <0>
// CHECK: %[[D:.*]] = doppler.einsum "ij,ij->ij" join(add)
// CHECK-NEXT: %[[E:.*]] = doppler.einsum "ij->ij" join(relu) (%[[D]])
// CHECK-NEXT: %[[R1:.*]] = doppler.reload %[[H1]] to <0> after(%[[D]] : tensor<32x32xf32>)
// CHECK-NEXT: %[[F:.*]] = doppler.einsum "ij,ij->ij" join(add) (%[[R1]], %[[E]])
// CHECK-NEXT: %[[R2:.*]] = doppler.reload %[[H2]] to <0> after(%[[F]] : tensor<32x32xf32>)
// CHECK-NEXT: doppler.einsum "ij,ij->ij" join(mul) (%[[R2]], %[[F]])
// With 20480 bytes, one eviction is enough.
// LIMIT-SAME: doppler.offload = {{{.*}}evictions = 1 : i64
// LIMIT-SAME: doppler.peak_memory = array<i64: 20480>
func.func @two(%x: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %a1 = doppler.einsum "ij->ij" join(exp) (%x) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %a2 = doppler.einsum "ij->ij" join(tanh) (%x) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %b = doppler.einsum "ij->ij" join(neg) (%x) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %c = doppler.einsum "ij->ij" join(sigmoid) (%x) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %d = doppler.einsum "ij,ij->ij" join(add) (%b, %c) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %e = doppler.einsum "ij->ij" join(relu) (%d) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %f = doppler.einsum "ij,ij->ij" join(add) (%a1, %e) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %g = doppler.einsum "ij,ij->ij" join(mul) (%a2, %f) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  return %g : tensor<32x32xf32>
}

// Two devices. %a is read on device 1 through a transfer (untouched), early
// by %s on device 0 (reads the original) and late by %f (reads the reload).
// Device 1 holds the received copy and %r: 8192 bytes.
// CHECK-LABEL: func.func @cross
// CHECK-SAME: doppler.peak_memory = array<i64: 16384, 8192>
// CHECK-NEXT: %[[A:.*]] = doppler.einsum "ij->ij" join(exp)
// CHECK-NEXT: %[[H:.*]] = doppler.evict %[[A]] from <0>
// CHECK-NEXT: doppler.transfer %[[A]] from <0> to <1>
// CHECK-NEXT: doppler.einsum "ij->ij" join(square)
// CHECK-NEXT: doppler.einsum "ij->ij" join(abs) (%[[A]])
// CHECK: %[[R:.*]] = doppler.reload %[[H]] to <0> after(
// CHECK-NEXT: doppler.einsum "ij,ij->ij" join(add) (%[[R]],
func.func @cross(%x: tensor<32x32xf32>) -> (tensor<32x32xf32>, tensor<32x32xf32>) {
  %a = doppler.einsum "ij->ij" join(exp) (%x) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %m = doppler.transfer %a from <0> to <1> {doppler.device = #doppler.device<1>} : tensor<32x32xf32>
  %r = doppler.einsum "ij->ij" join(square) (%m) {doppler.device = #doppler.device<1>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %s = doppler.einsum "ij->ij" join(abs) (%a) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %b = doppler.einsum "ij->ij" join(tanh) (%x) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %c = doppler.einsum "ij->ij" join(neg) (%x) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %d = doppler.einsum "ij,ij->ij" join(add) (%b, %c) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %e = doppler.einsum "ij->ij" join(relu) (%d) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %f = doppler.einsum "ij,ij->ij" join(add) (%a, %e) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %t = doppler.transfer %r from <1> to <0> {doppler.device = #doppler.device<0>} : tensor<32x32xf32>
  %g = doppler.einsum "ij,ij->ij" join(add) (%f, %s) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  return %g, %t : tensor<32x32xf32>, tensor<32x32xf32>
}
