// Schedule exports label a doppler.fused op with its spec and its joins in
// order, like an einsum with its one join.
// RUN: doppler-opt %s --doppler-annotate-costs --doppler-insert-transfers --doppler-simulate -o %t.mlir
// RUN: doppler-translate --export-chrome-trace %t.mlir | FileCheck %s --check-prefix=JSON
// RUN: doppler-translate --export-dot %t.mlir | FileCheck %s --check-prefix=DOT
// RUN: doppler-translate --export-svg-gantt %t.mlir | FileCheck %s --check-prefix=SVG
// JSON: "name": "ij,j->ij fused add+gelu"
// JSON: "name": "ij->ij exp"
// JSON: "name": "transfer ij,j->ij fused add+gelu"
// DOT: label="ij,j->ij fused add+gelu\ndevice 0"
// SVG: <title>ij,j-&gt;ij fused add+gelu: 0 -
func.func @placed(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = doppler.fused "ij,j->ij" "add(in0, in1); gelu(s0)" (%x, %b) {doppler.device = #doppler.device<0>}
      : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = doppler.einsum "ij->ij" join(exp) (%0) {doppler.device = #doppler.device<1>}
      : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}
