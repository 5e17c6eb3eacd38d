//===- PlanMemory.cpp - Offload tensors where device memory runs out ------===//
//
// doppler-plan-memory: the IR side of the offload planner
// (lib/Placement/Offload.h). The function becomes the planner's graph (one
// node per op in body order, transfers as edges, result bytes per node);
// the plan's evictions become doppler.evict / doppler.reload ops, and the
// predicted peaks, makespan and schedule become attributes.
//
//===----------------------------------------------------------------------===//

#include "Doppler/Analysis/CostModel.h"
#include "Doppler/Analysis/PlacementGraph.h"
#include "Doppler/Dialect/DopplerOps.h"
#include "Doppler/Placement/MemoryFit.h"
#include "Doppler/Placement/Offload.h"
#include "Doppler/Placement/Simulator.h"
#include "Doppler/Placement/SystemDescription.h"
#include "Doppler/Support/Limits.h"
#include "Doppler/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include <cmath>

namespace mlir::doppler {
#define GEN_PASS_DEF_DOPPLERPLANMEMORYPASS
#include "Doppler/Transforms/Passes.h.inc"
} // namespace mlir::doppler

using namespace mlir;
using namespace mlir::doppler;
namespace placement = ::doppler::placement;

namespace {

/// Bytes as an i64 attribute entry (rounded; the planner's figures are
/// whole bytes).
int64_t wholeBytes(double bytes) {
  return static_cast<int64_t>(std::llround(std::max(bytes, 0.0)));
}

class PlanMemoryPass
    : public mlir::doppler::impl::DopplerPlanMemoryPassBase<PlanMemoryPass> {
public:
  using Base::Base;

  LogicalResult initialize(MLIRContext *context) override {
    auto error = [&]() { return emitError(UnknownLoc::get(context)); };
    if (!std::isfinite(memoryLimit) || memoryLimit < 0)
      return error() << "doppler-plan-memory: memory-limit must be a "
                        "non-negative number of bytes (0: the system's "
                        "capacities), got "
                     << memoryLimit;
    if (maxEvaluations < 1)
      return error() << "doppler-plan-memory: max-evaluations must be at "
                        "least 1, got "
                     << static_cast<int64_t>(maxEvaluations);
    std::string loadError;
    description = placement::SystemDescription::load(system, &loadError);
    if (!description)
      return error() << "doppler-plan-memory: " << loadError;
    return success();
  }

  void runOnOperation() override {
    if (failed(forEachFunctionBody(
            getOperation(),
            [&](FunctionOpInterface function) { return plan(function); })))
      signalPassFailure();
  }

private:
  std::optional<placement::SystemDescription> description;

  /// The described device that device `d` takes its figures from.
  placement::DeviceId describedDevice(int64_t d) const {
    return static_cast<placement::DeviceId>(d % description->numDevices());
  }

  LogicalResult plan(FunctionOpInterface function);
  /// Bytes of the function's arguments held on each device: one copy per
  /// device that reads the argument (ops nested in a body op read on that
  /// op's device; a transfer reads on its source).
  std::vector<double> residentBytes(FunctionOpInterface function,
                                    int32_t numDevices) const;
  LogicalResult rewrite(FunctionOpInterface function, const IRGraph &irGraph,
                        const placement::OffloadPlan &plan,
                        const placement::System &system,
                        const std::vector<placement::DeviceId> &assignment,
                        const placement::OffloadOptions &options);
};

std::vector<double> PlanMemoryPass::residentBytes(FunctionOpInterface function,
                                                  int32_t numDevices) const {
  std::vector<double> bytes(numDevices, 0.0);
  Block &body = function.getFunctionBody().front();
  for (BlockArgument argument : body.getArguments()) {
    std::vector<bool> readOn(numDevices, false);
    for (OpOperand &use : argument.getUses()) {
      Operation *user = body.findAncestorOpInBlock(*use.getOwner());
      if (!user)
        continue;
      int64_t device = getDevice(user);
      if (auto transfer = dyn_cast<TransferOp>(user))
        device = transfer.getSource().getId();
      if (device >= 0 && device < numDevices)
        readOn[device] = true;
    }
    double size = valueBytes(argument.getType());
    for (int32_t d = 0; d < numDevices; ++d)
      if (readOn[d])
        bytes[d] += size;
  }
  return bytes;
}

LogicalResult PlanMemoryPass::plan(FunctionOpInterface function) {
  Region &region = function.getFunctionBody();
  if (!region.hasOneBlock())
    return function.emitOpError()
           << "has " << region.getBlocks().size()
           << " blocks; doppler-plan-memory plans straight-line functions "
              "only";
  for (Operation &op : region.front())
    if (isa<EvictOp, ReloadOp>(op))
      return op.emitOpError()
             << "is an offload already: doppler-plan-memory plans a program "
                "once (run it last, on a program without evictions)";

  FailureOr<IRGraph> irGraph =
      buildPlacementGraph(function, TransferHandling::AsEdges);
  if (failed(irGraph))
    return failure();
  const placement::Graph &graph = irGraph->graph;
  if (graph.numNodes() == 0)
    return success();

  std::vector<placement::DeviceId> assignment(graph.numNodes());
  int64_t numDevices = 1;
  for (auto [node, op] : llvm::enumerate(irGraph->ops)) {
    int64_t device = getDevice(op);
    if (device < 0)
      return op->emitOpError()
             << "is not placed (no " << kDeviceAttr
             << "); run doppler-place and doppler-insert-transfers before "
                "doppler-plan-memory";
    if (device >= ::doppler::kMaxDevices)
      return op->emitOpError() << "is placed on device " << device
                               << ", beyond the largest supported id "
                               << ::doppler::kMaxDevices - 1;
    assignment[node] = static_cast<placement::DeviceId>(device);
    numDevices = std::max(numDevices, device + 1);
  }

  // A cost-only graph (doppler.task: opaque values) holds no bytes.
  bool anyBytes = false;
  for (placement::NodeId v = 0; v < graph.numNodes(); ++v)
    anyBytes |= graph.outputBytes(v) > 0;
  if (!anyBytes) {
    if (memoryLimit > 0)
      mlir::emitWarning(function.getLoc())
          << "memory-limit ignored: the ops carry no byte sizes (cost-only "
             "graph)";
    return success();
  }

  // Capacities and host links, in bytes and in cost units (microseconds).
  placement::SystemBuilder builder(static_cast<int32_t>(numDevices));
  placement::OffloadOptions options;
  for (int64_t d = 0; d < numDevices; ++d) {
    placement::DeviceId described = describedDevice(d);
    builder.setMemoryCapacity(static_cast<placement::DeviceId>(d),
                              memoryLimit > 0
                                  ? static_cast<double>(memoryLimit)
                                  : description->device(described).memoryBytes);
    const placement::LinkDescription &link = description->hostLink(described);
    options.hostLinks.push_back(
        {link.bandwidth / placement::kCostUnitsPerSecond,
         link.latency * placement::kCostUnitsPerSecond});
  }
  std::string error;
  std::optional<placement::System> system = builder.build(&error);
  if (!system)
    return function.emitOpError() << "memory capacities: " << error;
  options.residentBytes =
      residentBytes(function, static_cast<int32_t>(numDevices));
  options.maxEvaluations = maxEvaluations;
  // The rewrite below writes evictions of received copies too (evicted
  // from the producer's original, reloaded onto the receiving device).
  options.evictReceivedCopies = true;
  for (int64_t d = 0; d < numDevices; ++d)
    if (options.residentBytes[d] > system->memoryCapacity(d))
      return mlir::emitError(function.getLoc())
             << "@" << function.getName() << " reads "
             << placement::formatBytes(options.residentBytes[d])
             << " of arguments on device " << d << ", more than its "
             << placement::formatBytes(system->memoryCapacity(d))
             << " of memory (arguments stay on the devices that read them)";

  std::optional<placement::OffloadPlan> plan =
      placement::planOffload(graph, *system, assignment, options, &error);
  if (!plan)
    return function.emitOpError() << "offload planning failed: " << error;
  if (!plan->fits) {
    // Name the device: the planner's diagnosis says what is live there.
    // At the function's location without the op dump (one line).
    InFlightDiagnostic diag = mlir::emitError(function.getLoc());
    diag << "@" << function.getName()
         << " does not fit in device memory even with offload to host";
    for (int64_t d = 0; d < numDevices; ++d)
      if (plan->peakAfter[d] > system->memoryCapacity(d)) {
        diag << ": device " << d << " needs "
             << placement::formatBytes(plan->peakAfter[d]) << " of its "
             << placement::formatBytes(system->memoryCapacity(d));
        break;
      }
    diag << " (" << plan->diagnosis << ")";
    return diag;
  }
  if (plan->evictions.empty() && plan->priority.empty())
    return success(); // Everything fits as it is: nothing changes.
  double hostBytes = description->hostMemoryBytes();
  if (hostBytes > 0 && plan->hostPeak > hostBytes)
    return mlir::emitError(function.getLoc())
           << "@" << function.getName() << " needs "
           << placement::formatBytes(plan->hostPeak)
           << " of host memory for its evictions, more than the system's "
           << placement::formatBytes(hostBytes);
  return rewrite(function, *irGraph, *plan, *system, assignment, options);
}

/// Checks every eviction of `plan` against the IR before anything changes:
/// doppler.evict moves one ranked tensor, and a reload waits on its
/// trigger's results.
LogicalResult checkEvictions(const IRGraph &irGraph,
                             const placement::OffloadPlan &plan) {
  for (const placement::Eviction &eviction : plan.evictions) {
    Operation *producer = irGraph.ops[eviction.value];
    Operation *trigger = irGraph.ops[eviction.trigger];
    if (producer->getNumResults() != 1 ||
        !isa<RankedTensorType>(producer->getResult(0).getType()))
      return producer->emitOpError()
             << "would be evicted, but doppler.evict moves the one ranked "
                "tensor result of an op";
    if (trigger->getNumResults() == 0)
      return trigger->emitOpError()
             << "would start a reload, but has no result to wait for";
  }
  return success();
}

/// Sets every op's and transfer's planned start and end. A transfer starts
/// when its producer ends and arrives the producer's transfer cost later
/// (as doppler-simulate sets them).
void stampSchedule(FunctionOpInterface function, const IRGraph &irGraph,
                   const placement::Schedule &schedule) {
  OpBuilder builder(function.getContext());
  auto time = [&](double value) { return builder.getF64FloatAttr(value); };
  for (auto [node, op] : llvm::enumerate(irGraph.ops)) {
    op->setAttr(kStartAttr, time(schedule.start[node]));
    op->setAttr(kEndAttr, time(schedule.end[node]));
  }
  function.walk([&](TransferOp transfer) {
    Operation *producer = transfer.getInput().getDefiningOp();
    while (auto inner = dyn_cast_or_null<TransferOp>(producer))
      producer = inner.getInput().getDefiningOp();
    auto it = producer ? irGraph.nodeOf.find(producer) : irGraph.nodeOf.end();
    if (it == irGraph.nodeOf.end())
      return;
    double start = schedule.end[it->second];
    transfer->setAttr(kStartAttr, time(start));
    transfer->setAttr(kEndAttr,
                      time(start + irGraph.graph.transferCost(it->second)));
  });
}

/// Writes eviction `index` of the plan: a doppler.evict after its value's
/// producer, a doppler.reload before its first late reader (waiting on the
/// trigger), the late readers reading the reload, with the planned times.
LogicalResult writeEviction(FunctionOpInterface function,
                            const IRGraph &irGraph,
                            const placement::Eviction &eviction, size_t index,
                            const placement::OffloadSimulation &simulated,
                            const std::vector<placement::DeviceId> &assignment,
                            const placement::OffloadOptions &options) {
  OpBuilder builder(function.getContext());
  auto time = [&](double value) { return builder.getF64FloatAttr(value); };
  const placement::Schedule &schedule = simulated.schedule;
  Operation *producer = irGraph.ops[eviction.value];
  Value value = producer->getResult(0);
  auto device = DeviceAttr::get(function.getContext(), eviction.device);
  double bytes = irGraph.graph.outputBytes(eviction.value);
  const placement::HostLink &link = options.hostLinks[eviction.device];

  // What the late readers read today: the value itself, or for a
  // received copy the transfer that brings it to the device. A received
  // copy is evicted from the producer's original (the planner's model)
  // and reloaded onto the receiving device.
  Value onDevice = value;
  TransferOp transfer;
  auto home =
      DeviceAttr::get(function.getContext(), assignment[eviction.value]);
  if (eviction.device != assignment[eviction.value]) {
    for (Operation *user : value.getUsers())
      if (auto candidate = dyn_cast<TransferOp>(user))
        if (candidate.getTarget().getId() == eviction.device) {
          transfer = candidate;
          break;
        }
    if (!transfer)
      return producer->emitOpError()
             << "internal error: no transfer of its result to device "
             << eviction.device << " to evict";
    onDevice = transfer.getResult();
  }

  builder.setInsertionPointAfter(producer);
  auto evict = EvictOp::create(builder, producer->getLoc(), value.getType(),
                               value, home);
  evict->setAttr(kDeviceAttr, home);
  // The copy runs from the value's end until the host holds it.
  evict->setAttr(kStartAttr, time(schedule.end[eviction.value]));
  evict->setAttr(kEndAttr,
                 time(schedule.start[simulated.offload.stashNode[index]]));

  Operation *firstLate = irGraph.ops[eviction.lateReaders.front()];
  builder.setInsertionPoint(firstLate);
  auto reload = ReloadOp::create(builder, firstLate->getLoc(),
                                 value.getType(), evict.getResult(), device,
                                 irGraph.ops[eviction.trigger]->getResults());
  reload->setAttr(kDeviceAttr, device);
  double reloadStart = schedule.end[simulated.offload.reloadNode[index]];
  reload->setAttr(kStartAttr, time(reloadStart));
  reload->setAttr(kEndAttr,
                  time(reloadStart + placement::hostTransferTime(link, bytes)));

  for (placement::NodeId reader : eviction.lateReaders) {
    Operation *late = irGraph.ops[reader];
    late->walk([&](Operation *nested) {
      nested->replaceUsesOfWith(onDevice, reload.getResult());
    });
  }
  // With no early readers on the device, the transfer serves nobody.
  if (transfer && transfer->use_empty())
    transfer->erase();
  return success();
}

LogicalResult
PlanMemoryPass::rewrite(FunctionOpInterface function, const IRGraph &irGraph,
                        const placement::OffloadPlan &plan,
                        const placement::System &system,
                        const std::vector<placement::DeviceId> &assignment,
                        const placement::OffloadOptions &options) {
  const placement::Graph &graph = irGraph.graph;
  if (failed(checkEvictions(irGraph, plan)))
    return failure();

  // The planned schedule (the planner's own prediction: its order, its
  // evictions, memory waits), for the ops' start and end times. The start
  // times are the order the runtime follows (doppler-run --order priority,
  // the default for offloaded programs).
  std::string error;
  std::optional<placement::OffloadSimulation> simulated =
      placement::simulateOffloadPlan(graph, system, assignment, plan, options,
                                     &error);
  if (!simulated)
    return function.emitOpError() << "internal error: " << error;
  stampSchedule(function, irGraph, simulated->schedule);

  double bytesEvicted = 0;
  for (auto [i, eviction] : llvm::enumerate(plan.evictions)) {
    if (failed(writeEviction(function, irGraph, eviction, i, *simulated,
                             assignment, options)))
      return failure();
    bytesEvicted += graph.outputBytes(eviction.value);
    ++numEvictions;
  }

  OpBuilder builder(function.getContext());
  auto time = [&](double value) { return builder.getF64FloatAttr(value); };
  SmallVector<int64_t> peaks;
  for (double peak : plan.peakAfter)
    peaks.push_back(wholeBytes(peak));
  function->setAttr(kMakespanAttr, time(plan.makespan));
  function->setAttr(kPeakMemoryAttr, builder.getDenseI64ArrayAttr(peaks));
  function->setAttr(
      kOffloadAttr,
      builder.getDictionaryAttr({
          builder.getNamedAttr(
              "evictions", builder.getI64IntegerAttr(plan.evictions.size())),
          builder.getNamedAttr("bytes_evicted", builder.getI64IntegerAttr(
                                                    wholeBytes(bytesEvicted))),
          builder.getNamedAttr("host_peak", builder.getI64IntegerAttr(
                                                wholeBytes(plan.hostPeak))),
          builder.getNamedAttr("unlimited_makespan",
                               time(plan.unlimitedMakespan)),
      }));
  ++numFunctionsOffloaded;
  return success();
}

} // namespace
