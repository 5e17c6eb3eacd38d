//===- MemoryFit.h - Placements that fit the devices' memory ----*- C++ -*-===//
//
// Makes a placement fit every device's memory capacity (Doppler issue 17).
// The judge is the simulator with memory tracking (SimulatorOptions::
// trackMemory, reference timing otherwise): a placement is feasible when, on
// every device, its simulated peak of live bytes plus the bytes resident for
// the whole run is at most System::memoryCapacity.
//
// fitToMemory keeps a placement that already fits. Otherwise it repairs it
// (nodes move off overfull devices, each candidate judged by a simulator
// run, lexicographically by total overflow bytes, then makespan; a seeded
// annealing on the overflow where that stalls; restarts from heuristic
// placements as a last resort) and then shortens the makespan by simulated
// annealing restricted to feasible placements (refinePlacement with
// SearchOptions::peakMemoryLimits). Deterministic for a seed and an
// evaluation budget. MLIR-free; errors never throw.
//
// Measured (unittests/Placement/MemoryFitTest.cpp): on 200 random layered
// graphs with capacities at a known placement's peaks (+0..10%), every
// heuristic policy's placement is made to fit with 1500 evaluations; 19 of
// the 1004 that did not fit needed a restart.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_PLACEMENT_MEMORYFIT_H
#define DOPPLER_PLACEMENT_MEMORYFIT_H

#include "Doppler/Placement/Graph.h"
#include "Doppler/Placement/Simulator.h"
#include "Doppler/Placement/System.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace doppler::placement {

struct MemoryFitOptions {
  uint64_t seed = 0;
  /// Simulator runs the repair (and the improvement after it) may spend.
  int64_t maxEvaluations = 20000;
  /// Bytes already resident on each device for the whole run (e.g. the
  /// program's arguments); capacity left for the graph = capacity - this.
  std::vector<double> residentBytes; // empty = none
};

struct MemoryFitResult {
  std::vector<DeviceId> assignment;
  bool feasible = false;      // every device's simulated peak (+resident) <= capacity
  bool changed = false;       // assignment differs from the input
  double makespan = 0;        // reference-semantics makespan of `assignment`
  double initialMakespan = 0; // of the input
  std::vector<double> peakMemory;        // per device, of `assignment` (resident included)
  std::vector<double> initialPeakMemory; // of the input
  int64_t evaluations = 0;
  /// "" when the repair started from the input; else the heuristic policy
  /// whose placement the repair restarted from (when the input's repair
  /// found nothing that fits).
  std::string restartPolicy;
  /// When !feasible: one line saying why, e.g. "node 12 needs 3.2 GB at
  /// once (inputs and output) but the largest device holds 2 GB" or "best
  /// found: device 1 peaks at 5.1 GB, over its 4 GB capacity".
  std::string diagnosis;
};

/// The feasibility judge: simulated peak per device (Simulator with
/// trackMemory, reference timing otherwise) against System::memoryCapacity.
/// Requires graph.hasOutputBytes() (else error; an empty graph needs none).
/// If the input fits, returns it unchanged (feasible, changed = false, 1
/// evaluation). Otherwise repairs it: moves nodes off overfull devices (candidates: producers of the
/// largest buffers live at the over-capacity instant, moved to the device
/// with most headroom or to a neighbour's device), each candidate judged by
/// a simulator run, lexicographic objective (total overflow bytes, then
/// makespan; see MemoryFit.cpp); if that stalls, a seeded annealing on the
/// overflow; if the input's repair (half the budget) finds nothing that
/// fits, the same from the placements of the critical-path, heft,
/// join-aware and round-robin policies in turn (restartPolicy says which
/// one). Then improves the makespan by annealing restricted to feasible
/// placements. Deterministic for a seed and an evaluation budget.
/// Errors: no output bytes, an invalid assignment, residentBytes of the
/// wrong length or negative.
std::optional<MemoryFitResult> fitToMemory(const Graph &graph,
                                           const System &system,
                                           ArrayView<DeviceId> assignment,
                                           const MemoryFitOptions &options,
                                           std::string *error = nullptr);

/// A proof that no placement can fit, or "" if none is found: some device's
/// resident bytes exceed its capacity; some node's inputs + output exceed
/// every device's capacity; the graph outputs (sinks stay live to the end)
/// exceed the total capacity. Needs output bytes ("" without them).
std::string
memoryLowerBoundViolation(const Graph &graph, const System &system,
                          const std::vector<double> &residentBytes = {});

/// One buffer's life on one device, as SimulatorOptions::trackMemory
/// counts it: [allocated, freed), freed = +infinity for a graph output.
struct BufferInterval {
  NodeId value;      // whose output
  DeviceId device;   // where the buffer lives
  bool received;     // a copy received from value's device
  double bytes;
  double allocated, freed;
  bool liveAt(double time) const { return allocated <= time && time < freed; }
};

/// Rebuilds every buffer's interval from a schedule of `assignment` run
/// with trackMemory in reference timing (edge-cost transfers, no link
/// contention, no speeds): the live bytes on device d at the peak instant
/// Schedule::peakMemoryTime[d] add up to Schedule::peakMemory[d].
std::vector<BufferInterval> bufferIntervals(const Graph &graph,
                                            ArrayView<DeviceId> assignment,
                                            const Schedule &schedule);

/// Per device, the integral over time of the live bytes above `limits[d]`
/// (up to the makespan): a measure of how far over capacity a schedule is
/// that also counts how long.
std::vector<double> overflowIntegrals(const std::vector<BufferInterval> &buffers,
                                      const std::vector<double> &limits,
                                      double makespan);

/// Bytes node `v` needs on its device while it runs: its output plus the
/// outputs of its distinct predecessors (its inputs). 0 without output
/// bytes.
double nodeWorkingSet(const Graph &graph, NodeId v);

/// Bytes as short text with a decimal unit ("512 B", "3.2 GB"), for
/// diagnoses.
std::string formatBytes(double bytes);

} // namespace doppler::placement

#endif // DOPPLER_PLACEMENT_MEMORYFIT_H
