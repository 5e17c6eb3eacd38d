//===- Passes.h - Doppler conversion passes ---------------------*- C++ -*-===//
//
// Declarations and registration of every pass of include/Doppler/Conversion/
// Passes.td. The libraries of lib/Conversion each define their passes.
//
//===----------------------------------------------------------------------===//

#ifndef DOPPLER_CONVERSION_PASSES_H
#define DOPPLER_CONVERSION_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <memory>

namespace mlir::doppler {

#define GEN_PASS_DECL
#include "Doppler/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "Doppler/Conversion/Passes.h.inc"

} // namespace mlir::doppler

#endif // DOPPLER_CONVERSION_PASSES_H
