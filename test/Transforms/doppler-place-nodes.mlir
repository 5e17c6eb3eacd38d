// doppler-place on a system of two nodes (h100x8-2n) placing on all its 16
// devices: the heuristics price each device pair's link (NVLink inside a
// node, the network between), the budget adds the hierarchical starts
// (pipeline stages across the nodes), and the predicted makespan is the
// network simulator's: the same figure doppler-place --network reports.
// On 8 devices (not the system's 16) none of that applies.
// RUN: %python %doppler_src/examples/generate_examples.py llama --seq 16 --d-model 32 --heads 4 --ffn 48 > %t.mlir
// RUN: doppler-opt %t.mlir --doppler-annotate-costs=system=h100x8-2n --doppler-decompose="parts=8 system=h100x8-2n" --canonicalize --doppler-annotate-costs=system=h100x8-2n -o %t.dec.mlir
// RUN: doppler-opt %t.dec.mlir --doppler-place="devices=16 system=h100x8-2n budget-evaluations=1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=STARTS
// RUN: doppler-opt %t.dec.mlir --doppler-place="devices=8 system=h100x8-2n budget-evaluations=1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=FLAT
// RUN: doppler-opt %t.dec.mlir --doppler-place="devices=16 system=h100x8-2n policy=critical-path" -o /dev/null > %t.both 2>&1
// RUN: doppler-place %t.dec.mlir --devices 16 --system h100x8-2n --policy critical-path --network --json > %t.json
// RUN: %python -c "import json,sys; print('network %%.6g' %% json.load(open(sys.argv[1]))['network_makespan'])" %t.json >> %t.both
// RUN: FileCheck %s --check-prefixes=PASS,TOOL < %t.both

// STARTS: remark: budget: doppler greedy {{.*}}, critical-path {{.*}}, join-aware {{.*}}, single {{.*}}, hierarchical 2 nodes {{[0-9.e+]+}}{{( \(best\))?}}, hierarchical 2 nodes local {{[0-9.e+]+}}
// FLAT: remark: budget:
// FLAT-NOT: hierarchical
// PASS: remark: placed {{[0-9]+}} ops on 16 devices with critical-path: predicted makespan [[M:[0-9.e+]+]],
// TOOL: network [[M]]
