//===- PlaceDevices.cpp - Place every op with a lib/Placement policy ------===//

#include "Doppler/Dialect/DopplerOps.h"
#include "Doppler/Placement/Analysis.h"
#include "Doppler/Placement/Heuristics.h"
#include "Doppler/Placement/Learning/LearnedPolicy.h"
#include "Doppler/Placement/Search.h"
#include "Doppler/Placement/Simulator.h"
#include "Doppler/Transforms/Passes.h"
#include "Doppler/Analysis/PlacementGraph.h"

#include "Doppler/Support/Limits.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/Support/Format.h"

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
    if (refineSeconds < 0 || refineEvaluations < 0)
      return error() << "doppler-place: refinement budgets must not be "
                        "negative";
    return success();
  }

  void runOnOperation() override {
    WalkResult result = getOperation()->walk([&](FunctionOpInterface function) {
      if (function.isExternal())
        return WalkResult::advance();
      return failed(placeFunction(function)) ? WalkResult::interrupt()
                                             : WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }

private:
  /// The policy as the summary remark names it.
  std::string policyDescription() const {
    if (policy.getValue() != placement::kLearnedPolicyName)
      return policy;
    std::string rollouts =
        samples > 0 ? "best of " + std::to_string(samples) + " rollouts"
                    : std::string("greedy");
    std::string source = model.getValue().empty() ? "embedded model"
                                                  : "model " + model.getValue();
    return policy + " (" + rollouts + ", " + source + ")";
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
    placement::PolicyOptions policyOptions;
    policyOptions.seed = seed;
    placement::LearnedPolicyOptions learnedOptions;
    learnedOptions.modelPath = model;
    learnedOptions.samples = samples;
    std::optional<std::vector<placement::DeviceId>> assignment =
        placement::placeWithNamedPolicy(policy, graph, devices, policyOptions,
                                        learnedOptions, &error);
    if (!assignment)
      return function.emitOpError() << "cannot be placed: " << error;

    double lowerBound = placement::makespanLowerBound(graph, devices);
    if (refineSeconds > 0 || refineEvaluations > 0) {
      placement::SearchOptions search;
      search.seed = seed;
      search.timeBudgetSeconds = refineSeconds;
      search.maxEvaluations = refineEvaluations;
      search.targetMakespan = lowerBound;
      std::optional<placement::SearchResult> refined =
          placement::refinePlacement(graph, devices, *assignment, search,
                                     &error);
      if (!refined)
        return function.emitOpError() << "refinement failed: " << error;
      *assignment = std::move(refined->assignment);
    }

    for (auto [node, op] : llvm::enumerate(irGraph->ops))
      setDevice(op, (*assignment)[node]);
    numPlaced += irGraph->ops.size();

    placement::Simulator simulator(graph, devices);
    double makespan = simulator.run(*assignment);
    std::vector<double> load(devices, 0.0);
    for (auto [node, device] : llvm::enumerate(*assignment))
      load[device] += graph.computeCost(node);
    std::string summary;
    llvm::raw_string_ostream os(summary);
    os << "placed " << graph.numNodes() << " ops on " << devices
       << " devices with " << policyDescription() << ": predicted makespan "
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
    return success();
  }
};

} // namespace
