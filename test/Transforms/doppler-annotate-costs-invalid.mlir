// RUN: doppler-opt %s --split-input-file --verify-diagnostics --doppler-annotate-costs=system=tpu9
// RUN: echo '{"devices": [{"peak_flops": {"f32": 1e12}, "memory_bytes": 1e9, "memory_bandwidth": 0}], "links": {"bandwidth": 1e9}}' > %t.json
// RUN: not doppler-opt %s --doppler-annotate-costs=system=%t.json 2>&1 | FileCheck %s --check-prefix=JSON

// expected-error @+1 {{doppler-annotate-costs: unknown system preset 'tpu9' (known: h100x4, h100x8, a100x4, a100x8, cpu4, cpu8; or give a path to a JSON file); no file 'tpu9' either}}
module {
  func.func @f() {
    return
  }
}
// JSON: devices[0].memory_bandwidth: expected a positive number
