// Errors of doppler-annotate-costs are about its `system` option: it is
// loaded and checked once, before any op is costed (initialize()), and a
// bad one is one error with no location in the IR.
// RUN: not doppler-opt %s --doppler-annotate-costs=system=tpu9 2>&1 | FileCheck %s --check-prefix=PRESET
// A malformed system file: the error names the file and the field.
// RUN: not doppler-opt %s --doppler-annotate-costs=system=%S/Inputs/bad-system.json 2>&1 | FileCheck %s --check-prefix=FIELD
// A join throughput for a join kind the dialect does not have: the error
// names the file, the field and the known kinds.
// RUN: not doppler-opt %s --doppler-annotate-costs=system=%S/Inputs/bad-join-system.json 2>&1 | FileCheck %s --check-prefix=JOIN
// A description with nodes: the error names the node's field.
// RUN: not doppler-opt %s --doppler-annotate-costs=system=%S/Inputs/bad-nodes-system.json 2>&1 | FileCheck %s --check-prefix=NODES

// PRESET: <unknown>:0: error: doppler-annotate-costs: unknown system preset 'tpu9' (known: h100x4, h100x8, a100x4, a100x8, a100-40x4, a100-40x8, cpu4, cpu8, h100x8-2n, h100x8-4n, h100x8-8n, cpu2-2n; or give a path to a JSON file); no file 'tpu9' either
// PRESET-NOT: error
// FIELD: error: doppler-annotate-costs: {{.*}}bad-system.json: devices[0].memory_bandwidth: expected a positive number
// NODES: error: doppler-annotate-costs: {{.*}}bad-nodes-system.json: nodes[1].nics: expected a positive integer (at most 4096)
// JOIN: error: doppler-annotate-costs: {{.*}}bad-join-system.json: devices[0].join_throughput.expo: unknown join kind (known: identity, add, sub, mul, div
module {
  func.func @f() {
    return
  }
}
