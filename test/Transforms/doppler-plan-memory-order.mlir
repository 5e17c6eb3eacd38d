// doppler-plan-memory on a program that fits through its execution order
// alone (the planner chooses an order first, evictions second:
// Doppler/Placement/Offload.h). Two parallel chains on device 0, each with
// a big intermediate: %bigK (32x32xf32, 4096 bytes) -> %tK (4096) -> %sK
// (32xf32, 128), then %out = %s1 + %s2; the argument %x holds 128 bytes.
// Every op costs 10. The capacity is 10240 bytes: two big values and the
// small ones, not three big ones.
// RUN: doppler-opt %s --doppler-plan-memory="system=%S/Inputs/offload-system.json memory-limit=10240" | FileCheck %s
//
// In readiness order both %big1 and %big2 run first (both are ready at 0):
// %x, %big1 and %big2 hold 8320 bytes and %t1 or %t2 would need 4096 more,
// so neither can run and nothing frees memory (a memory deadlock). A
// depth-first order (chain 1, then chain 2) needs no eviction: %big1 0-10,
// %t1 10-20 (%x, %big1, %t1: 8320), %s1 20-30, %big2 30-40, %t2 40-50
// (%x, %s1, %big2, %t2: 8448, the peak), %s2 50-60, %out 60-70 (makespan
// 70, seven ops of 10, as without a limit). The planned start times (the
// priorities the runtime follows) put chain 1 before chain 2.
// CHECK-LABEL: func.func @chains
// CHECK-SAME: doppler.makespan = 7.000000e+01 : f64
// CHECK-SAME: doppler.offload = {bytes_evicted = 0 : i64, evictions = 0 : i64, host_peak = 0 : i64, unlimited_makespan = 7.000000e+01 : f64}
// CHECK-SAME: doppler.peak_memory = array<i64: 8448>
// CHECK-NOT: doppler.evict
// CHECK-NOT: doppler.reload
// CHECK: join(mul) {{.*}}doppler.end = 1.000000e+01 : f64, doppler.start = 0.000000e+00
// CHECK-NEXT: join(add) {{.*}}doppler.end = 4.000000e+01 : f64, doppler.start = 3.000000e+01
// CHECK-NEXT: join(tanh) {{.*}}doppler.end = 2.000000e+01 : f64, doppler.start = 1.000000e+01
// CHECK-NEXT: join(exp) {{.*}}doppler.end = 5.000000e+01 : f64, doppler.start = 4.000000e+01
// CHECK-NEXT: "ij->i" {{.*}}doppler.end = 3.000000e+01 : f64, doppler.start = 2.000000e+01
// CHECK-NEXT: "ij->j" {{.*}}doppler.end = 6.000000e+01 : f64, doppler.start = 5.000000e+01
// CHECK-NEXT: "i,i->i" {{.*}}doppler.end = 7.000000e+01 : f64, doppler.start = 6.000000e+01
// CHECK-NEXT: return
//
// On the runtime, in the planned order (the default for a program with
// doppler.offload), the program runs within the 10240 bytes and computes
// what the interpreter does; the peak it reports is at most 10240 (the
// pattern matches 1 to 10240).
// RUN: doppler-opt %s --doppler-plan-memory="system=%S/Inputs/offload-system.json memory-limit=10240" -o %t.mlir
// RUN: %python %S/../Runtime/Inputs/watchdog.py doppler-run %t.mlir --check --repeat 3 --memory-limit 10240 | FileCheck %s --check-prefix=RUNS
// RUNS: device 0: {{.*}} 7 compute task(s), {{.*}} peak {{([1-9][0-9]{0,3}|10[01][0-9][0-9]|102[0-3][0-9]|10240)}} bytes of a 10240-byte limit
// RUNS: check against the interpreter: {{.*}}: ok
// RUNS: exit status 0
// In readiness order (--order fifo) the runtime deadlocks as the planner
// predicts: a device runs one task at a time and serves its ready queue in
// the order tasks became ready, so %big2 (ready at the start) always runs
// before %t1 (ready when %big1 ends), whatever the timing. (Every run is
// under a watchdog: a deadlock must fail, never hang.)
// RUN: %python %S/../Runtime/Inputs/watchdog.py doppler-run %t.mlir --order fifo --repeat 1 --memory-limit 10240 2>&1 | FileCheck %s --check-prefix=FIFO
// FIFO: error: memory deadlock on device 0: task {{[0-9]+}} (einsum ij->ij tanh on device 0) needs 4096 bytes, task {{[0-9]+}} (einsum ij->ij exp on device 0) needs 4096 bytes; 8192 of the 10240-byte limit are held by buffers whose readers cannot run
// FIFO-NEXT: exit status 1
func.func @chains(%x: tensor<32xf32>) -> tensor<32xf32> {
  %big1 = doppler.einsum "i,j->ij" join(mul) (%x, %x) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32xf32>, tensor<32xf32>) -> tensor<32x32xf32>
  %big2 = doppler.einsum "i,j->ij" join(add) (%x, %x) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32xf32>, tensor<32xf32>) -> tensor<32x32xf32>
  %t1 = doppler.einsum "ij->ij" join(tanh) (%big1) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %t2 = doppler.einsum "ij->ij" join(exp) (%big2) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %s1 = doppler.einsum "ij->i" join(identity) agg(add) (%t1) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32xf32>
  %s2 = doppler.einsum "ij->j" join(identity) agg(add) (%t2) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32xf32>
  %out = doppler.einsum "i,i->i" join(add) (%s1, %s2) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32xf32>, tensor<32xf32>) -> tensor<32xf32>
  return %out : tensor<32xf32>
}
