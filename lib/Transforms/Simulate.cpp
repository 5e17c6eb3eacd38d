//===- Simulate.cpp - Predicted schedule of placed functions --------------===//

#include "Doppler/Dialect/DopplerOps.h"
#include "Doppler/Placement/Simulator.h"
#include "Doppler/Placement/SystemDescription.h"
#include "Doppler/Transforms/Passes.h"
#include "Doppler/Analysis/PlacementGraph.h"

#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::doppler {
#define GEN_PASS_DEF_DOPPLERSIMULATEPASS
#include "Doppler/Transforms/Passes.h.inc"
} // namespace mlir::doppler

using namespace mlir;
using namespace mlir::doppler;
namespace placement = ::doppler::placement;

namespace {

class SimulatePass
    : public mlir::doppler::impl::DopplerSimulatePassBase<SimulatePass> {
public:
  using DopplerSimulatePassBase::DopplerSimulatePassBase;

  void runOnOperation() override {
    if (!system.empty()) {
      std::string error;
      description = placement::SystemDescription::load(system, &error);
      if (!description) {
        getOperation()->emitError() << "doppler-simulate: " << error;
        return signalPassFailure();
      }
    }
    if (failed(forEachFunctionBody(
            getOperation(),
            [&](FunctionOpInterface function) { return simulate(function); })))
      signalPassFailure();
  }

private:
  LogicalResult simulate(FunctionOpInterface function) {
    FailureOr<IRGraph> irGraph =
        buildPlacementGraph(function, TransferHandling::AsEdges);
    if (failed(irGraph))
      return failure();
    const placement::Graph &graph = irGraph->graph;
    Builder builder(&getContext());
    if (graph.numNodes() == 0) {
      function->setAttr(kMakespanAttr, builder.getF64FloatAttr(0));
      return success();
    }

    std::vector<placement::DeviceId> assignment(graph.numNodes());
    int64_t numDevices = 1;
    for (auto [node, op] : llvm::enumerate(irGraph->ops)) {
      int64_t device = getDevice(op);
      if (device < 0)
        return op->emitOpError()
               << "is not placed (no " << kDeviceAttr
               << "); run doppler-place before doppler-simulate";
      assignment[node] = static_cast<placement::DeviceId>(device);
      numDevices = std::max(numDevices, device + 1);
    }

    // The description's hand-offs (device d beyond it: d mod N's), in the
    // simulator's extended mode; none: the reference semantics.
    std::optional<placement::System> handOffs =
        description ? description->handOffSystem(
                          static_cast<int32_t>(numDevices))
                    : std::nullopt;
    std::optional<placement::Simulator> simulator;
    if (handOffs) {
      placement::SimulatorOptions options;
      options.handOff = true;
      simulator.emplace(graph, *handOffs, options);
    } else {
      simulator.emplace(graph, static_cast<int32_t>(numDevices));
    }
    double makespan = simulator->run(assignment);
    const placement::Schedule &schedule = simulator->schedule();
    for (auto [node, op] : llvm::enumerate(irGraph->ops)) {
      op->setAttr(kStartAttr, builder.getF64FloatAttr(schedule.start[node]));
      op->setAttr(kEndAttr, builder.getF64FloatAttr(schedule.end[node]));
    }
    // A transfer starts when its producer ends and arrives the producer's
    // transfer cost later (the simulator's reference semantics).
    function.walk([&](TransferOp transfer) {
      Operation *producer = transfer.getInput().getDefiningOp();
      while (auto inner = dyn_cast_or_null<TransferOp>(producer))
        producer = inner.getInput().getDefiningOp();
      auto it = producer ? irGraph->nodeOf.find(producer) : irGraph->nodeOf.end();
      if (it == irGraph->nodeOf.end())
        return;
      double start = schedule.end[it->second];
      transfer->setAttr(kStartAttr, builder.getF64FloatAttr(start));
      transfer->setAttr(kEndAttr,
                        builder.getF64FloatAttr(start + graph.transferCost(it->second)));
    });
    function->setAttr(kMakespanAttr, builder.getF64FloatAttr(makespan));
    ++numSimulated;
    return success();
  }

  std::optional<placement::SystemDescription> description;
};

} // namespace
