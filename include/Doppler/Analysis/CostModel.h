//===- CostModel.h - Compute and transfer costs of IR ops -------*- C++ -*-===//
//
// The cost model of the IR: a roofline compute cost and a link transfer cost
// (microseconds) for every op of a function body, from the work the op
// reports (WorkOpInterface) and a system description. The
// doppler-annotate-costs pass and the tools' graph loader both cost through
// this, so a graph placed by a tool and one placed by the pass see the same
// costs.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_ANALYSIS_COSTMODEL_H
#define DOPPLER_ANALYSIS_COSTMODEL_H

#include "Doppler/Placement/SystemDescription.h"

#include "mlir/IR/Operation.h"

#include <cstdint>

namespace mlir::doppler {

/// How many ops were costed from their reported work, and how many as
/// copies of their operands and results (no WorkOpInterface).
struct CostCounts {
  int64_t fromWork = 0;
  int64_t asCopies = 0;
};

/// Bytes a value of `type` holds (static shapes of integer or float
/// elements; others count 0), in doubles.
double valueBytes(Type type);

/// Bytes of the op's results (static shapes of integer or float elements;
/// others count 0), in doubles: what a node of the placement graph holds
/// in memory.
double resultBytes(Operation *op);

/// The roofline compute cost of `op` on device 0 of `system` (what
/// annotateCosts sets as `doppler.compute_cost`): from its reported work, a
/// GEMM at the peak rate, other einsums and fused chains at the device's
/// rate for their joins; an op without WorkOpInterface as a copy of its
/// operands and results (`*fromWork` says which, when given).
double computeCostOf(Operation &op,
                     const ::doppler::placement::SystemDescription &system,
                     bool *fromWork = nullptr);

/// Sets `doppler.compute_cost` and `doppler.transfer_cost` on every op
/// directly in the body of every function with a body under `root` (`root`
/// included), except terminators and `doppler.task` ops (they carry their
/// own costs).
CostCounts annotateCosts(Operation *root,
                         const ::doppler::placement::SystemDescription &system);

} // namespace mlir::doppler

#endif // DOPPLER_ANALYSIS_COSTMODEL_H
