// doppler-plan-memory on small placed programs (every op costs 10, moves in
// 1, 32x32xf32 tensors of 4096 bytes) with Inputs/offload-system.json: 16384
// bytes per device, a host link of 4096 bytes per microsecond (an evict or a
// reload of one tensor takes 1) with no latency. The planner chooses an
// order first and evictions second (Doppler/Placement/Offload.h), so each
// program below holds a value across its peak in EVERY order (the value
// has an early reader before the peak and a late one after it): only an
// eviction makes it fit. A program that fits through its order alone is in
// doppler-plan-memory-order.mlir.
// RUN: doppler-opt %s --doppler-plan-memory=system=%S/Inputs/offload-system.json | FileCheck %s
// The offloaded programs compute what the originals do, in the interpreter
// and on the runtime (in the planned order, the default for offloaded
// programs), within the capacity (the peak patterns match 1 to 16384).
// RUN: doppler-opt %s --doppler-plan-memory=system=%S/Inputs/offload-system.json -o %t.mlir
// RUN: doppler-interpret %t.mlir --function mid --compare %s | FileCheck %s --check-prefix=SAME
// RUN: doppler-interpret %t.mlir --function two --compare %s | FileCheck %s --check-prefix=SAME
// RUN: doppler-interpret %t.mlir --function cross --compare %s | FileCheck %s --check-prefix=SAME
// RUN: doppler-interpret %t.mlir --function received --compare %s | FileCheck %s --check-prefix=SAME
// RUN: doppler-interpret %t.mlir --function received_early --compare %s | FileCheck %s --check-prefix=SAME
// RUN: doppler-run %t.mlir --function mid --check --repeat 1 --memory-limit 16384 | FileCheck %s --check-prefix=RUNS
// RUN: doppler-run %t.mlir --function cross --check --repeat 1 --memory-limit 16384 | FileCheck %s --check-prefixes=RUNS,RUNS2
// RUN: doppler-run %t.mlir --function received --check --repeat 1 --memory-limit 16384 | FileCheck %s --check-prefixes=RUNS,RUNS2
// RUN: doppler-run %t.mlir --function received_early --check --repeat 1 --memory-limit 16384 | FileCheck %s --check-prefixes=RUNS,RUNS2
// When everything fits (1 MB per device) the pass changes nothing at all.
// RUN: doppler-opt %s -o %t.before.mlir
// RUN: doppler-opt %s --doppler-plan-memory="system=%S/Inputs/offload-system.json memory-limit=1048576" -o %t.after.mlir
// RUN: diff %t.before.mlir %t.after.mlir
// memory-limit overrides the system's capacity: 20480 bytes hold @mid
// without offload (its peak, argument included, is 20480); @two (24576)
// then needs one eviction instead of two.
// RUN: doppler-opt %s --doppler-plan-memory="system=%S/Inputs/offload-system.json memory-limit=20480" | FileCheck %s --check-prefix=LIMIT

// SAME: ok
// RUNS: device 0: {{.*}} peak {{([1-9][0-9]{0,3}|1[0-5][0-9]{3}|16[0-2][0-9][0-9]|163[0-7][0-9]|1638[0-4])}} bytes of a 16384-byte limit
// RUNS2-NEXT: device 1: {{.*}} peak {{([1-9][0-9]{0,3}|1[0-5][0-9]{3}|16[0-2][0-9][0-9]|163[0-7][0-9]|1638[0-4])}} bytes of a 16384-byte limit
// RUNS: check against the interpreter: {{.*}}: ok

