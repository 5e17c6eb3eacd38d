//===- Search.h - Simulator-judged placement refinement ---------*- C++ -*-===//
//
// Improves any placement by simulated annealing, with the simulator as the
// judge of every candidate. Moves: one node to another device (at random, or
// to a producer's or consumer's device), a swap of two nodes' devices, a
// connected group of nodes sharing a device moved together, and moves aimed
// at the critical chain of the current schedule (a node waiting for a
// transfer joins its producer's device or vice versa; a node waiting for its
// busy device leaves, e.g. for the least loaded one). Each candidate is a
// full simulator run (microseconds); a rejected move is undone in O(moved
// nodes), and the critical chain is derived only when a move needs it. The
// best placement ever seen is returned, so the result is never worse than
// the start.
//
// Budgets: a time budget, an evaluation budget, or both (the search stops at
// whichever comes first). With an evaluation budget alone the result depends
// only on (graph, devices, start, options): the same seed gives the same
// placement on every run and machine. A time budget makes it depend on the
// machine's speed (the temperature follows the elapsed fraction of the
// budget).
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_PLACEMENT_SEARCH_H
#define DOPPLER_PLACEMENT_SEARCH_H

#include "Doppler/Placement/Graph.h"
#include "Doppler/Placement/Simulator.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace doppler::placement {

struct SearchOptions {
  uint64_t seed = 0;
  /// Wall-clock budget in seconds; 0 means none.
  double timeBudgetSeconds = 0;
  /// Number of simulator runs; 0 means none. At least one budget must be
  /// set.
  int64_t maxEvaluations = 0;
  /// Annealing temperature, as a fraction of the current makespan: a move
  /// that lengthens the makespan by that fraction is accepted with
  /// probability 1/e. It falls geometrically from the initial to the final
  /// value over the budget.
  double initialTemperature = 0.02;
  double finalTemperature = 0.0002;
  /// Aim some moves at the critical chain of the current schedule.
  bool criticalMoves = true;
  /// Stop early once the makespan reaches this value (e.g. a lower bound);
  /// 0 means never.
  double targetMakespan = 0;
  /// Per device, bytes (empty = no limit): a candidate whose simulated
  /// peak (Schedule::peakMemory) exceeds the limit on some device counts
  /// as infeasible (+infinity) and is never accepted from a feasible
  /// placement. Needs a judge with SimulatorOptions::trackMemory.
  std::vector<double> peakMemoryLimits;
};

struct SearchResult {
  std::vector<DeviceId> assignment; ///< the best placement seen
  double makespan = 0;              ///< its makespan under the judge
  double initialMakespan = 0;       ///< the start's makespan
  int64_t evaluations = 0;          ///< simulator runs, the start's included
  int64_t acceptedMoves = 0;
  int64_t improvements = 0;         ///< times a new best was found
  double seconds = 0;               ///< wall time spent
};

/// Refines `initial` judged by `judge` (any simulator mode: the reference
/// semantics or an extended one). Fails on an invalid start assignment or
/// when no budget is set.
std::optional<SearchResult> refinePlacement(Simulator &judge,
                                            ArrayView<DeviceId> initial,
                                            const SearchOptions &options,
                                            std::string *error = nullptr);

/// The same with a reference-semantics simulator on `numDevices` devices.
std::optional<SearchResult> refinePlacement(const Graph &graph,
                                            int32_t numDevices,
                                            ArrayView<DeviceId> initial,
                                            const SearchOptions &options,
                                            std::string *error = nullptr);

} // namespace doppler::placement

#endif // DOPPLER_PLACEMENT_SEARCH_H
