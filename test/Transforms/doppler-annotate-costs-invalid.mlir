// RUN: doppler-opt %s --split-input-file --verify-diagnostics --doppler-annotate-costs=system=tpu9

// expected-error @+1 {{doppler-annotate-costs: unknown system preset 'tpu9' (known: h100x4, h100x8, a100x4, a100x8, cpu4, cpu8; or give a path to a JSON file); no file 'tpu9' either}}
module {
  func.func @f() {
    return
  }
}
