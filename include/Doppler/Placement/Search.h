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
// The temperature is scaled to the graph by default: the search first tries
// 64 seeded single-node moves of the start and starts at a tenth of the
// median relative change of the makespan they make (typicalMoveDelta),
// falling 100-fold. A fixed 2% start walked away from good starts on graphs
// of 10^3 nodes, where one move changes the makespan by 0.04-1.5%; the
// scale was chosen on the training split of the real-program graphs
// (docs/Method.md section 12).
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

/// The automatic temperature (SearchOptions::initialTemperature unset):
/// the moves sampled, the typical move's change it starts at, as a share
/// (a tenth: on the training pairs a tenth, a quarter and the whole gave
/// 0.969, 0.970 and 0.981x the better heuristic in 2,000 runs, 0.957, 0.961
/// and 0.974x in 20,000; Method.md section 12), and what it falls to, as a
/// share of where it starts.
inline constexpr int32_t kDefaultTemperatureSamples = 64;
inline constexpr double kAutomaticTemperatureScale = 0.1;
inline constexpr double kAutomaticTemperatureFall = 0.01;

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
  /// value over the budget (over what is left of it after the measurement
  /// below); 0 accepts no worse move (a hill climb that crosses plateaus).
  ///
  /// Unset (the default): automatic. The search first measures the
  /// typical single move's relative change of the start's makespan,
  /// typicalMoveDelta over `temperatureSamples` seeded moves (their
  /// simulator runs count against the budget: at most an eighth of an
  /// evaluation budget, and sampling stops at an eighth of a time
  /// budget; a move found better on the way is kept as the best), and
  /// starts at kAutomaticTemperatureScale of it. When nothing was measured
  /// (an evaluation budget under 8 runs, or every sampled move infeasible
  /// under peakMemoryLimits) or no sampled move changed the makespan, the
  /// start is 0. SearchResult reports the temperatures used.
  std::optional<double> initialTemperature;
  /// Unset: initialTemperature x kAutomaticTemperatureFall (1/100).
  std::optional<double> finalTemperature;
  /// Moves sampled by the automatic temperature.
  int32_t temperatureSamples = kDefaultTemperatureSamples;
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
  /// The temperatures used (measured when SearchOptions leaves them unset).
  double initialTemperature = 0;
  double finalTemperature = 0;
  /// Simulator runs spent measuring the automatic temperature (counted in
  /// `evaluations`; 0 with an explicit temperature).
  int64_t temperatureRuns = 0;
};

/// The typical relative change of `start`'s makespan under `judge` that one
/// move of a node to another device makes: the median of |M' - M| / M over
/// `samples` such moves drawn with `seed` (every move once when there are
/// no more than `samples`: a graph of n nodes on D devices has n (D - 1)).
/// When more than half change nothing, the median of those that change it
/// (so a graph whose nodes mostly have slack still gets the scale of the
/// moves that matter); 0 when none does, or with one device or no node.
/// The automatic temperature of refinePlacement starts at
/// kAutomaticTemperatureScale of it (with the same seed and enough budget,
/// SearchResult::initialTemperature is that).
double typicalMoveDelta(Simulator &judge, ArrayView<DeviceId> start,
                        uint64_t seed,
                        int32_t samples = kDefaultTemperatureSamples);

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
