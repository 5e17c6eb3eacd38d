// Numeric round trip of the comparison joins, `where` and the conversion
// einsums (i64 -> f64, f64 -> f32, f32 -> f64): this doppler program ->
// convert-doppler-to-linalg (cmpf + uitofp, select, sitofp/truncf/extf)
// -> convert-linalg-to-doppler (full=true) gives the same joins back and
// computes exactly what the original computes (reference interpreter,
// seeded inputs, two seeds, tolerance 0).
// RUN: doppler-opt %s --convert-doppler-to-linalg -o %t.linalg.mlir
// RUN: doppler-opt %t.linalg.mlir --convert-linalg-to-doppler=full=true -o %t.back.mlir
// RUN: FileCheck %s --check-prefix=OPS < %t.back.mlir
// RUN: doppler-interpret %t.back.mlir --compare %s --tolerance 0 | FileCheck %s
// RUN: doppler-interpret %t.back.mlir --compare %s --tolerance 0 --seed 7 | FileCheck %s
// OPS-NOT: linalg.
// OPS-NOT: tensor.
// OPS-COUNT-14: doppler.einsum
// OPS-NOT: doppler.einsum
// CHECK: compared with '{{.*}}': max rel-error 0 <= tolerance 0: ok
func.func @masks(%ids: tensor<3x4xi64>, %a: tensor<3x4xf32>, %b: tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<3x4xf64>) {
  %i = doppler.einsum "ij->ij" join(identity) (%ids) : (tensor<3x4xi64>) -> tensor<3x4xf64>
  %lt = doppler.einsum "ij,ij->ij" join(lt) (%a, %b) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %le = doppler.einsum "ij,ij->ij" join(le) (%lt, %a) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %gt = doppler.einsum "ij,ij->ij" join(gt) (%a, %le) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %ge = doppler.einsum "ij,ij->ij" join(ge) (%b, %gt) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %eq = doppler.einsum "ij,ij->ij" join(eq) (%ge, %lt) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %ne = doppler.einsum "ij,ij->ij" join(ne) (%eq, %gt) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %w = doppler.einsum "ij,ij->ij" join(where) (%ne, %a) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %nw = doppler.einsum "ij,ij->ij" join(where) (%eq, %b) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %s = doppler.einsum "ij,ij->ij" join(add) (%w, %nw) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %wide = doppler.einsum "ij->ij" join(identity) (%s) : (tensor<3x4xf32>) -> tensor<3x4xf64>
  %t = doppler.einsum "ij,ij->ij" join(add) (%wide, %i) : (tensor<3x4xf64>, tensor<3x4xf64>) -> tensor<3x4xf64>
  %n = doppler.einsum "ij->ij" join(identity) (%t) : (tensor<3x4xf64>) -> tensor<3x4xf32>
  %r = doppler.einsum "ij,ij->ij" join(mul) (%n, %ne) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  return %r, %t : tensor<3x4xf32>, tensor<3x4xf64>
}
