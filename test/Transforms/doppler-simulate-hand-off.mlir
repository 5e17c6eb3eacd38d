// doppler-simulate{system=...}: a description whose devices give a
// `hand_off` (here 1e-6 s = 1 cost unit, a microsecond) makes an op whose
// device sat idle waiting for it (its last input made on the same device,
// nothing else queued there) start that long after it could; device d
// beyond the description takes device d mod N's figure. Without a system
// (or without hand-offs) the reference schedule.
// RUN: doppler-opt %s --split-input-file --doppler-simulate=system=%S/Inputs/hand-off-system.json | FileCheck %s
// RUN: doppler-opt %s --split-input-file --doppler-simulate | FileCheck %s --check-prefix=REF
// RUN: doppler-opt %s --split-input-file --doppler-simulate=system=cpu4 | FileCheck %s --check-prefix=REF
// RUN: not doppler-opt %s --doppler-simulate=system=%S/Inputs/bad-hand-off-system.json 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not doppler-opt %s --doppler-annotate-costs=system=%S/Inputs/bad-hand-off-system.json 2>&1 | FileCheck %s --check-prefix=BADCOSTS
// RUN: not doppler-opt %s --doppler-simulate=system=tpu9 2>&1 | FileCheck %s --check-prefix=PRESET
// With `hand_off_bytes` an op pays the share outputBytes / hand_off_bytes
// of its producer (in full from there on): these tasks have no bytes, so
// nothing; the einsums below 1/4 and all of it.
// RUN: doppler-opt %s --split-input-file --doppler-simulate=system=%S/Inputs/hand-off-bytes-system.json | FileCheck %s --check-prefix=BYTES
// RUN: not doppler-opt %s --doppler-simulate=system=%S/Inputs/bad-hand-off-bytes-system.json 2>&1 | FileCheck %s --check-prefix=BADBYTES
// BADBYTES: error: doppler-simulate: {{.*}}bad-hand-off-bytes-system.json: devices[0].hand_off_bytes: expected a non-negative number of bytes
// BAD: error: doppler-simulate: {{.*}}bad-hand-off-system.json: devices[0].hand_off: expected a number of seconds in [0, 1]
// BADCOSTS: error: doppler-annotate-costs: {{.*}}bad-hand-off-system.json: devices[0].hand_off: expected a number of seconds in [0, 1]
// PRESET: error: doppler-simulate: unknown system preset 'tpu9'

// b became ready as a ended, with nothing else queued on device 0: it
// starts 1 later (3..6, against 2..5).
// CHECK-LABEL: func.func @waited
// CHECK-SAME: doppler.makespan = 6.000000e+00 : f64
// CHECK: doppler.task "a" {{.*}}doppler.end = 2.000000e+00 : f64, doppler.start = 0.000000e+00 : f64
// CHECK: doppler.task "b" {{.*}}doppler.end = 6.000000e+00 : f64, doppler.start = 3.000000e+00 : f64
// REF-LABEL: func.func @waited
// REF-SAME: doppler.makespan = 5.000000e+00 : f64
// BYTES-LABEL: func.func @waited
// BYTES-SAME: doppler.makespan = 5.000000e+00 : f64
func.func @waited() -> !doppler.value {
  %a = doppler.task "a" compute(2.0) transfer(10.0) {doppler.device = #doppler.device<0>}
  %b = doppler.task "b" (%a) compute(3.0) transfer(10.0) {doppler.device = #doppler.device<0>}
  return %b : !doppler.value
}

// -----

// s was queued when a ended (2..3), and b, ready at 2, waits behind it:
// neither pays (3..6), as in the reference.
// CHECK-LABEL: func.func @queued
// CHECK-SAME: doppler.makespan = 6.000000e+00 : f64
// CHECK: doppler.task "b" {{.*}}doppler.end = 6.000000e+00 : f64, doppler.start = 3.000000e+00 : f64
// REF-LABEL: func.func @queued
// REF-SAME: doppler.makespan = 6.000000e+00 : f64
func.func @queued() -> (!doppler.value, !doppler.value) {
  %a = doppler.task "a" compute(2.0) transfer(10.0) {doppler.device = #doppler.device<0>}
  %s = doppler.task "s" compute(1.0) transfer(10.0) {doppler.device = #doppler.device<0>}
  %b = doppler.task "b" (%a) compute(3.0) transfer(10.0) {doppler.device = #doppler.device<0>}
  return %s, %b : !doppler.value, !doppler.value
}

// -----

// y's input comes from device 1 (the link's latency holds the wake-up):
// 11..12 as in the reference; z follows y on device 0 and pays (13..14).
// Device 1 takes device 0's figure (1 mod 1).
// CHECK-LABEL: func.func @remote
// CHECK-SAME: doppler.makespan = 1.400000e+01 : f64
// CHECK: doppler.task "y" {{.*}}doppler.end = 1.200000e+01 : f64, doppler.start = 1.100000e+01 : f64
// CHECK: doppler.task "z" {{.*}}doppler.end = 1.400000e+01 : f64, doppler.start = 1.300000e+01 : f64
// REF-LABEL: func.func @remote
// REF-SAME: doppler.makespan = 1.300000e+01 : f64
func.func @remote() -> !doppler.value {
  %x = doppler.task "x" compute(1.0) transfer(10.0) {doppler.device = #doppler.device<1>}
  %y = doppler.task "y" (%x) compute(1.0) transfer(10.0) {doppler.device = #doppler.device<0>}
  %z = doppler.task "z" (%y) compute(1.0) transfer(10.0) {doppler.device = #doppler.device<0>}
  return %z : !doppler.value
}

// -----

// a's output is 1 KiB (a quarter of hand_off_bytes): b pays 0.25 after it;
// b's is 4 KiB: c pays all of it. Costs: 2 each.
// BYTES-LABEL: func.func @bytes
// BYTES: doppler.einsum {{.*}}doppler.end = 2.000000e+00 : f64, doppler.start = 0.000000e+00 : f64
// BYTES: doppler.einsum {{.*}}doppler.end = 4.250000e+00 : f64, doppler.start = 2.250000e+00 : f64
// BYTES: doppler.einsum {{.*}}doppler.end = 7.250000e+00 : f64, doppler.start = 5.250000e+00 : f64
func.func @bytes(%x: tensor<256xf32>, %y: tensor<4xf32>) -> tensor<256xf32> {
  %a = doppler.einsum "i->i" join(exp) (%x) {doppler.device = #doppler.device<0>, doppler.compute_cost = 2.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<256xf32>) -> tensor<256xf32>
  %b = doppler.einsum "i,j->ij" join(mul) (%a, %y) {doppler.device = #doppler.device<0>, doppler.compute_cost = 2.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<256xf32>, tensor<4xf32>) -> tensor<256x4xf32>
  %c = doppler.einsum "ij->i" join(identity) agg(add) (%b) {doppler.device = #doppler.device<0>, doppler.compute_cost = 2.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<256x4xf32>) -> tensor<256xf32>
  return %c : tensor<256xf32>
}
