//===- RuntimeProgram.h - Placed functions as runtime plans -----*- C++ -*-===//
//
// Converts a placed function (every op has `doppler.device`, every use
// across devices goes through a `doppler.transfer`, as after
// `doppler-pipeline` or `--doppler-place --doppler-insert-transfers`) into a
// runtime::Plan: a runtime::TaskGraph plus the function's signature.
//
//   doppler.einsum / slice / assemble / fill  ->  a task of the same kind on
//                                                 the op's device
//   doppler.transfer %x from <a> to <b>       ->  a transfer task to b
//   doppler.task (cost-only)                  ->  a delay task of its compute
//                                                 cost (microseconds), only
//                                                 with `delayTasks`
//   function arguments                        ->  graph inputs (see below)
//   returned values                           ->  graph outputs, in order
//
// Arguments. The placement passes treat a function argument as available
// on every device (doppler-insert-transfers adds no transfer for it, and the
// simulator charges nothing for reading it), so by default an argument read
// on several devices becomes one graph input per device, each bound to the
// same host data and uploaded before the clock starts: the run then
// measures what the placement predicted. With ArgumentPlacement::FirstUser
// an argument becomes a single graph input on the device of its first user
// (in body order; a transfer reads on its source device), and the runtime
// adds a transfer for every other device that reads it.
//
// Errors (unplaced ops, unsupported ops or element types, a use across
// devices without a transfer, a transfer whose endpoints disagree with the
// placement, doppler.task without `delayTasks`) are emitted as MLIR
// diagnostics at the offending op; nothing asserts on bad input.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_TARGET_RUNTIMEPROGRAM_H
#define DOPPLER_TARGET_RUNTIMEPROGRAM_H

#include "doppler/runtime/Plan.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LLVM.h"

#include <vector>

namespace mlir::doppler {

enum class ArgumentPlacement {
  /// One graph input per (argument, device that reads it). The default.
  EveryUser,
  /// One graph input on the first user's device; runtime transfers to the
  /// others.
  FirstUser,
};

struct RuntimeProgramOptions {
  /// Run `doppler.task` ops as delay tasks of their compute cost (cost units
  /// are microseconds), and transfers of their opaque values as fixed-time
  /// copies of the producer's transfer cost. Off: doppler.task is an error.
  bool delayTasks = false;
  ArgumentPlacement arguments = ArgumentPlacement::EveryUser;
  /// Copy the simulated start times (`doppler.start`, microseconds) into
  /// task priorities (nanoseconds), so that an executor serving ready tasks
  /// by priority follows the simulated order.
  bool priorities = true;
};

/// Whether any op in `function`'s body carries `doppler.device`.
bool hasPlacedOps(func::FuncOp function);

/// Builds the plan of `function`. Fails with an error diagnostic. When
/// `taskOps` is given, it receives per graph value the op it came from
/// (null for graph inputs and for runtime transfers of arguments).
FailureOr<::doppler::runtime::Plan>
buildRuntimePlan(func::FuncOp function,
                 const RuntimeProgramOptions &options = {},
                 std::vector<Operation *> *taskOps = nullptr);

} // namespace mlir::doppler

#endif // DOPPLER_TARGET_RUNTIMEPROGRAM_H
