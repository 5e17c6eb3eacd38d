//===- Passes.h - Doppler passes --------------------------------*- C++ -*-===//

#ifndef DOPPLER_TRANSFORMS_PASSES_H
#define DOPPLER_TRANSFORMS_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <memory>

namespace mlir::doppler {

#define GEN_PASS_DECL
#include "Doppler/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "Doppler/Transforms/Passes.h.inc"

/// Registers `doppler-pipeline`: annotate costs, decompose, fuse, re-cost,
/// place, insert transfers, simulate, plan memory (offload to host where a
/// device's memory would be exceeded), with verification between phases.
void registerDopplerPipeline();

} // namespace mlir::doppler

#endif // DOPPLER_TRANSFORMS_PASSES_H
