//===- PlacementGraph.h - IR functions as placement graphs ------*- C++ -*-===//
//
// The bridge between the IR and lib/Placement: a function body becomes a
// placement::Graph (one node per op, edges from SSA uses, costs from the
// cost attributes), and placements and schedules go back as attributes.
// Passes call lib/Placement through this; they never reimplement it.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_ANALYSIS_PLACEMENTGRAPH_H
#define DOPPLER_ANALYSIS_PLACEMENTGRAPH_H

#include "Doppler/Dialect/DopplerDialect.h"
#include "Doppler/Placement/Graph.h"

#include "mlir/IR/Operation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseMap.h"

#include <vector>

namespace mlir::doppler {

/// A function body seen as a placement graph.
struct IRGraph {
  ::doppler::placement::Graph graph;
  /// The op of each node, by node id (ops in body order).
  std::vector<Operation *> ops;
  llvm::DenseMap<Operation *, int32_t> nodeOf;
};

/// What becomes a node.
enum class TransferHandling {
  /// Every op but the terminator is a node (before transfer insertion).
  AsNodes,
  /// `doppler.transfer` ops are not nodes: an edge runs from the value's
  /// producer to each consumer of the transfer (after transfer insertion;
  /// the simulator then models the move as the edge's cost).
  AsEdges,
};

/// Compute and transfer cost of an op: a `doppler.task`'s own costs, else
/// its `doppler.compute_cost` / `doppler.transfer_cost` attributes.
/// Fails (with an error on the op) when they are missing.
LogicalResult getOpCosts(Operation *op, double &compute, double &transfer);

/// Builds the graph of the ops directly in `function`'s body (nested
/// regions belong to their op's node). Values from block arguments add no
/// edge. Errors are emitted on the offending op. A program with
/// `doppler.evict` / `doppler.reload` (doppler-plan-memory's output, which
/// also carries its own predicted schedule) is refused.
FailureOr<IRGraph> buildPlacementGraph(FunctionOpInterface function,
                                       TransferHandling transfers);

/// Calls `body` on every function with a body nested in `root` (the
/// function passes' driver); stops at, and returns, the first failure.
LogicalResult
forEachFunctionBody(Operation *root,
                    llvm::function_ref<LogicalResult(FunctionOpInterface)> body);

/// The device of an op from its `doppler.device` attribute, or -1.
int64_t getDevice(Operation *op);
void setDevice(Operation *op, int64_t device);

} // namespace mlir::doppler

#endif // DOPPLER_ANALYSIS_PLACEMENTGRAPH_H