// One eviction. %a has an early reader (%b) and a late one (%f): whatever
// the order, while %d runs %a, %b, %c and %d (4 x 4096) and the argument
// (4096) would need 20480 bytes. The planned order: %a 0-10, %c 10-20, %b
// 20-30, %d 30-40, %e 40-50, %f 50-60 (makespan 60, as without offload: six
// ops of 10 on one device). %a is evicted once made (10 -> 11); its
// original is freed when %b ends (30), so %d holds %b, %c, %d and the
// argument: 16384. The reload follows %d (40 -> 41; %e then holds %d, %e,
// the reload and the argument: 16384) and is there before %f starts (50).
// CHECK-LABEL: func.func @mid
// CHECK-SAME: doppler.makespan = 6.000000e+01 : f64
// CHECK-SAME: doppler.offload = {bytes_evicted = 4096 : i64, evictions = 1 : i64, host_peak = 4096 : i64, unlimited_makespan = 6.000000e+01 : f64}
// CHECK-SAME: doppler.peak_memory = array<i64: 16384>
// CHECK-NEXT: %[[A:.*]] = doppler.einsum "ij->ij" join(exp) {{.*}}doppler.start = 0.000000e+00
// CHECK-NEXT: %[[H:.*]] = doppler.evict %[[A]] from <0> {doppler.device = #doppler.device<0>, doppler.end = 1.100000e+01 : f64, doppler.start = 1.000000e+01 : f64} : tensor<32x32xf32>
// CHECK-NEXT: doppler.einsum "ij->ij" join(tanh) (%[[A]]) {{.*}}doppler.start = 2.000000e+01
// CHECK-NEXT: doppler.einsum "ij->ij" join(neg) {{.*}}doppler.start = 1.000000e+01
// CHECK-NEXT: %[[D:.*]] = doppler.einsum "ij,ij->ij" join(add) {{.*}}doppler.start = 3.000000e+01
// CHECK-NEXT: %[[E:.*]] = doppler.einsum "ij->ij" join(relu) (%[[D]]) {{.*}}doppler.start = 4.000000e+01
// CHECK-NEXT: %[[R:.*]] = doppler.reload %[[H]] to <0> after(%[[D]] : tensor<32x32xf32>) {doppler.device = #doppler.device<0>, doppler.end = 4.100000e+01 : f64, doppler.start = 4.000000e+01 : f64} : tensor<32x32xf32>
// CHECK-NEXT: doppler.einsum "ij,ij->ij" join(add) (%[[R]], %[[E]]) {{.*}}doppler.start = 5.000000e+01
// LIMIT-LABEL: func.func @mid
// LIMIT-NOT: doppler.evict
// LIMIT-LABEL: func.func @two
func.func @mid(%x: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %a = doppler.einsum "ij->ij" join(exp) (%x) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %b = doppler.einsum "ij->ij" join(tanh) (%a) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %c = doppler.einsum "ij->ij" join(neg) (%x) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %d = doppler.einsum "ij,ij->ij" join(add) (%b, %c) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %e = doppler.einsum "ij->ij" join(relu) (%d) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %f = doppler.einsum "ij,ij->ij" join(add) (%a, %e) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  return %f : tensor<32x32xf32>
}

// Two evictions: %a1 and %a2 are read early (by %b, %c) and at the end (by
// %f, %g); in any order %a1, %a2, %b, %c, %d and the argument are live while
// %d runs: 7 x 4096 bytes. Planned: %a1 0-10, %a2 10-20, %b 20-30, %c 30-40,
// %d 40-50, %e 50-60; each is evicted once made. While %b runs, %a1 (read),
// %a2, %b and the argument: 16384; %a1 is freed at 30, %a2 at 40. %a1's
// reload follows %e (60 -> 61: %f waits 1, 61-71) and %a2's follows %f
// (71 -> 72: %g runs 72-82), so the makespan is 80 + 2 = 82; %f holds the
// reload, %e, %f and the argument, %g the reload, %f, %g and the argument:
// 16384. Both copies are on the host from 21 to 61: host peak 8192.
// CHECK-LABEL: func.func @two
// CHECK-SAME: doppler.makespan = 8.200000e+01 : f64
// CHECK-SAME: doppler.offload = {bytes_evicted = 8192 : i64, evictions = 2 : i64, host_peak = 8192 : i64, unlimited_makespan = 8.000000e+01 : f64}
// CHECK-SAME: doppler.peak_memory = array<i64: 16384>
// CHECK-NEXT: %[[A1:.*]] = doppler.einsum "ij->ij" join(exp)
// CHECK-NEXT: %[[H1:.*]] = doppler.evict %[[A1]] from <0> {{.*}}doppler.end = 1.100000e+01 : f64, doppler.start = 1.000000e+01
// CHECK-NEXT: %[[A2:.*]] = doppler.einsum "ij->ij" join(tanh)
// CHECK-NEXT: %[[H2:.*]] = doppler.evict %[[A2]] from <0> {{.*}}doppler.end = 2.100000e+01 : f64, doppler.start = 2.000000e+01
// CHECK-NEXT: doppler.einsum "ij->ij" join(neg) (%[[A1]])
// CHECK-NEXT: doppler.einsum "ij->ij" join(sigmoid) (%[[A2]])
// CHECK-NEXT: %[[D:.*]] = doppler.einsum "ij,ij->ij" join(add)
// CHECK-NEXT: %[[E:.*]] = doppler.einsum "ij->ij" join(relu) (%[[D]])
// CHECK-NEXT: %[[R1:.*]] = doppler.reload %[[H1]] to <0> after(%[[E]] : tensor<32x32xf32>) {{.*}}doppler.start = 6.000000e+01
// CHECK-NEXT: %[[F:.*]] = doppler.einsum "ij,ij->ij" join(add) (%[[R1]], %[[E]]) {{.*}}doppler.start = 6.100000e+01
// CHECK-NEXT: %[[R2:.*]] = doppler.reload %[[H2]] to <0> after(%[[F]] : tensor<32x32xf32>) {{.*}}doppler.start = 7.100000e+01
// CHECK-NEXT: doppler.einsum "ij,ij->ij" join(mul) (%[[R2]], %[[F]]) {{.*}}doppler.start = 7.200000e+01
// With 20480 bytes, one eviction is enough (%d then holds four values and
// the argument).
// LIMIT-SAME: doppler.offload = {{{.*}}evictions = 1 : i64
// LIMIT-SAME: doppler.peak_memory = array<i64: 20480>
func.func @two(%x: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %a1 = doppler.einsum "ij->ij" join(exp) (%x) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %a2 = doppler.einsum "ij->ij" join(tanh) (%x) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %b = doppler.einsum "ij->ij" join(neg) (%a1) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %c = doppler.einsum "ij->ij" join(sigmoid) (%a2) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %d = doppler.einsum "ij,ij->ij" join(add) (%b, %c) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %e = doppler.einsum "ij->ij" join(relu) (%d) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %f = doppler.einsum "ij,ij->ij" join(add) (%a1, %e) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %g = doppler.einsum "ij,ij->ij" join(mul) (%a2, %f) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  return %g : tensor<32x32xf32>
}

