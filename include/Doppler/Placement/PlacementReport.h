//===- PlacementReport.h - What doppler-place reports -----------*- C++ -*-===//
//
// The result of placing (or evaluating) a graph on D devices, and its two
// renderings: one line of JSON (doppler-place --json) and the text summary.
// Both are exact: integral makespans print as integers.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_PLACEMENT_PLACEMENTREPORT_H
#define DOPPLER_PLACEMENT_PLACEMENTREPORT_H

#include "Doppler/Placement/Graph.h"
#include "Doppler/Placement/Search.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace doppler::placement {

struct PlacementReport {
  // What was placed.
  std::string graphPath;
  int32_t nodes = 0;
  int32_t edges = 0;
  int64_t devices = 0;
  // How: a policy, or (policy empty) the placement of an assignment file.
  std::string policy;
  uint64_t seed = 0;
  int64_t samples = 0;   ///< the learned policy's rollouts
  std::string modelPath; ///< the learned policy's model ("" = embedded)
  std::string assignmentPath;
  // The result.
  std::vector<DeviceId> assignment;
  double makespan = 0;
  double lowerBound = 0;
  double seconds = 0;
  std::optional<double> secondsPerEval; ///< evaluations repeated N times
  int64_t repeat = 0;
  /// The placements a budgeted run started from (policy or heuristic name,
  /// simulated makespan), in the order tried; startChosen indexes the one
  /// refined. Empty without a budget.
  std::vector<std::pair<std::string, double>> starts;
  size_t startChosen = 0;
  std::optional<SearchResult> refinement;
  std::vector<double> deviceBusy;
  std::vector<int32_t> deviceNodes;
  /// Per device, bytes: the simulated peak of live buffers
  /// (SimulatorOptions::trackMemory) and the capacity (infinity: unknown).
  /// Empty when the graph carries no output sizes.
  std::vector<double> peakMemory;
  std::vector<double> memoryCapacity;
  /// The memory fit after the policy (MemoryFit.h), when capacities were
  /// known: ops moved to fit (0: the placement fitted as it was), whether
  /// the result fits, and why not.
  std::optional<int64_t> movedToFit;
  bool memoryFeasible = true;
  std::string memoryDiagnosis;
};

/// One line of JSON (no newline), the headline numbers first.
std::string formatPlacementReportJson(const PlacementReport &report);

/// The text summary, a line per item and a row per device.
std::string formatPlacementReportText(const PlacementReport &report);

} // namespace doppler::placement

#endif // DOPPLER_PLACEMENT_PLACEMENTREPORT_H
