// The whole pipeline on small examples: every op ends up placed, every
// cross-device use goes through a transfer, the function has a makespan,
// and the result still computes what the input did.
// RUN: %python %doppler_src/examples/generate_examples.py llama --seq 16 --d-model 32 --heads 4 --ffn 48 > %t.mlir
// RUN: doppler-opt %t.mlir --doppler-pipeline="devices=4 parts=4 system=h100x4" -o %t.placed.mlir 2>&1 | FileCheck %s --check-prefix=REMARK
// Every op placed, every cross-device use through a transfer:
// RUN: doppler-opt %t.placed.mlir --doppler-verify-transfers -o /dev/null
// RUN: FileCheck %s < %t.placed.mlir
// RUN: doppler-interpret %t.placed.mlir --compare %t.mlir | FileCheck %s --check-prefix=SAME
// offload (doppler-plan-memory, on by default) changes nothing when the
// program fits, as it does on h100x4's 80 GB; with 48000 bytes per device
// the block on one device (38.7 kB of arguments) needs two evictions and
// still computes what the input did.
// RUN: doppler-opt %t.mlir --doppler-pipeline="devices=1 parts=1 policy=single offload=false" -o %t.nooffload.mlir 2>/dev/null
// RUN: doppler-opt %t.mlir --doppler-pipeline="devices=1 parts=1 policy=single" -o %t.offload.mlir 2>/dev/null
// RUN: diff %t.nooffload.mlir %t.offload.mlir
// RUN: doppler-opt %t.mlir --doppler-pipeline="devices=1 parts=1 policy=single memory-limit=48000" -o %t.limited.mlir 2>/dev/null
// RUN: FileCheck %s --check-prefix=OFFLOAD < %t.limited.mlir
// RUN: doppler-interpret %t.limited.mlir --compare %t.mlir | FileCheck %s --check-prefix=SAME
// RUN: not doppler-opt %t.mlir --doppler-pipeline="devices=1 parts=1 policy=single memory-limit=30000" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOFIT
// OFFLOAD: doppler.offload = {{{.*}}evictions = 2 : i64
// OFFLOAD-SAME: doppler.peak_memory = array<i64: 47872>
// OFFLOAD-COUNT-2: doppler.evict
// NOFIT: error: @llama_block reads 38.7 kB of arguments on device 0, more than its 30 kB of memory
// Placement is deterministic for a seed.
// RUN: doppler-opt %t.mlir --doppler-pipeline="devices=4 parts=4 policy=random seed=5 budget-evaluations=100" -o %t.a 2>/dev/null
// RUN: doppler-opt %t.mlir --doppler-pipeline="devices=4 parts=4 policy=random seed=5 budget-evaluations=100" -o %t.b 2>/dev/null
// RUN: diff %t.a %t.b
// Without decomposition (parts=1) the ops stay whole; fusion (on by
// default) still merges the elementwise chains: 50 ops become 33.
// RUN: doppler-opt %t.mlir --doppler-pipeline="devices=2 parts=1 fuse=false" 2>&1 >/dev/null | FileCheck %s --check-prefix=WHOLE
// RUN: doppler-opt %t.mlir --doppler-pipeline="devices=2 parts=1" 2>&1 >/dev/null | FileCheck %s --check-prefix=WHOLEFUSED
// With fuse=true (the default), elementwise chains (RMSNorm's pieces, RoPE, softmax,
// SwiGLU's gate) become doppler.fused ops block by block after
// decomposition; they are costed, placed and simulated like any op, and the
// result is unchanged within 1e-6 relative. fuse=false keeps every einsum.
// RUN: doppler-opt %t.mlir --doppler-pipeline="devices=4 parts=4 system=cpu4 fuse=true" -o %t.fused.mlir 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: doppler-opt %t.fused.mlir --doppler-verify-transfers -o /dev/null
// RUN: FileCheck %s --check-prefix=FUSED < %t.fused.mlir
// RUN: doppler-interpret %t.fused.mlir --compare %t.mlir --tolerance 1e-6 | FileCheck %s --check-prefix=SAME
// RUN: doppler-opt %t.mlir --doppler-pipeline="devices=2 parts=4 fuse=false" 2>/dev/null | FileCheck %s --check-prefix=UNFUSED
// FUSED-LABEL: func.func @llama_block
// FUSED: doppler.fused "sf,sf->sf" "silu(in0); mul(s0, in1)" ({{.*}}) {doppler.compute_cost = {{.*}}, doppler.device = #doppler.device<{{[0-3]}}>, doppler.end = {{.*}}, doppler.start = {{.*}}, doppler.transfer_cost =
// UNFUSED-LABEL: func.func @llama_block
// UNFUSED-NOT: doppler.fused
// UNFUSED: return

// REMARK: remark: placed {{[0-9]+}} ops on 4 devices with doppler (greedy, embedded model, within {{[0-9]+}} simulator runs): predicted makespan
// REMARK: remark: budget: doppler greedy {{.*}}, critical-path {{.*}}, join-aware {{.*}}; refined
// CHECK-LABEL: func.func @llama_block
// CHECK-SAME: doppler.makespan =
// CHECK: doppler.transfer {{.*}}doppler.device = #doppler.device<
// SAME: ok
// WHOLE: remark: placed 50 ops on 2 devices
// WHOLEFUSED: remark: placed 33 ops on 2 devices

// The per-function passes, scheduled on each function (any(...)), place and
// simulate exactly as the module-level passes do.
// RUN: doppler-opt %t.mlir --doppler-annotate-costs --doppler-place="devices=4 policy=critical-path" --doppler-insert-transfers --doppler-simulate -o %t.module.mlir 2>/dev/null
// RUN: doppler-opt %t.mlir --pass-pipeline="builtin.module(any(doppler-annotate-costs,doppler-"place"{devices=4 policy=critical-path},doppler-insert-transfers,doppler-simulate))" -o %t.any.mlir 2>/dev/null
// (doppler-"place": keeps lit from substituting the tool of that name.)
// RUN: diff %t.module.mlir %t.any.mlir