// Two devices. %a is read on device 1 through a transfer (untouched), early
// by %s on device 0 (reads the original) and late by %f (reads the reload):
// in any order %a, %s, %c, %d and the argument are live while %d runs.
// Planned: %a 0-10 (evicted 10 -> 11), %c 10-20, %s 20-30 (%a freed at 30),
// %d 30-40 (%s, %c, %d and the argument: 16384), the reload after %d
// (40 -> 41), %e 40-50, %f 50-60. Device 1 holds the received copy and %r:
// 8192 bytes.
// CHECK-LABEL: func.func @cross
// CHECK-SAME: doppler.makespan = 6.000000e+01 : f64
// CHECK-SAME: evictions = 1 : i64
// CHECK-SAME: doppler.peak_memory = array<i64: 16384, 8192>
// CHECK-NEXT: %[[A:.*]] = doppler.einsum "ij->ij" join(exp)
// CHECK-NEXT: %[[H:.*]] = doppler.evict %[[A]] from <0>
// CHECK-NEXT: doppler.transfer %[[A]] from <0> to <1>
// CHECK-NEXT: doppler.einsum "ij->ij" join(square)
// CHECK-NEXT: doppler.einsum "ij->ij" join(abs) (%[[A]])
// CHECK: %[[D:.*]] = doppler.einsum "ij,ij->ij" join(add)
// CHECK: %[[R:.*]] = doppler.reload %[[H]] to <0> after(%[[D]] : tensor<32x32xf32>)
// CHECK-NEXT: doppler.einsum "ij,ij->ij" join(add) (%[[R]],
func.func @cross(%x: tensor<32x32xf32>) -> (tensor<32x32xf32>, tensor<32x32xf32>) {
  %a = doppler.einsum "ij->ij" join(exp) (%x) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %m = doppler.transfer %a from <0> to <1> {doppler.device = #doppler.device<1>} : tensor<32x32xf32>
  %r = doppler.einsum "ij->ij" join(square) (%m) {doppler.device = #doppler.device<1>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %s = doppler.einsum "ij->ij" join(abs) (%a) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %c = doppler.einsum "ij->ij" join(neg) (%x) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %d = doppler.einsum "ij,ij->ij" join(add) (%s, %c) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %e = doppler.einsum "ij->ij" join(relu) (%d) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %f = doppler.einsum "ij,ij->ij" join(add) (%a, %e) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  return %f, %r : tensor<32x32xf32>, tensor<32x32xf32>
}

// An eviction of a received copy. %v (device 0) is read on device 1 by %z
// only, at the end; %y is device 1's argument. Device 1 runs %p 0-10, %q
// 10-20, %w 20-30, %u 30-40, and %v's copy would arrive at 11 and stay
// until %z: while %u runs, %q, %w, %u, the copy and %y need 20480 bytes,
// in any order (%u reads %q and %w; %p, %q and %w each hold one more value
// when they run). So the copy on device 1 is evicted, with no early
// reader: the host copy is taken from the original on device 0 (evict from
// <0>, 10 -> 11: device 0 holds %x and %v, 8192), the transfer is gone,
// and the reload goes to device 1 after %u (40 -> 41; the only trigger
// that keeps %u's step within 16384): %z runs 41-51, makespan 50 + 1.
// CHECK-LABEL: func.func @received
// CHECK-SAME: doppler.makespan = 5.100000e+01 : f64
// CHECK-SAME: doppler.offload = {bytes_evicted = 4096 : i64, evictions = 1 : i64, host_peak = 4096 : i64, unlimited_makespan = 5.000000e+01 : f64}
// CHECK-SAME: doppler.peak_memory = array<i64: 8192, 16384>
// CHECK-NEXT: %[[V:.*]] = doppler.einsum "ij->ij" join(exp)
// CHECK-NEXT: %[[H:.*]] = doppler.evict %[[V]] from <0> {doppler.device = #doppler.device<0>, doppler.end = 1.100000e+01 : f64, doppler.start = 1.000000e+01 : f64}
// CHECK-NOT: = doppler.transfer
// CHECK: %[[U:.*]] = doppler.einsum "ij,ij->ij" join(add)
// CHECK-NEXT: %[[R:.*]] = doppler.reload %[[H]] to <1> after(%[[U]] : tensor<32x32xf32>) {doppler.device = #doppler.device<1>, doppler.end = 4.100000e+01 : f64, doppler.start = 4.000000e+01 : f64}
// CHECK-NEXT: doppler.einsum "ij,ij->ij" join(mul) (%[[R]], %[[U]]) {{.*}}doppler.device = #doppler.device<1>, doppler.end = 5.100000e+01 : f64, doppler.start = 4.100000e+01
// CHECK-NEXT: return
func.func @received(%x: tensor<32x32xf32>, %y: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %v = doppler.einsum "ij->ij" join(exp) (%x) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %m = doppler.transfer %v from <0> to <1> {doppler.device = #doppler.device<1>} : tensor<32x32xf32>
  %p = doppler.einsum "ij->ij" join(abs) (%y) {doppler.device = #doppler.device<1>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %q = doppler.einsum "ij->ij" join(tanh) (%p) {doppler.device = #doppler.device<1>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %w = doppler.einsum "ij->ij" join(neg) (%y) {doppler.device = #doppler.device<1>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %u = doppler.einsum "ij,ij->ij" join(add) (%q, %w) {doppler.device = #doppler.device<1>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %z = doppler.einsum "ij,ij->ij" join(mul) (%m, %u) {doppler.device = #doppler.device<1>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  return %z : tensor<32x32xf32>
}

// The same with an early reader of the received copy on device 1 (%p): the
// transfer stays for %p, and only %z reads the reload. Device 1 runs %w
// 0-10, %p 11-21 (the copy arrives at 11; %w, the copy, %p and %y: 16384),
// %q 21-31 (the copy is freed when %p ends), %u 31-41, the reload after %u
// (41 -> 42), %z 42-52: makespan 51 + 1.
// CHECK-LABEL: func.func @received_early
// CHECK-SAME: doppler.makespan = 5.200000e+01 : f64
// CHECK-SAME: doppler.offload = {bytes_evicted = 4096 : i64, evictions = 1 : i64, host_peak = 4096 : i64, unlimited_makespan = 5.100000e+01 : f64}
// CHECK-SAME: doppler.peak_memory = array<i64: 8192, 16384>
// CHECK-NEXT: %[[V:.*]] = doppler.einsum "ij->ij" join(exp)
// CHECK-NEXT: %[[H:.*]] = doppler.evict %[[V]] from <0>
// CHECK-NEXT: %[[M:.*]] = doppler.transfer %[[V]] from <0> to <1>
// CHECK-NEXT: doppler.einsum "ij->ij" join(abs) (%[[M]]) {{.*}}doppler.start = 1.100000e+01
// CHECK: %[[U:.*]] = doppler.einsum "ij,ij->ij" join(add)
// CHECK-NEXT: %[[R:.*]] = doppler.reload %[[H]] to <1> after(%[[U]] : tensor<32x32xf32>) {doppler.device = #doppler.device<1>, doppler.end = 4.200000e+01 : f64, doppler.start = 4.100000e+01 : f64}
// CHECK-NEXT: doppler.einsum "ij,ij->ij" join(mul) (%[[R]], %[[U]])
func.func @received_early(%x: tensor<32x32xf32>, %y: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %v = doppler.einsum "ij->ij" join(exp) (%x) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %m = doppler.transfer %v from <0> to <1> {doppler.device = #doppler.device<1>} : tensor<32x32xf32>
  %p = doppler.einsum "ij->ij" join(abs) (%m) {doppler.device = #doppler.device<1>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %q = doppler.einsum "ij->ij" join(tanh) (%p) {doppler.device = #doppler.device<1>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %w = doppler.einsum "ij->ij" join(neg) (%y) {doppler.device = #doppler.device<1>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %u = doppler.einsum "ij,ij->ij" join(add) (%q, %w) {doppler.device = #doppler.device<1>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %z = doppler.einsum "ij,ij->ij" join(mul) (%m, %u) {doppler.device = #doppler.device<1>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  return %z : tensor<32x32xf32>
}
