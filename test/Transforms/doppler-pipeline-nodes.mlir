// The pipeline on a system of two nodes (h100x8-2n: two DGX H100 of 8
// GPUs): the program is placed on all 16 devices, on both nodes, every
// cross-device use goes through a transfer, and the result still computes
// what the input did. The placement prices each device pair's link (the
// network between the nodes) and is judged by the network simulator
// (docs/SystemDescription.md, "Nodes and networks").
// RUN: %python %doppler_src/examples/generate_examples.py llama --seq 16 --d-model 32 --heads 4 --ffn 48 > %t.mlir
// RUN: doppler-opt %t.mlir --doppler-pipeline="devices=16 parts=16 system=h100x8-2n" -o %t.placed.mlir 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: doppler-opt %t.placed.mlir --doppler-verify-transfers -o /dev/null
// RUN: FileCheck %s --check-prefix=NODE0 < %t.placed.mlir
// RUN: FileCheck %s --check-prefix=NODES < %t.placed.mlir
// RUN: FileCheck %s --check-prefix=NODE1 < %t.placed.mlir
// RUN: doppler-interpret %t.placed.mlir --compare %t.mlir | FileCheck %s --check-prefix=SAME
// Asking for more devices than the two nodes have warns, as on one node.
// RUN: doppler-opt %t.mlir --doppler-pipeline="devices=17 parts=1 system=h100x8-2n" -o /dev/null 2>&1 | FileCheck %s --check-prefix=MORE

// REMARK: remark: placed {{[0-9]+}} ops on 16 devices
// The module says which node each device is on (mpirun -np 2 doppler-run
// runs node i's devices on rank i).
// NODES: module attributes {doppler.nodes = array<i64: 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1>}
// NODE0: func.func @llama_block
// NODE0: doppler.device = #doppler.device<{{[0-7]}}>
// NODE1: func.func @llama_block
// NODE1: doppler.device = #doppler.device<{{(8|9|1[0-5])}}>
// SAME: ok
// MORE: warning: doppler-place: placing on 17 devices but the system description has 16
