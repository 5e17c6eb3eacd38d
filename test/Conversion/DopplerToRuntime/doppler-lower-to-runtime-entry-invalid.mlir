// Errors of the entry point that doppler-lower-to-runtime can add.
// RUN: not doppler-opt %s --doppler-lower-to-runtime="entry=main function=nope" 2>&1 | FileCheck %s --check-prefix=NOFUNC
// RUN: not doppler-opt %s --doppler-lower-to-runtime="entry=main devices=1" 2>&1 | FileCheck %s --check-prefix=FEW
// RUN: not doppler-opt %s --doppler-lower-to-runtime="entry=helper" 2>&1 | FileCheck %s --check-prefix=TAKEN
// RUN: not doppler-opt %s --doppler-lower-to-runtime="entry=main function=helper" 2>&1 | FileCheck %s --check-prefix=NOBODY

// NOFUNC: error: doppler-lower-to-runtime: no function named 'nope' with a body
// FEW: error: doppler-lower-to-runtime: devices=1 is too few: the program uses device 1
// TAKEN: error: doppler-lower-to-runtime: the module already has a symbol named 'helper'
// NOBODY: error: doppler-lower-to-runtime: no function named 'helper' with a body

func.func private @helper(tensor<4xf32>) -> tensor<4xf32>

func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = doppler.einsum "i->i" join(exp) (%a) {doppler.device = #doppler.device<0>} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = doppler.transfer %0 from <0> to <1> {doppler.device = #doppler.device<1>} : tensor<4xf32>
  %2 = doppler.einsum "i->i" join(neg) (%1) {doppler.device = #doppler.device<1>} : (tensor<4xf32>) -> tensor<4xf32>
  return %2 : tensor<4xf32>
}
