// Schedule exports draw doppler-plan-memory's copies with the transfers of
// their device (a copy lane), labelled after the evicted value's producer,
// at the times the pass predicted (the program of doppler-plan-memory.mlir's
// @mid, where no order avoids the eviction: evict 10 -> 11, reload
// 40 -> 41).
// RUN: doppler-opt %s --doppler-plan-memory=system=%S/../Transforms/Inputs/offload-system.json -o %t.mlir
// RUN: doppler-translate --export-chrome-trace %t.mlir | FileCheck %s --check-prefix=JSON
// RUN: doppler-translate --export-svg-gantt %t.mlir | FileCheck %s --check-prefix=SVG
// JSON: "cat": "transfer",
// JSON-NEXT: "dur": 1,
// JSON-NEXT: "name": "evict ij->ij exp",
// JSON-NEXT: "ph": "X",
// JSON-NEXT: "pid": 0,
// JSON-NEXT: "tid": 1,
// JSON-NEXT: "ts": 10
// JSON: "cat": "transfer",
// JSON-NEXT: "dur": 1,
// JSON-NEXT: "name": "reload ij->ij exp",
// JSON-NEXT: "ph": "X",
// JSON-NEXT: "pid": 0,
// JSON-NEXT: "tid": 1,
// JSON-NEXT: "ts": 40
// SVG: <title>evict ij-&gt;ij exp: 10 - 11</title>
// SVG: <title>reload ij-&gt;ij exp: 40 - 41</title>

func.func @mid(%x: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %a = doppler.einsum "ij->ij" join(exp) (%x) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %b = doppler.einsum "ij->ij" join(tanh) (%a) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %c = doppler.einsum "ij->ij" join(neg) (%x) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %d = doppler.einsum "ij,ij->ij" join(add) (%b, %c) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %e = doppler.einsum "ij->ij" join(relu) (%d) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %f = doppler.einsum "ij,ij->ij" join(add) (%a, %e) {doppler.device = #doppler.device<0>, doppler.compute_cost = 10.0 : f64, doppler.transfer_cost = 1.0 : f64} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  return %f : tensor<32x32xf32>
}
