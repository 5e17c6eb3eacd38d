// The pipeline's options reach its passes, which check them once before
// any function is touched: one error each, no location in the IR.
// RUN: not doppler-opt %s --doppler-pipeline="devices=0" 2>&1 | FileCheck %s --check-prefix=DEVICES
// RUN: not doppler-opt %s --doppler-pipeline="policy=oracle" 2>&1 | FileCheck %s --check-prefix=POLICY
// RUN: not doppler-opt %s --doppler-pipeline="system=tpu9" 2>&1 | FileCheck %s --check-prefix=SYSTEM
// RUN: not doppler-opt %s --doppler-pipeline="parts=5000" 2>&1 | FileCheck %s --check-prefix=PARTS
// RUN: not doppler-opt %s --doppler-pipeline="policy=heft samples=3" 2>&1 | FileCheck %s --check-prefix=SAMPLES
// Device counts are capped at the 4096 the doppler-place tool allows
// (Doppler/Support/Limits.h), before anything is allocated per device.
// RUN: not doppler-opt %s --doppler-pipeline="devices=100000" 2>&1 | FileCheck %s --check-prefix=MANY
// RUN: not doppler-opt %s --doppler-pipeline="devices=1000000000" 2>&1 | FileCheck %s --check-prefix=BILLION
// More devices than the system description has: placed, with a warning.
// RUN: doppler-opt %s --doppler-pipeline="devices=8 policy=critical-path" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BEYOND
// RUN: doppler-opt %s --doppler-pipeline="devices=4 policy=critical-path" -o /dev/null 2>&1 | FileCheck %s --check-prefix=WITHIN

// DEVICES: error: doppler-place: devices must be at least 1, got 0
// POLICY: error: doppler-place: unknown policy 'oracle'
// SYSTEM: error: doppler-annotate-costs: unknown system preset 'tpu9'
// PARTS: error: doppler-decompose: option 'parts' must be 'auto' or between 1 and 4096, got 5000
// SAMPLES: error: doppler-place: samples and model apply to policy doppler only, not 'heft'
// MANY: error: doppler-place: devices must be at most 4096, got 100000
// BILLION: error: doppler-place: devices must be at most 4096, got 1000000000
// BEYOND: warning: doppler-place: placing on 8 devices but the system description has 4; the extra devices are costed like the described ones
// BEYOND: placed {{[0-9]+}} ops on 8 devices
// WITHIN-NOT: warning
func.func @f(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = doppler.einsum "ij,jk->ik" join(mul) agg(add) (%a, %a) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
