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
// The C API has no evict or reload call (yet): the lowering says so.
// RUN: not doppler-opt %s --doppler-lower-to-runtime -o /dev/null 2>&1 | FileCheck %s --check-prefix=CAPI

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
// CAPI: error: 'doppler.evict' op cannot become a runtime task: the runtime's C API has no evict task (doppler-run runs offloaded programs)
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
