// doppler-plan-memory on a program that fits through its execution order
// alone (the planner chooses an order first, evictions second:
// Doppler/Placement/Offload.h). Two parallel chains on device 0, each with
// a big intermediate: %bigK (32x32xf32, 4096 bytes) -> %tK (4096) -> %sK
// (32xf32, 128), then %out = %s1 + %s2; the argument %x holds 128 bytes.
// Every op costs 10. The capacity is 10240 bytes: two big values and the
// small ones, not three big ones.
//
// In readiness order both %big1 and %big2 run first (both are ready at 0):
// %x, %big1 and %big2 hold 8320 bytes and %t1 or %t2 would need 4096 more,
// so neither can run and nothing frees memory (a memory deadlock). A
// depth-first order (chain 1, then chain 2) needs no eviction: %big1 0-10,
// %t1 10-20 (%x, %big1, %t1: 8320), %s1 20-30, %big2 30-40, %t2 40-50
// (%x, %s1, %big2, %t2: 8448, the peak), %s2 50-60, %out 60-70 (makespan
// 70, seven ops of 10, as without a limit). The planned start times (the
// priorities the runtime follows) put chain 1 before chain 2.
//
// On the runtime, in the planned order (the default for a program with
// doppler.offload), the program runs within the 10240 bytes and computes
// what the interpreter does; the peak it reports is at most 10240 (the
// pattern matches 1 to 10240).
// In readiness order (--order fifo) the runtime deadlocks as the planner
// predicts: a device runs one task at a time and serves its ready queue in
// the order tasks became ready, so %big2 (ready at the start) always runs
// before %t1 (ready when %big1 ends), whatever the timing. (Every run is
// under a watchdog: a deadlock must fail, never hang.)
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
