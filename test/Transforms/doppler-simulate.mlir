// RUN: doppler-opt %s --split-input-file --doppler-simulate | FileCheck %s
// RUN: doppler-opt %s --split-input-file --doppler-insert-transfers --doppler-simulate | FileCheck %s --check-prefix=MOVED

// a (2) on device 0 feeds b (3) on device 1 (transfer 10) and c (4) on
// device 0. b starts at 2 + 10 = 12 and ends at 15; c runs 2..6.
// CHECK-LABEL: func.func @cross_device
// CHECK-SAME: doppler.makespan = 1.500000e+01 : f64
// CHECK: doppler.task "a" {{.*}}doppler.end = 2.000000e+00 : f64, doppler.start = 0.000000e+00 : f64
// CHECK: doppler.task "b" {{.*}}doppler.end = 1.500000e+01 : f64, doppler.start = 1.200000e+01 : f64
// CHECK: doppler.task "c" {{.*}}doppler.end = 6.000000e+00 : f64, doppler.start = 2.000000e+00 : f64
// After transfer insertion the schedule is the same; the transfer runs
// from a's end to b's start.
// MOVED-LABEL: func.func @cross_device
// MOVED-SAME: doppler.makespan = 1.500000e+01 : f64
// MOVED: doppler.transfer {{.*}}doppler.end = 1.200000e+01 : f64, doppler.start = 2.000000e+00 : f64
// MOVED: doppler.task "b" {{.*}}doppler.start = 1.200000e+01 : f64
func.func @cross_device() -> (!doppler.value, !doppler.value) {
  %a = doppler.task "a" compute(2.0) transfer(10.0) {doppler.device = #doppler.device<0>}
  %b = doppler.task "b" (%a) compute(3.0) transfer(1.0) {doppler.device = #doppler.device<1>}
  %c = doppler.task "c" (%a) compute(4.0) transfer(1.0) {doppler.device = #doppler.device<0>}
  return %b, %c : !doppler.value, !doppler.value
}

// -----

// Two ready ops on one device run one after the other, in readiness order.
// CHECK-LABEL: func.func @one_device
// CHECK-SAME: doppler.makespan = 5.000000e+00 : f64
func.func @one_device() {
  %a = doppler.task "a" compute(2.0) transfer(10.0) {doppler.device = #doppler.device<0>}
  %b = doppler.task "b" compute(3.0) transfer(10.0) {doppler.device = #doppler.device<0>}
  return
}
