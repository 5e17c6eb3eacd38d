//===- OffloadTestSupport.h - Shared helpers of the offload tests -*- C++ -*-===//
//
// Graphs, options and the plan-consistency check shared by OffloadTest.cpp
// (offload graphs and planning on hand-made graphs) and
// OffloadRandomTest.cpp (random, shared and parallel graphs).
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_UNITTESTS_PLACEMENT_OFFLOADTESTSUPPORT_H
#define DOPPLER_UNITTESTS_PLACEMENT_OFFLOADTESTSUPPORT_H

#include "Doppler/Placement/Offload.h"

#include "Doppler/Placement/Heuristics.h"
#include "Doppler/Placement/MemoryFit.h"
#include "Doppler/Placement/Simulator.h"
#include "PlacementTestGraphs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace doppler::placement::testing {


inline OffloadOptions hostLinks(int32_t numDevices, double bandwidth,
                         double latency = 0) {
  OffloadOptions options;
  options.hostLinks.assign(numDevices, HostLink{bandwidth, latency});
  return options;
}

/// Simulates an offload graph with memory tracking.
inline Schedule simulate(const OffloadGraph &offload) {
  SimulatorOptions options;
  options.trackMemory = true;
  Simulator simulator(offload.graph, offload.system, options);
  simulator.run(offload.assignment);
  EXPECT_TRUE(simulator.schedule().ok());
  return simulator.schedule();
}

/// a -> b -> c -> d and a -> d, unit compute, outputs of 100, 10, 20 and 5
/// bytes, all on device 0.
inline Graph chainReadTwice() {
  return makeGraph({{1, 0, 100}, {1, 0, 10}, {1, 0, 20}, {1, 0, 5}},
                   {{0, 1}, {1, 2}, {2, 3}, {0, 3}});
}

/// a (device 0) -> b -> c -> d and a -> d, b, c, d on device 1; unit
/// compute, outputs of 100, 10, 20 and 5 bytes; a's transfer takes 1.
inline Graph receivedTwice() {
  return makeGraph({{1, 1, 100}, {1, 0, 10}, {1, 0, 20}, {1, 0, 5}},
                   {{0, 1}, {1, 2}, {2, 3}, {0, 3}});
}

inline std::vector<double> withResident(std::vector<double> peaks,
                                 const std::vector<double> &resident) {
  for (size_t d = 0; d < resident.size(); ++d)
    peaks[d] += resident[d];
  return peaks;
}

/// Checks a plan against its own prediction, simulated here independently
/// (the rewritten graph of its evictions; its priorities, stash and reload
/// nodes first; capacities less resident bytes enforced by the Skip policy,
/// or, when that deadlocks, no capacity enforced) and by
/// simulateOffloadPlan: both give its peaks and makespan; fits means the
/// enforced run completed with every device within capacity.
inline void expectPlanConsistent(const Graph &graph, const System &system,
                          const std::vector<DeviceId> &assignment,
                          const OffloadOptions &options,
                          const OffloadPlan &plan) {
  std::string error;
  std::optional<OffloadGraph> offload = buildOffloadGraph(
      graph, system, assignment, plan.evictions, options, &error);
  ASSERT_TRUE(offload) << error;
  const int32_t numDevices = system.numDevices();
  SimulatorOptions simulation;
  simulation.trackMemory = true;
  if (!plan.priority.empty()) {
    ASSERT_EQ(plan.priority.size(), static_cast<size_t>(graph.numNodes()));
    simulation.priorities = plan.priority;
    simulation.priorities.resize(offload->graph.numNodes(),
                                 std::numeric_limits<double>::lowest());
  }
  simulation.enforceMemoryCapacity = options.waitForMemory;
  simulation.memoryPolicy = MemoryLimitPolicy::Skip;
  std::vector<double> capacities(numDevices + 1, kUnlimited);
  for (DeviceId d = 0; d < numDevices; ++d)
    capacities[d] = std::max(0.0, system.memoryCapacity(d) -
                                      (options.residentBytes.empty()
                                           ? 0
                                           : options.residentBytes[d]));
  SystemBuilder builder(numDevices + 1);
  builder.setMemoryCapacities(capacities);
  Simulator enforced(offload->graph, *builder.build(), simulation);
  enforced.run(offload->assignment);
  Schedule schedule = enforced.schedule();
  if (!schedule.ok()) {
    EXPECT_EQ(schedule.status, SimulationStatus::MemoryDeadlock);
    EXPECT_FALSE(plan.fits);
    simulation.enforceMemoryCapacity = false;
    Simulator free(offload->graph, offload->system, simulation);
    free.run(offload->assignment);
    schedule = free.schedule();
  }
  EXPECT_EQ(schedule.makespan, plan.makespan);
  std::vector<double> peaks = withResident(schedule.peakMemory,
                                           options.residentBytes);
  peaks.resize(numDevices);
  EXPECT_EQ(peaks, plan.peakAfter);
  bool fits = enforced.schedule().ok();
  for (DeviceId d = 0; d < numDevices; ++d)
    fits &= plan.peakAfter[d] <= system.memoryCapacity(d);
  EXPECT_EQ(fits, plan.fits);
  EXPECT_EQ(plan.fits, plan.diagnosis.empty()) << plan.diagnosis;
  for (size_t i = 1; i < plan.evictions.size(); ++i)
    EXPECT_LT(std::pair(plan.evictions[i - 1].value,
                        plan.evictions[i - 1].device),
              std::pair(plan.evictions[i].value, plan.evictions[i].device));
  Simulator unlimited(graph, numDevices);
  EXPECT_EQ(unlimited.run(assignment), plan.unlimitedMakespan);

  std::optional<OffloadSimulation> prediction =
      simulateOffloadPlan(graph, system, assignment, plan, options, &error);
  ASSERT_TRUE(prediction) << error;
  EXPECT_EQ(prediction->fits, plan.fits);
  EXPECT_EQ(prediction->peak, plan.peakAfter);
  EXPECT_EQ(prediction->schedule.makespan, plan.makespan);
  EXPECT_EQ(prediction->schedule.start, schedule.start);
}

/// The largest (inputs + output) working set of a node on each device,
/// plus the graph outputs there (they stay to the end).
inline std::vector<double> tightCapacities(const Graph &graph, int32_t numDevices,
                                    const std::vector<DeviceId> &assignment) {
  std::vector<double> need(numDevices, 0.0), outputs(numDevices, 0.0);
  for (NodeId v = 0; v < graph.numNodes(); ++v) {
    need[assignment[v]] =
        std::max(need[assignment[v]], nodeWorkingSet(graph, v));
    if (graph.outDegree(v) == 0)
      outputs[assignment[v]] += graph.outputBytes(v);
  }
  for (DeviceId d = 0; d < numDevices; ++d)
    need[d] += outputs[d];
  return need;
}

/// Total bytes over capacity, resident included.
inline double overflowOf(const std::vector<double> &peaks, const System &system) {
  double overflow = 0;
  for (DeviceId d = 0; d < system.numDevices(); ++d)
    overflow += std::max(0.0, peaks[d] - system.memoryCapacity(d));
  return overflow;
}

} // namespace doppler::placement::testing

#endif // DOPPLER_UNITTESTS_PLACEMENT_OFFLOADTESTSUPPORT_H
