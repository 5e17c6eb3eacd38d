// doppler-place makes the placement fit each device's memory (issue 17):
// the simulator's peak of live buffers per device against the capacity of
// `system` or `memory-limit`. Four independent 1 MiB results (graph outputs,
// live to the end): `single` puts all four on device 0 (4 MiB).
// RUN: doppler-opt %s --doppler-annotate-costs=system=cpu4 --doppler-place="devices=2 policy=single" 2>&1 >/dev/null | FileCheck %s --check-prefix=FREE
// A 3 MB limit holds two of them per device, not three: the fit moves two.
// RUN: doppler-opt %s --doppler-annotate-costs=system=cpu4 --doppler-place="devices=2 policy=single memory-limit=3e6" 2>&1 >/dev/null | FileCheck %s --check-prefix=FIT
// RUN: doppler-opt %s --doppler-annotate-costs=system=cpu4 --doppler-place="devices=2 policy=single memory-limit=3e6" 2>/dev/null | grep -c "doppler.device = #doppler.device<0>" | FileCheck %s --check-prefix=TWO
// RUN: doppler-opt %s --doppler-annotate-costs=system=cpu4 --doppler-place="devices=2 policy=single memory-limit=3e6" 2>/dev/null | grep -c "doppler.device = #doppler.device<1>" | FileCheck %s --check-prefix=TWO
// Every policy fits; a fitting placement is left alone.
// RUN: doppler-opt %s --doppler-annotate-costs=system=cpu4 --doppler-place="devices=2 policy=round-robin memory-limit=3e6" 2>&1 >/dev/null | FileCheck %s --check-prefix=KEPT
// RUN: doppler-opt %s --doppler-annotate-costs=system=cpu4 --doppler-place="devices=2 policy=doppler memory-limit=3e6" 2>&1 >/dev/null | FileCheck %s --check-prefix=FITS
// RUN: doppler-opt %s --doppler-annotate-costs=system=cpu4 --doppler-place="devices=2 policy=heft memory-limit=3e6" 2>&1 >/dev/null | FileCheck %s --check-prefix=FITS
// A system's capacities apply the same way (cpu4: 4 GB per device: fits).
// RUN: doppler-opt %s --doppler-annotate-costs=system=cpu4 --doppler-place="devices=2 policy=single system=cpu4" 2>&1 >/dev/null | FileCheck %s --check-prefix=FREE
// Below one result's size no placement fits: a warning, the least overflow
// kept (for doppler-plan-memory to offload), no failure.
// RUN: doppler-opt %s --doppler-annotate-costs=system=cpu4 --doppler-place="devices=2 policy=single memory-limit=1e6" 2>&1 >/dev/null | FileCheck %s --check-prefix=NOFIT
// Deterministic for a seed.
// RUN: doppler-opt %s --doppler-annotate-costs=system=cpu4 --doppler-place="devices=2 policy=single memory-limit=3e6 seed=3" -o %t.a 2>/dev/null
// RUN: doppler-opt %s --doppler-annotate-costs=system=cpu4 --doppler-place="devices=2 policy=single memory-limit=3e6 seed=3" -o %t.b 2>/dev/null
// RUN: diff %t.a %t.b

// FREE-NOT: moved
// FREE: remark: placed 4 ops on 2 devices with single
// FIT: remark: moved 2 ops to fit the devices' memory: predicted makespan {{.*}}, peak memory per device [2.1 MB, 2.1 MB] of [3 MB, 3 MB]
// FIT: remark: placed 4 ops on 2 devices with single
// TWO: {{^}}2{{$}}
// KEPT-NOT: moved
// KEPT: remark: placed 4 ops on 2 devices with round-robin
// FITS-NOT: warning
// FITS: remark: placed 4 ops on 2 devices
// NOFIT: warning: no placement found that fits the devices' memory ({{.+}}); keeping the one with the least overflow: doppler-plan-memory can offload tensors to host memory
// NOFIT: remark: placed 4 ops on 2 devices with single
func.func @four_outputs(%x: tensor<256x1024xf32>)
    -> (tensor<256x1024xf32>, tensor<256x1024xf32>, tensor<256x1024xf32>,
        tensor<256x1024xf32>) {
  %a = doppler.einsum "ij->ij" join(relu) (%x) : (tensor<256x1024xf32>) -> tensor<256x1024xf32>
  %b = doppler.einsum "ij->ij" join(exp) (%x) : (tensor<256x1024xf32>) -> tensor<256x1024xf32>
  %c = doppler.einsum "ij->ij" join(neg) (%x) : (tensor<256x1024xf32>) -> tensor<256x1024xf32>
  %d = doppler.einsum "ij->ij" join(abs) (%x) : (tensor<256x1024xf32>) -> tensor<256x1024xf32>
  return %a, %b, %c, %d : tensor<256x1024xf32>, tensor<256x1024xf32>, tensor<256x1024xf32>, tensor<256x1024xf32>
}
