// doppler.evict and doppler.reload become runtime tasks: an evict task (a
// host value) and reload tasks that wait for their `after` values without
// reading them; the program runs on the CPU backend and agrees with the
// interpreter, also after a round trip through the exported plan.
// RUN: doppler-run %s --export-plan %t.plan.json | FileCheck %s --check-prefix=EXPORT
// RUN: FileCheck %s --check-prefix=PLAN < %t.plan.json
// RUN: doppler-run %s --check --repeat 1 | FileCheck %s --check-prefix=EXEC
// RUN: doppler-run %s --seed 3 --repeat 1 | grep "output " > %t.run.txt
// RUN: doppler-run-plan %t.plan.json --seed 3 --repeat 1 | grep "output " > %t.plan.txt
// RUN: diff %t.run.txt %t.plan.txt
// The C-API lowering adds the same tasks through dopplerRtGraphAddEvict and
// dopplerRtGraphAddReload (the reload with its one `after` value, the second
// with none, a null list); under mlir-runner its plan is doppler-run's.
// RUN: doppler-opt %s --doppler-lower-to-runtime | FileCheck %s --check-prefix=CAPI
// RUN: %if mlir-runner %{ doppler-opt %s --doppler-lower-to-runtime="entry=main seed=3 plan=%t.lowered-plan.json" -o %t.lowered.mlir %}
// RUN: %if mlir-runner %{ mlir-runner %t.lowered.mlir -e main -entry-point-result=i32 --shared-libs=%doppler_rt_c_lib > %t.runner.txt %}
// RUN: %if mlir-runner %{ diff %t.plan.json %t.lowered-plan.json %}
// RUN: %if mlir-runner %{ grep "output " %t.runner.txt | sed -e 's/^ *//' > %t.runner-out.txt %}
// RUN: %if mlir-runner %{ sed -e 's/^ *//' %t.run.txt | diff - %t.runner-out.txt %}

// EXPORT: wrote {{.*}}: @offload, 7 tasks and inputs on 2 device(s)
// PLAN: {"argument":0,"device":0,"id":0,"kind":"input"
// PLAN-NEXT: {"device":0,"id":1,"inputs":[0],"join":"exp","kind":"einsum"
// PLAN-NEXT: {"device":0,"id":2,"inputs":[1],"kind":"evict","shape":[16,16],"type":"f32"}
// PLAN-NEXT: {"device":0,"id":3,"inputs":[1],"join":"tanh","kind":"einsum"
// PLAN-NEXT: {"after":[3],"device":0,"id":4,"inputs":[2],"kind":"reload","shape":[16,16],"type":"f32"}
// PLAN-NEXT: {"device":0,"id":5,"inputs":[4,3],"join":"add","kind":"einsum"
// PLAN-NEXT: {"device":1,"id":6,"inputs":[2],"kind":"reload","shape":[16,16],"type":"f32"}
// EXEC: @offload on 2 cpu device(s), seed 0: 6 tasks (einsum 3, evict 1, reload 2)
// EXEC: check against the interpreter: {{.*}}: ok
// CAPI: %[[E:.*]] = llvm.call @dopplerRtGraphAddEinsum
// CAPI: %[[H:.*]] = llvm.call @dopplerRtGraphAddEvict(%arg0, %[[E]])
// CAPI: %[[T:.*]] = llvm.call @dopplerRtGraphAddEinsum
// CAPI: llvm.store %[[T]], %[[SLOT:.*]] : i64, !llvm.ptr
// CAPI: %[[ONE:.*]] = llvm.mlir.constant(1 : i32) : i32
// CAPI: llvm.call @dopplerRtGraphAddReload(%arg0, %[[H]], %{{.*}}, %[[BUF:.*]], %[[ONE]])
// CAPI: llvm.call @dopplerRtGraphAddEinsum
// CAPI: %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CAPI: %[[ZERO:.*]] = llvm.mlir.constant(0 : i32) : i32
// CAPI: llvm.call @dopplerRtGraphAddReload(%arg0, %[[H]], %{{.*}}, %[[NULL]], %[[ZERO]])
func.func @offload(%x: tensor<16x16xf32>) -> (tensor<16x16xf32>, tensor<16x16xf32>) {
  %e = doppler.einsum "ij->ij" join(exp) (%x) {doppler.device = #doppler.device<0>}
      : (tensor<16x16xf32>) -> tensor<16x16xf32>
  %h = doppler.evict %e from <0> {doppler.device = #doppler.device<0>} : tensor<16x16xf32>
  %t = doppler.einsum "ij->ij" join(tanh) (%e) {doppler.device = #doppler.device<0>}
      : (tensor<16x16xf32>) -> tensor<16x16xf32>
  %r = doppler.reload %h to <0> after(%t : tensor<16x16xf32>) {doppler.device = #doppler.device<0>} : tensor<16x16xf32>
  %a = doppler.einsum "ij,ij->ij" join(add) (%r, %t) {doppler.device = #doppler.device<0>}
      : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %s = doppler.reload %h to <1> {doppler.device = #doppler.device<1>} : tensor<16x16xf32>
  return %a, %s : tensor<16x16xf32>, tensor<16x16xf32>
}
