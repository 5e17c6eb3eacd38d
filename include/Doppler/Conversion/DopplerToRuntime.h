//===- DopplerToRuntime.h - Placed functions as runtime plans ---*- C++ -*-===//
//
// Converts a placed function into a runtime::Plan: a runtime::TaskGraph plus
// the function's signature, in process (doppler-run, doppler-train's
// runtime oracle). The tasks, their order and the errors are those of
// PlacedFunctionWalker.h, which doppler-lower-to-runtime shares.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_CONVERSION_DOPPLERTORUNTIME_H
#define DOPPLER_CONVERSION_DOPPLERTORUNTIME_H

#include "Doppler/Conversion/PlacedFunctionWalker.h"
#include "doppler/runtime/Plan.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LLVM.h"

#include <vector>

namespace mlir::doppler {

struct RuntimeProgramOptions {
  /// See PlacedFunctionWalkerOptions.
  bool delayTasks = false;
  ArgumentPlacement arguments = ArgumentPlacement::EveryUser;
  bool priorities = true;
};

/// Builds the plan of `function`. Fails with an error diagnostic. When
/// `taskOps` is given, it receives per graph value the op it came from
/// (null for graph inputs and for runtime transfers of arguments).
FailureOr<::doppler::runtime::Plan>
buildRuntimePlan(func::FuncOp function,
                 const RuntimeProgramOptions &options = {},
                 std::vector<Operation *> *taskOps = nullptr);

} // namespace mlir::doppler

#endif // DOPPLER_CONVERSION_DOPPLERTORUNTIME_H
