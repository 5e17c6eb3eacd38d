// Bad options are errors before any function is touched, with no location.
// RUN: not doppler-opt %s --split-input-file --allow-unregistered-dialect --doppler-plan-memory="memory-limit=-1" 2>&1 | FileCheck %s --check-prefix=NEG
// RUN: not doppler-opt %s --split-input-file --allow-unregistered-dialect --doppler-plan-memory="memory-limit=lots" 2>&1 | FileCheck %s --check-prefix=NAN
// RUN: not doppler-opt %s --split-input-file --allow-unregistered-dialect --doppler-plan-memory="max-evaluations=0" 2>&1 | FileCheck %s --check-prefix=EVALS
// RUN: not doppler-opt %s --split-input-file --allow-unregistered-dialect --doppler-plan-memory="system=no-such-system" 2>&1 | FileCheck %s --check-prefix=SYSTEM
// Errors about the IR are at the function or the op, one per function:
// RUN: doppler-opt %s --split-input-file --allow-unregistered-dialect --verify-diagnostics --doppler-plan-memory=system=%S/Inputs/offload-system.json

// NEG: <unknown>:0: error: doppler-plan-memory: memory-limit must be a non-negative number of bytes (0: the system's capacities), got -1
// NAN: for the --memory-limit option: 'lots' value invalid for floating point argument!
// EVALS: <unknown>:0: error: doppler-plan-memory: max-evaluations must be at least 1, got 0
// SYSTEM: <unknown>:0: error: doppler-plan-memory: unknown system preset 'no-such-system'

// A limit below what one op needs at once: 16384 bytes, 4096 of them for
// the argument, leave 12288, and the add needs its two inputs and its
// output (3 x 8192 bytes) at once.
// expected-error @below {{@too_big does not fit in device memory even with offload to host: device 0 needs}}
func.func @too_big(%x: tensor<32x64xf32>) -> tensor<32x64xf32> {
  %a = doppler.einsum "ij->ij" join(exp) (%x) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x64xf32>) -> tensor<32x64xf32>
  %b = doppler.einsum "ij,ij->ij" join(add) (%a, %x) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x64xf32>, tensor<32x64xf32>) -> tensor<32x64xf32>
  return %b : tensor<32x64xf32>
}

// -----

// The host's memory holds what is evicted at once: here 1000 bytes, and the
// one eviction @mid needs (doppler-plan-memory.mlir: %a, read early by %b
// and late by %f, is live across %d's step in every order) stashes 4096.
// RUN: not doppler-opt %s --split-input-file --allow-unregistered-dialect --doppler-plan-memory=system=%S/Inputs/offload-small-host-system.json 2>&1 | FileCheck %s --check-prefix=HOST
// HOST: error: @small_host needs 4.1 kB of host memory for its evictions, more than the system's 1 kB
func.func @small_host(%x: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %a = doppler.einsum "ij->ij" join(exp) (%x) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %b = doppler.einsum "ij->ij" join(tanh) (%a) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %c = doppler.einsum "ij->ij" join(neg) (%x) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %d = doppler.einsum "ij,ij->ij" join(add) (%b, %c) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %e = doppler.einsum "ij->ij" join(relu) (%d) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %f = doppler.einsum "ij,ij->ij" join(add) (%a, %e) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  return %f : tensor<32x32xf32>
}

// -----

func.func @unplaced(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{'doppler.einsum' op is not placed (no doppler.device); run doppler-place and doppler-insert-transfers before doppler-plan-memory}}
  %a = doppler.einsum "i->i" join(exp) (%x) {doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<4xf32>) -> tensor<4xf32>
  return %a : tensor<4xf32>
}

// -----

func.func @uncosted(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{'doppler.einsum' op has no cost (doppler.compute_cost, doppler.transfer_cost); run doppler-annotate-costs first}}
  %a = doppler.einsum "i->i" join(exp) (%x) {doppler.device = #doppler.device<0>} : (tensor<4xf32>) -> tensor<4xf32>
  return %a : tensor<4xf32>
}

// -----

// The pass runs once: a program with evictions is refused.
func.func @twice(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = doppler.einsum "i->i" join(exp) (%x) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error @below {{'doppler.evict' op is an offload already: doppler-plan-memory plans a program once (run it last, on a program without evictions)}}
  %h = doppler.evict %a from <0> {doppler.device = #doppler.device<0>} : tensor<4xf32>
  %r = doppler.reload %h to <0> {doppler.device = #doppler.device<0>} : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// expected-error @below {{'func.func' op has 2 blocks; doppler-plan-memory plans straight-line functions only}}
func.func @branches(%a: tensor<4xf32>) -> tensor<4xf32> {
  "test.br"()[^next] : () -> ()
^next:
  return %a : tensor<4xf32>
}

// -----

// Cost-only graphs hold no bytes: nothing to plan; an explicit limit warns.
// RUN: not doppler-opt %s --split-input-file --allow-unregistered-dialect --doppler-plan-memory="system=%S/Inputs/offload-system.json memory-limit=1" 2>&1 | FileCheck %s --check-prefix=TASKS
// TASKS: error: @too_big reads 8.19 kB of arguments on device 0, more than its 1 B of memory (arguments stay on the devices that read them)
// TASKS: warning: memory-limit ignored: the ops carry no byte sizes (cost-only graph)
func.func @tasks() {
  %0 = doppler.task "input" compute(1.0) transfer(1.0) {doppler.device = #doppler.device<0>}
  %1 = doppler.task "sink" (%0) compute(1.0) transfer(1.0) {doppler.device = #doppler.device<0>}
  return
}
