// doppler-place{system=...} with a description whose devices give a
// `hand_off` (a calibrated host's): the placement is judged as
// doppler-simulate predicts it, hand-offs included, so the predicted
// makespan of the summary is the one doppler-simulate writes. Here each of
// b and c waits for its producer on the same device and pays 1 (1e-6 s):
// 2 + 1 + 3 + 1 + 4 = 11, not the reference's 9.
// RUN: doppler-opt %s --doppler-place="devices=2 system=%S/Inputs/hand-off-system.json" --doppler-insert-transfers --doppler-simulate=system=%S/Inputs/hand-off-system.json 2>&1 | FileCheck %s
// RUN: doppler-opt %s --doppler-place="devices=2 system=cpu4" --doppler-insert-transfers --doppler-simulate=system=cpu4 2>&1 | FileCheck %s --check-prefix=REF
// CHECK: remark: placed 3 ops on 2 devices with {{.*}}: predicted makespan 11,
// CHECK: doppler.makespan = 1.100000e+01 : f64
// REF: remark: placed 3 ops on 2 devices with {{.*}}: predicted makespan 9,
// REF: doppler.makespan = 9.000000e+00 : f64
func.func @chain() -> !doppler.value {
  %a = doppler.task "a" compute(2.0) transfer(10.0)
  %b = doppler.task "b" (%a) compute(3.0) transfer(10.0)
  %c = doppler.task "c" (%b) compute(4.0) transfer(10.0)
  return %c : !doppler.value
}
