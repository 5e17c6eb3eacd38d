//===- Budget.h - Placement under a budget, the default ----------*- C++ -*-===//
//
// What the doppler-place pass and tool do by default: spend a budget on the
// best placement they can find, judged by the simulator.
//
//   1. Starts. The named policy's placement. For the learned policy
//      (kLearnedPolicyName) also the two heuristics it has as priors,
//      critical-path and join-aware (microseconds each), and, when asked
//      (LearnedPolicyOptions::samples), the best of K rollouts instead of
//      the greedy one. With a budget also everything on device 0, and on a
//      system of several nodes (PolicyOptions::system) the hierarchical
//      starts (placeHierarchical: pipeline stages over all the nodes, half
//      of them, ... down to two, each plain and owner-computes); the
//      heuristics then price each device pair's link, and `judge` should
//      be the network simulator. Each start costs one simulator run; the
//      rollouts are bounded by the budget as well (at most as many as its
//      runs, and no rollout begins past its time).
//   2. Refinement. Simulated annealing (Search.h) from the best start, for
//      the rest of the budget.
//
// The budget is counted in simulator runs (deterministic: the same seed and
// budget give the same placement on every machine) or in wall-clock time
// (depends on the machine's speed). defaultBudgetEvaluations() is the
// default: a number of runs that takes about a second on a few hundred
// nodes on one core of the machine it was measured on, growing as the
// square root of the size above that; tools and passes use it so that
// compiling the same program twice gives the same placement. A budget of
// zero runs the named policy alone, once, as before budgets existed.
//
// Lives in DopplerLearningLoader (no LibTorch: the learned policy is reached
// through placeWithNamedPolicy's dlopen).
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_PLACEMENT_LEARNING_BUDGET_H
#define DOPPLER_PLACEMENT_LEARNING_BUDGET_H

#include "Doppler/Placement/Graph.h"
#include "Doppler/Placement/Heuristics.h"
#include "Doppler/Placement/Learning/LearnedPolicy.h"
#include "Doppler/Placement/Search.h"
#include "Doppler/Placement/Simulator.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace doppler::placement {

struct BudgetedPlaceOptions {
  /// A name of placementPolicyNames().
  std::string policy{kLearnedPolicyName};
  /// The heuristic's options; its seed seeds everything (the learned
  /// policy's samples and the refinement).
  PolicyOptions heuristic;
  /// The learned policy's options (its seed is heuristic.seed).
  LearnedPolicyOptions learned;
  /// Refinement budget in simulator runs (deterministic per seed).
  int64_t evaluations = 0;
  /// Refinement budget in seconds of wall-clock time. With both set the
  /// search stops at whichever ends first; with neither, no refinement.
  double seconds = 0;
  /// Stop refining once the makespan reaches this (e.g. the lower bound;
  /// 0: never).
  double targetMakespan = 0;
};

/// One start: who produced it and its simulated makespan.
struct BudgetStart {
  std::string name;
  double makespan = 0;
};

struct BudgetedPlacement {
  std::vector<DeviceId> assignment;
  double makespan = 0; ///< under the judge
  /// Every start in the order tried; `best` indexes the one refined.
  std::vector<BudgetStart> starts;
  size_t best = 0;
  /// The refinement, when a budget was given.
  std::optional<SearchResult> refinement;
  double seconds = 0; ///< wall time, starts included
};

/// The default budget in simulator runs for a graph on numDevices devices:
/// about 1 s of simulation on a few hundred nodes (measured: 25-30 million
/// node-or-edge visits per second per core), t = sqrt(max(1, n / 500)) s
/// above that (10 s at most), and never more than 200 runs per
/// (node, device) pair, which small graphs reach long before a second.
int64_t defaultBudgetEvaluations(const Graph &graph, int32_t numDevices);

/// Places `graph` on numDevices devices with the budget of `options`,
/// judged by `judge` (a simulator of the same graph on numDevices devices).
/// Errors: those of the policies (unknown name, learned policy unavailable,
/// bad model) and of the search.
std::optional<BudgetedPlacement>
placeWithinBudget(Simulator &judge, const Graph &graph, int32_t numDevices,
                  const BudgetedPlaceOptions &options,
                  std::string *error = nullptr);

/// One line for reports: "doppler greedy 1.23e9, critical-path 1.2e9,
/// join-aware 9.8e8 (best); refined 9.8e8 -> 9.1e8 in 60000 runs, 0.71 s".
std::string describeBudgetedPlacement(const BudgetedPlacement &placed);

} // namespace doppler::placement

#endif // DOPPLER_PLACEMENT_LEARNING_BUDGET_H
