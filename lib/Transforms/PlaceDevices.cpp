//===- PlaceDevices.cpp - Place every op with a lib/Placement policy ------===//

#include "Doppler/Dialect/DopplerOps.h"
#include "Doppler/Placement/Analysis.h"
#include "Doppler/Placement/Heuristics.h"
#include "Doppler/Placement/Learning/Budget.h"
#include "Doppler/Placement/Learning/LearnedPolicy.h"
#include "Doppler/Placement/MemoryFit.h"
#include "Doppler/Placement/Search.h"
#include "Doppler/Placement/Simulator.h"
#include "Doppler/Placement/SystemDescription.h"
#include "Doppler/Transforms/Passes.h"
#include "Doppler/Analysis/PlacementGraph.h"

#include "Doppler/Support/Limits.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/Support/Format.h"

#include <cmath>
#include <optional>

namespace mlir::doppler {
#define GEN_PASS_DEF_DOPPLERPLACEPASS
#include "Doppler/Transforms/Passes.h.inc"
} // namespace mlir::doppler

using namespace mlir;
using namespace mlir::doppler;
namespace placement = ::doppler::placement;

namespace {

class PlaceDevicesPass
    : public mlir::doppler::impl::DopplerPlacePassBase<PlaceDevicesPass> {
public:
  using Base::Base;

  LogicalResult initialize(MLIRContext *context) override {
    auto error = [&]() { return emitError(UnknownLoc::get(context)); };
    if (devices < 1)
      return error() << "doppler-place: devices must be at least 1, got "
                     << static_cast<int>(devices);
    if (devices > ::doppler::kMaxDevices)
      return error() << "doppler-place: devices must be at most "
                     << ::doppler::kMaxDevices << ", got "
                     << static_cast<int>(devices);
    if (systemDevices > 0 && devices > systemDevices)
      emitWarning(UnknownLoc::get(context))
          << "doppler-place: placing on " << static_cast<int>(devices)
          << " devices but the system description has "
          << static_cast<int>(systemDevices)
          << "; the extra devices are costed like the described ones";
    const std::vector<std::string> &known = placement::placementPolicyNames();
    if (std::find(known.begin(), known.end(), policy.getValue()) ==
        known.end()) {
      InFlightDiagnostic diag = error() << "doppler-place: unknown policy '"
                                        << policy << "' (known: ";
      llvm::interleaveComma(known, diag);
      diag << ")";
      return diag;
    }
    bool learned = policy.getValue() == placement::kLearnedPolicyName;
    if (samples < 0)
      return error() << "doppler-place: samples must not be negative, got "
                     << static_cast<int>(samples);
    if (!learned && (samples != 0 || !model.getValue().empty()))
      return error() << "doppler-place: samples and model apply to policy "
                     << placement::kLearnedPolicyName << " only, not '"
                     << policy << "'";
    if (budgetEvaluations < -1)
      return error() << "doppler-place: budget-evaluations must be -1 (the "
                        "default), 0 (none) or a number of simulator runs, "
                        "got "
                     << static_cast<int64_t>(budgetEvaluations);
    if (!std::isfinite(budgetMilliseconds) || budgetMilliseconds < 0)
      return error() << "doppler-place: budget-ms must be a non-negative "
                        "number of milliseconds, got "
                     << budgetMilliseconds;
    if (!std::isfinite(memoryLimit) || memoryLimit < 0)
      return error() << "doppler-place: memory-limit must be a non-negative "
                        "number of bytes (0: the system's capacities), got "
                     << memoryLimit;
    if (fitEvaluations < 1)
      return error() << "doppler-place: fit-evaluations must be at least 1, "
                        "got "
                     << static_cast<int64_t>(fitEvaluations);
    capacities.clear();
    networkSystem.reset();
    handOffSystem.reset();
    if (!system.getValue().empty()) {
      std::string loadError;
      std::optional<placement::SystemDescription> description =
          placement::SystemDescription::load(system, &loadError);
      if (!description)
        return error() << "doppler-place: " << loadError;
      // Devices beyond the description take its devices' capacities in
      // turn, as they take their costs.
      for (int d = 0; d < devices; ++d)
        capacities.push_back(
            description->device(d % description->numDevices()).memoryBytes);
      // Nodes joined by a network: the placement weighs each device pair's
      // link and is judged on the links and NICs (placeFunction).
      if (description->hasNetwork() && description->numDevices() == devices)
        networkSystem = description->toSystem();
      // A description with hand-offs (a calibrated host): the placement is
      // judged as doppler-simulate predicts it.
      if (!networkSystem)
        handOffSystem = description->handOffSystem(devices);
    }
    if (memoryLimit > 0)
      capacities.assign(devices, memoryLimit);
    return success();
  }

  void runOnOperation() override {
    if (failed(forEachFunctionBody(
            getOperation(),
            [&](FunctionOpInterface function) { return placeFunction(function); })))
      signalPassFailure();
    // A module placed for a system of several nodes says which node each
    // device is on (doppler-run maps node i to rank i under mpirun); one
    // placed without them drops what an earlier placement wrote.
    if (!isa<ModuleOp>(getOperation()))
      return;
    if (!networkSystem) {
      getOperation()->removeAttr(kNodesAttr);
      return;
    }
    std::vector<int64_t> nodes;
    for (int d = 0; d < devices; ++d)
      nodes.push_back(networkSystem->nodeOf(d));
    getOperation()->setAttr(kNodesAttr,
                            Builder(&getContext()).getDenseI64ArrayAttr(nodes));
  }

private:
  /// Memory capacity per device (empty: no memory constraint).
  std::vector<double> capacities;
  /// The system, when it has several nodes and exactly `devices` devices.
  std::optional<placement::System> networkSystem;
  /// The devices' hand-offs, when the description has any (and no network).
  std::optional<placement::System> handOffSystem;

  /// Makes `assignment` fit the devices' memory (fitToMemory); warns when no
  /// fitting placement is found and keeps the one with the least overflow.
  LogicalResult fitMemory(FunctionOpInterface function,
                          const placement::Graph &graph,
                          std::vector<placement::DeviceId> &assignment) {
    if (capacities.empty())
      return success();
    // Cost-only graphs (doppler.task values) have no sizes, or all zero.
    bool sized = graph.hasOutputBytes() &&
                 llvm::any_of(graph.outputBytesList(),
                              [](double bytes) { return bytes > 0; });
    if (!sized) {
      if (memoryLimit > 0)
        mlir::emitWarning(function.getLoc())
            << "memory-limit ignored: the ops carry no byte sizes (cost-only "
               "graph)";
      return success();
    }
    placement::SystemBuilder builder(devices);
    builder.setMemoryCapacities(capacities);
    std::string error;
    std::optional<placement::System> memorySystem = builder.build(&error);
    if (!memorySystem)
      return function.emitOpError() << "memory capacities: " << error;
    placement::MemoryFitOptions options;
    options.seed = seed;
    options.maxEvaluations = fitEvaluations;
    std::optional<placement::MemoryFitResult> fit = placement::fitToMemory(
        graph, *memorySystem, assignment, options, &error);
    if (!fit)
      return function.emitOpError() << "memory fit failed: " << error;
    if (!fit->feasible)
      // At the function's location without the op dump (one line).
      mlir::emitWarning(function.getLoc())
          << "no placement found that fits the devices' memory ("
          << fit->diagnosis
          << "); keeping the one with the least overflow: doppler-plan-memory "
             "can offload tensors to host memory";
    if (fit->changed) {
      int64_t moved = 0;
      for (auto [before, after] : llvm::zip(assignment, fit->assignment))
        moved += before != after;
      numMovedToFit += moved;
      std::string text;
      llvm::raw_string_ostream os(text);
      os << "moved " << moved << " ops to fit the devices' memory: predicted "
         << "makespan " << llvm::format("%.6g", fit->initialMakespan)
         << " -> " << llvm::format("%.6g", fit->makespan)
         << ", peak memory per device [";
      llvm::interleaveComma(fit->peakMemory, os, [&](double bytes) {
        os << placement::formatBytes(bytes);
      });
      os << "] of [";
      llvm::interleaveComma(capacities, os, [&](double bytes) {
        os << placement::formatBytes(bytes);
      });
      os << "]";
      mlir::emitRemark(function.getLoc(), text);
      assignment = std::move(fit->assignment);
    }
    return success();
  }

  /// The policy as the summary remark names it.
  std::string policyDescription(const placement::BudgetedPlacement &placed) const {
    std::string budget;
    if (placed.refinement)
      budget = ", within " + std::to_string(placed.refinement->evaluations) +
               (placed.refinement->evaluations == 1 ? " simulator run"
                                                    : " simulator runs");
    if (policy.getValue() != placement::kLearnedPolicyName)
      return placed.refinement ? policy + " (" + budget.substr(2) + ")"
                               : policy.getValue();
    std::string rollouts =
        samples > 0 ? "best of " + std::to_string(samples) + " rollouts"
                    : std::string("greedy");
    std::string source = model.getValue().empty() ? "embedded model"
                                                  : "model " + model.getValue();
    return policy + " (" + rollouts + ", " + source + budget + ")";
  }

  LogicalResult placeFunction(FunctionOpInterface function) {
    FailureOr<IRGraph> irGraph =
        buildPlacementGraph(function, TransferHandling::AsNodes);
    if (failed(irGraph))
      return failure();
    const placement::Graph &graph = irGraph->graph;
    if (graph.numNodes() == 0)
      return success();

    std::string error;
    placement::BudgetedPlaceOptions budget;
    budget.policy = policy;
    budget.heuristic.seed = seed;
    budget.learned.modelPath = model;
    budget.learned.samples = samples;
    // A memory-aware model reads the capacities (others ignore them); the
    // fit below still guarantees the result where a fitting one exists.
    if (graph.hasOutputBytes())
      budget.learned.memoryCapacities = capacities;
    budget.seconds = budgetMilliseconds / 1000;
    if (budgetEvaluations >= 0)
      budget.evaluations = budgetEvaluations;
    else if (budgetMilliseconds == 0 &&
             policy.getValue() == placement::kLearnedPolicyName)
      budget.evaluations = placement::defaultBudgetEvaluations(graph, devices);
    double lowerBound = placement::makespanLowerBound(graph, devices);
    budget.targetMakespan = lowerBound;
    // On a system of several nodes (and ops with byte sizes) the policies
    // weigh each device pair's link and the network simulator judges
    // (link and NIC contention, the tensors' bytes; docs/SystemDescription.md).
    std::optional<placement::Simulator> simulator;
    if (networkSystem && graph.hasOutputBytes()) {
      budget.heuristic.system = &*networkSystem;
      placement::SimulatorOptions network;
      network.linkContention = true;
      network.transferModel = placement::TransferModel::LinkBandwidth;
      simulator.emplace(graph, *networkSystem, network);
    } else if (handOffSystem) {
      placement::SimulatorOptions handOff;
      handOff.handOff = true;
      simulator.emplace(graph, *handOffSystem, handOff);
    } else {
      simulator.emplace(graph, devices);
    }
    std::optional<placement::BudgetedPlacement> placed =
        placement::placeWithinBudget(*simulator, graph, devices, budget,
                                     &error);
    if (!placed)
      return function.emitOpError() << "cannot be placed: " << error;
    std::vector<placement::DeviceId> *assignment = &placed->assignment;
    if (failed(fitMemory(function, graph, *assignment)))
      return failure();

    for (auto [node, op] : llvm::enumerate(irGraph->ops))
      setDevice(op, (*assignment)[node]);
    numPlaced += irGraph->ops.size();

    double makespan = simulator->run(*assignment);
    std::vector<double> load(devices, 0.0);
    for (auto [node, device] : llvm::enumerate(*assignment))
      load[device] += graph.computeCost(node);
    std::string summary;
    llvm::raw_string_ostream os(summary);
    os << "placed " << graph.numNodes() << " ops on " << devices
       << " devices with " << policyDescription(*placed) << ": predicted makespan "
       << llvm::format("%.6g", makespan) << ", lower bound "
       << llvm::format("%.6g", lowerBound) << " ("
       << llvm::format("%.3f", lowerBound > 0 ? makespan / lowerBound : 1.0)
       << "x); load per device [";
    llvm::interleaveComma(
        load, os, [&](double value) { os << llvm::format("%.6g", value); });
    os << "]";
    // Located at the function but not attached to it, so the remark stays
    // one line (no "see current operation" dump).
    mlir::emitRemark(function.getLoc(), summary);
    // What the budget was spent on, a second line.
    if (placed->refinement)
      mlir::emitRemark(function.getLoc(),
                       "budget: " +
                           placement::describeBudgetedPlacement(*placed));
    return success();
  }
};

} // namespace
