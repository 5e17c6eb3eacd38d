//===- PlacementGraph.cpp - IR functions as placement graphs --------------===//

#include "Doppler/Analysis/PlacementGraph.h"
#include "Doppler/Analysis/CostModel.h"
#include "Doppler/Analysis/PlacementChecks.h"
#include "Doppler/Dialect/DopplerOps.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace mlir::doppler;

LogicalResult mlir::doppler::getOpCosts(Operation *op, double &compute,
                                        double &transfer) {
  if (auto task = dyn_cast<TaskOp>(op)) {
    compute = task.getCompute().convertToDouble();
    transfer = task.getTransfer().convertToDouble();
    return success();
  }
  auto computeAttr = op->getAttrOfType<FloatAttr>(kComputeCostAttr);
  auto transferAttr = op->getAttrOfType<FloatAttr>(kTransferCostAttr);
  if (!computeAttr || !transferAttr)
    return op->emitOpError()
           << "has no cost (" << kComputeCostAttr << ", " << kTransferCostAttr
           << "); run doppler-annotate-costs first";
  compute = computeAttr.getValueAsDouble();
  transfer = transferAttr.getValueAsDouble();
  return success();
}

FailureOr<IRGraph>
mlir::doppler::buildPlacementGraph(FunctionOpInterface function,
                                   TransferHandling transfers) {
  IRGraph result;
  ::doppler::placement::GraphBuilder builder;
  Region &body = function.getFunctionBody();
  if (body.empty())
    return result; // A declaration: nothing to place.
  if (!body.hasOneBlock())
    return function.emitOpError()
           << "has " << body.getBlocks().size()
           << " blocks; doppler places straight-line functions only";
  if (failed(verifyNotNested(function)))
    return failure();

  auto isNode = [&](Operation &op) {
    if (op.hasTrait<OpTrait::IsTerminator>())
      return false;
    return transfers == TransferHandling::AsNodes || !isa<TransferOp>(op);
  };
  for (Operation &op : body.front()) {
    // An offloaded program's copies are not placement-graph nodes, and
    // dropping them would predict a schedule without them.
    if (isa<EvictOp, ReloadOp>(op))
      return op.emitOpError()
             << "is an offload (doppler-plan-memory's output): the program "
                "cannot be placed or simulated again; use the program from "
                "before doppler-plan-memory";
    if (!isNode(op))
      continue;
    double compute, transfer;
    if (failed(getOpCosts(&op, compute, transfer)))
      return failure();
    int32_t id = builder.addNode(compute, transfer, op.getName().getStringRef().str());
    // The memory its results hold (the simulator's memory accounting).
    builder.setOutputBytes(id, resultBytes(&op));
    result.ops.push_back(&op);
    result.nodeOf[&op] = id;
  }

  // The node a value comes from, looking through transfers when they are
  // edges (a chain of transfers ends at the original producer).
  auto producerNode = [&](Value value) -> int32_t {
    Operation *def = value.getDefiningOp();
    while (def && transfers == TransferHandling::AsEdges && isa<TransferOp>(def))
      def = cast<TransferOp>(def).getInput().getDefiningOp();
    if (!def)
      return -1;
    auto it = result.nodeOf.find(def);
    return it == result.nodeOf.end() ? -1 : it->second;
  };
  for (auto [id, op] : llvm::enumerate(result.ops)) {
    auto addEdgesFrom = [&](Operation *user) {
      for (Value operand : user->getOperands()) {
        int32_t source = producerNode(operand);
        if (source >= 0 && source != static_cast<int32_t>(id))
          builder.addEdge(source, static_cast<int32_t>(id));
      }
    };
    addEdgesFrom(op);
    // Values used inside the op's regions but defined outside count too.
    op->walk([&](Operation *nested) {
      if (nested != op)
        addEdgesFrom(nested);
    });
  }

  std::string error;
  std::optional<::doppler::placement::Graph> graph = builder.build(&error);
  if (!graph)
    return function.emitOpError() << "cannot be placed: " << error;
  result.graph = std::move(*graph);
  return result;
}

LogicalResult mlir::doppler::forEachFunctionBody(
    Operation *root,
    llvm::function_ref<LogicalResult(FunctionOpInterface)> body) {
  WalkResult result = root->walk([&](FunctionOpInterface function) {
    if (function.isExternal())
      return WalkResult::advance();
    return failed(body(function)) ? WalkResult::interrupt()
                                  : WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

int64_t mlir::doppler::getDevice(Operation *op) {
  if (auto device = op->getAttrOfType<DeviceAttr>(kDeviceAttr))
    return device.getId();
  return -1;
}

void mlir::doppler::setDevice(Operation *op, int64_t device) {
  op->setAttr(kDeviceAttr, DeviceAttr::get(op->getContext(), device));
}
