// Both conversions (and the IREE export, which lowers to linalg first) leave
// an op of an unregistered dialect as it is: it has no dialect, which must
// not be mistaken for one. Before, each of these runs ended in a segfault.
// RUN: doppler-opt %s --allow-unregistered-dialect --convert-doppler-to-linalg | FileCheck %s --check-prefix=TOLINALG
// RUN: doppler-opt %s --allow-unregistered-dialect --convert-linalg-to-doppler | FileCheck %s --check-prefix=TODOPPLER
// RUN: doppler-opt %s --allow-unregistered-dialect --convert-linalg-to-doppler=report=true 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: doppler-opt %s --allow-unregistered-dialect --convert-linalg-to-doppler=full=true | FileCheck %s --check-prefix=TODOPPLER

// TOLINALG-LABEL: func.func @f
// TOLINALG: "foo.bar"
// TOLINALG: linalg.generic
// TODOPPLER-LABEL: func.func @f
// TODOPPLER: "foo.bar"
// TODOPPLER: doppler.einsum "i->i" join(exp)
// REPORT: remark: converted 0 op(s) to doppler; left 0
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "foo.bar"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = doppler.einsum "i->i" join(exp) (%0) : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
