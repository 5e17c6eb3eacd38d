//===- OffloadTest.cpp - Evicting values to host memory and back ----------===//
//
// buildOffloadGraph against timelines and peaks computed by hand from the
// rules of Offload.h and SimulatorOptions::trackMemory; planOffload on
// memory-tight chains, diamonds and random layered graphs (it must fit
// whenever every node's own inputs and output fit), its diagnoses and its
// determinism.
//
//===----------------------------------------------------------------------===//

#include "Doppler/Placement/Offload.h"

#include "Doppler/Placement/Heuristics.h"
#include "Doppler/Placement/MemoryFit.h"
#include "Doppler/Placement/Simulator.h"
#include "PlacementTestGraphs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

using namespace doppler::placement;
using namespace doppler::placement::testing;

namespace {

OffloadOptions hostLinks(int32_t numDevices, double bandwidth,
                         double latency = 0) {
  OffloadOptions options;
  options.hostLinks.assign(numDevices, HostLink{bandwidth, latency});
  return options;
}

/// Simulates an offload graph with memory tracking.
Schedule simulate(const OffloadGraph &offload) {
  SimulatorOptions options;
  options.trackMemory = true;
  Simulator simulator(offload.graph, offload.system, options);
  simulator.run(offload.assignment);
  EXPECT_TRUE(simulator.schedule().ok());
  return simulator.schedule();
}

/// a -> b -> c -> d and a -> d, unit compute, outputs of 100, 10, 20 and 5
/// bytes, all on device 0.
Graph chainReadTwice() {
  return makeGraph({{1, 0, 100}, {1, 0, 10}, {1, 0, 20}, {1, 0, 5}},
                   {{0, 1}, {1, 2}, {2, 3}, {0, 3}});
}

TEST(OffloadGraph, EvictingTheLongLivedInputLowersThePeak) {
  // Without offload: a 0..1, b 1..2, c 2..3, d 3..4. Live: a over [0,4)
  // (d reads it), b [1,3), c [2,4), d from 3: [2,3) holds 100 + 10 + 20 =
  // 130, the peak.
  Graph graph = chainReadTwice();
  System system = systemWith({kUnlimited});
  std::vector<DeviceId> assignment = {0, 0, 0, 0};
  SimulatorOptions tracking;
  tracking.trackMemory = true;
  Simulator plain(graph, system, tracking);
  EXPECT_EQ(plain.run(assignment), 4);
  EXPECT_EQ(plain.schedule().peakMemory, (std::vector<double>{130}));
  EXPECT_EQ(plain.schedule().peakMemoryTime, (std::vector<double>{2}));

  // Evict a after b (early reader b, late reader d), reload when c ends.
  // Evict and reload take 100 / 100 = 1. a's copy to the host 1..2; the
  // stash runs at 2; c ends at 3, the reload runs then and its copy
  // arrives at 4; d 4..5.
  // Device 0: a [0,2) (b ends and the host copy lands at 2), b [1,3),
  // c [2,5), the reloaded a [3,5), d from 4. [2,3): 30 (a's 100 bytes are
  // gone over the gap); [3,4): 20 + 100 = 120; [4,5): 125, the new peak.
  OffloadOptions options = hostLinks(1, 100);
  std::vector<Eviction> evictions = {{0, 0, 2, {1}, {3}}};
  std::string error;
  std::optional<OffloadGraph> offload =
      buildOffloadGraph(graph, system, assignment, evictions, options, &error);
  ASSERT_TRUE(offload) << error;
  EXPECT_EQ(offload->graph.numNodes(), 6);
  EXPECT_EQ(offload->stashNode, (std::vector<NodeId>{4}));
  EXPECT_EQ(offload->reloadNode, (std::vector<NodeId>{5}));
  EXPECT_EQ(offload->assignment, (std::vector<DeviceId>{0, 0, 0, 0, 1, 1}));
  EXPECT_EQ(offload->system.numDevices(), 2);
  EXPECT_TRUE(std::isinf(offload->system.memoryCapacity(1)));

  Schedule schedule = simulate(*offload);
  EXPECT_EQ(schedule.makespan, 5);
  EXPECT_EQ(schedule.start[3], 4);
  EXPECT_EQ(schedule.end[2], 3);
  EXPECT_EQ(schedule.start[5], 3); // the reload waits for its trigger
  // The host holds a's 100 bytes from 1 (copy under way) to 4.
  EXPECT_EQ(schedule.peakMemory, (std::vector<double>{125, 100}));
  EXPECT_EQ(schedule.peakMemoryTime[0], 4);

  // The buffer intervals agree with the simulator: the live bytes at each
  // device's peak instant are its peak, and over the gap a is gone.
  std::vector<BufferInterval> buffers =
      bufferIntervals(offload->graph, offload->assignment, schedule);
  auto liveOn = [&](DeviceId d, double time) {
    double bytes = 0;
    for (const BufferInterval &buffer : buffers)
      if (buffer.device == d && buffer.liveAt(time))
        bytes += buffer.bytes;
    return bytes;
  };
  EXPECT_EQ(liveOn(0, 2), 30);
  EXPECT_EQ(liveOn(0, 3), 120);
  EXPECT_EQ(liveOn(0, 4), 125);
  EXPECT_EQ(liveOn(1, 3), 100);
}

/// a (device 0) -> b -> c -> d and a -> d, b, c, d on device 1; unit
/// compute, outputs of 100, 10, 20 and 5 bytes; a's transfer takes 1.
Graph receivedTwice() {
  return makeGraph({{1, 1, 100}, {1, 0, 10}, {1, 0, 20}, {1, 0, 5}},
                   {{0, 1}, {1, 2}, {2, 3}, {0, 3}});
}

TEST(OffloadGraph, EvictingAReceivedCopyLowersThePeak) {
  // Without offload: a 0..1 on device 0; its copy reaches device 1 at 2;
  // b 2..3, c 3..4, d 4..5. Device 1: a's copy [1,5), b [2,4), c [3,5):
  // [3,4) holds 130.
  Graph graph = receivedTwice();
  std::vector<DeviceId> assignment = {0, 1, 1, 1};
  System system = systemWith({kUnlimited, kUnlimited});
  SimulatorOptions tracking;
  tracking.trackMemory = true;
  Simulator plain(graph, system, tracking);
  EXPECT_EQ(plain.run(assignment), 5);
  EXPECT_EQ(plain.schedule().peakMemory, (std::vector<double>{100, 130}));

  // Evict the copy on device 1 after b, reload when c ends (1 each way).
  // The copy lives [1,3) (b its only early reader); the host copy leaves a
  // at 1 and lands at 2; c ends at 4, the reload arrives at 5: d 5..6.
  // Device 1: [2,3) 110, [3,4) 30, [4,5) c + the reload = 120, [5,6) 125.
  OffloadOptions options = hostLinks(2, 100);
  std::string error;
  std::optional<OffloadGraph> offload = buildOffloadGraph(
      graph, system, assignment, {{0, 1, 2, {1}, {3}}}, options, &error);
  ASSERT_TRUE(offload) << error;
  EXPECT_EQ(offload->assignment,
            (std::vector<DeviceId>{0, 1, 1, 1, 2, 2}));
  Schedule schedule = simulate(*offload);
  EXPECT_EQ(schedule.makespan, 6);
  EXPECT_EQ(schedule.start[3], 5);
  EXPECT_EQ(schedule.peakMemory, (std::vector<double>{100, 125, 100}));
  EXPECT_EQ(schedule.peakMemoryTime[1], 5);

  // Each device's copy is evicted once.
  EXPECT_FALSE(buildOffloadGraph(graph, system, assignment,
                                 {{0, 1, 2, {1}, {3}}, {0, 1, 1, {}, {3}}},
                                 options, &error));
  EXPECT_EQ(error, "eviction 1: value 0 is evicted twice");
}

TEST(OffloadGraph, AnEarlyTriggerGainsNothing) {
  // Trigger b (ends at 2): the reload starts at 2, as soon as the stash
  // lands, so a's reloaded copy is back over the gap: [2,3) holds b, c
  // and the copy = 130 again.
  Graph graph = chainReadTwice();
  std::vector<DeviceId> assignment = {0, 0, 0, 0};
  std::optional<OffloadGraph> offload =
      buildOffloadGraph(graph, systemWith({kUnlimited}), assignment,
                        {{0, 0, 1, {1}, {3}}}, hostLinks(1, 100));
  ASSERT_TRUE(offload);
  Schedule schedule = simulate(*offload);
  EXPECT_EQ(schedule.peakMemory[0], 130);
  EXPECT_EQ(schedule.makespan, 4); // the copy is back at 3, when d is ready
}

TEST(OffloadGraph, RejectsEvictionsTheIrCannotExpress) {
  Graph graph = chainReadTwice();
  System system = systemWith({kUnlimited, kUnlimited});
  std::vector<DeviceId> assignment = {0, 0, 0, 0};
  OffloadOptions options = hostLinks(2, 100);
  auto error = [&](Eviction eviction) {
    std::string why;
    EXPECT_FALSE(buildOffloadGraph(graph, system, assignment, {eviction},
                                   options, &why));
    return why;
  };
  EXPECT_EQ(error({0, 0, 2, {1}, {}}), "eviction 0: no late readers");
  EXPECT_EQ(error({0, 0, 0, {1}, {3}}),
            "eviction 0: the trigger is the evicted value itself");
  EXPECT_EQ(error({0, 0, 3, {1}, {3}}),
            "eviction 0: trigger 3 does not come before late reader 3");
  EXPECT_EQ(error({0, 1, 2, {1}, {3}}),
            "eviction 0: value 0 is on device 0 and has no reader on device "
            "1");
  EXPECT_EQ(error({0, 2, 2, {1}, {3}}),
            "eviction 0: device 2 out of range [0, 2)");
  EXPECT_EQ(error({0, 0, 2, {3}, {1}}),
            "eviction 0: early reader 3 comes after late reader 1");
  EXPECT_EQ(error({0, 0, 2, {}, {3}}),
            "eviction 0: early and late readers are not exactly the readers "
            "of node 0 on device 0");
  EXPECT_EQ(error({9, 0, 2, {1}, {3}}), "eviction 0: value 9 is not a node");
  std::string why;
  EXPECT_FALSE(buildOffloadGraph(graph, system, assignment,
                                 {{0, 0, 2, {1}, {3}}, {0, 0, 2, {1}, {3}}},
                                 options, &why));
  EXPECT_EQ(why, "eviction 1: value 0 is evicted twice");
  OffloadOptions noLinks;
  EXPECT_FALSE(
      buildOffloadGraph(graph, system, assignment, {}, noLinks, &why));
  EXPECT_EQ(why, "expected 2 host links, got 0");
  std::vector<DeviceId> other = {0, 1, 0, 0};
  EXPECT_FALSE(buildOffloadGraph(graph, system, other, {{0, 0, 2, {1}, {3}}},
                                 options, &why));
  // b on device 1 is no reader on device 0.
  EXPECT_EQ(why, "eviction 0: early and late readers are not exactly the "
                 "readers of node 0 on device 0");
  other = {0, 0, 1, 0};
  EXPECT_FALSE(buildOffloadGraph(graph, system, other, {{0, 0, 2, {1}, {3}}},
                                 options, &why));
  EXPECT_EQ(why, "eviction 0: trigger 2 is on device 1, not 0");
}

std::vector<double> withResident(std::vector<double> peaks,
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
void expectPlanConsistent(const Graph &graph, const System &system,
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

TEST(PlanOffload, EvictsTheChainsLongLivedInput) {
  // The chain above with a 125-byte device: the planner finds the eviction
  // computed by hand (the later trigger; the earlier one gains nothing).
  Graph graph = chainReadTwice();
  System system = systemWith({125});
  std::vector<DeviceId> assignment = {0, 0, 0, 0};
  OffloadOptions options = hostLinks(1, 100);
  std::string error;
  std::optional<OffloadPlan> plan =
      planOffload(graph, system, assignment, options, &error);
  ASSERT_TRUE(plan) << error;
  EXPECT_TRUE(plan->fits) << plan->diagnosis;
  ASSERT_EQ(plan->evictions.size(), 1u);
  EXPECT_TRUE(plan->evictions[0] == (Eviction{0, 0, 2, {1}, {3}}));
  EXPECT_EQ(plan->makespan, 5);
  EXPECT_EQ(plan->unlimitedMakespan, 4);
  EXPECT_EQ(plan->peakBefore, (std::vector<double>{130}));
  EXPECT_EQ(plan->peakAfter, (std::vector<double>{125}));
  EXPECT_EQ(plan->hostPeak, 100);
  expectPlanConsistent(graph, system, assignment, options, *plan);

  // 10 bytes resident: 125 + 10 > 130, and d alone needs 125.
  options.residentBytes = {10};
  plan = planOffload(graph, systemWith({130}), assignment, options, &error);
  ASSERT_TRUE(plan) << error;
  EXPECT_FALSE(plan->fits);
  EXPECT_TRUE(plan->evictions.empty());
  EXPECT_EQ(plan->peakBefore, (std::vector<double>{140}));
  EXPECT_EQ(plan->diagnosis, "node 3 needs 125 B at once (inputs and "
                             "output) but device 0 holds 120 B beside 10 B "
                             "resident");
}

TEST(PlanOffload, NothingToDoWithoutALimitExceeded) {
  Graph graph = chainReadTwice();
  std::vector<DeviceId> assignment = {0, 0, 0, 0};
  for (double capacity : {kUnlimited, 130.0}) {
    std::optional<OffloadPlan> plan = planOffload(
        graph, systemWith({capacity}), assignment, hostLinks(1, 100));
    ASSERT_TRUE(plan);
    EXPECT_TRUE(plan->fits);
    EXPECT_TRUE(plan->evictions.empty());
    EXPECT_EQ(plan->makespan, 4);
    EXPECT_EQ(plan->unlimitedMakespan, 4);
    EXPECT_EQ(plan->peakBefore, plan->peakAfter);
    EXPECT_EQ(plan->hostPeak, 0);
    EXPECT_TRUE(plan->diagnosis.empty());
  }
}

TEST(PlanOffload, BelowOneNodesOwnNeedItSaysSo) {
  Graph graph = chainReadTwice();
  std::vector<DeviceId> assignment = {0, 0, 0, 0};
  std::optional<OffloadPlan> plan = planOffload(
      graph, systemWith({124}), assignment, hostLinks(1, 100));
  ASSERT_TRUE(plan);
  EXPECT_FALSE(plan->fits);
  EXPECT_EQ(plan->diagnosis, "node 3 needs 125 B at once (inputs and "
                             "output) but device 0 holds 124 B");
}

TEST(PlanOffload, EdgeCases) {
  // An empty graph fits anywhere.
  Graph empty = makeGraph({}, {});
  std::optional<OffloadPlan> plan =
      planOffload(empty, systemWith({0}), std::vector<DeviceId>{},
                  hostLinks(1, 1));
  ASSERT_TRUE(plan);
  EXPECT_TRUE(plan->fits);
  EXPECT_EQ(plan->makespan, 0);
  // More resident than the device holds.
  Graph graph = chainReadTwice();
  OffloadOptions options = hostLinks(1, 100);
  options.residentBytes = {200};
  plan = planOffload(graph, systemWith({150}),
                     std::vector<DeviceId>{0, 0, 0, 0}, options);
  ASSERT_TRUE(plan);
  EXPECT_FALSE(plan->fits);
  EXPECT_EQ(plan->diagnosis,
            "device 0 holds 150 B but 200 B are resident there");
  // A device without a limit next to a tight one: only the tight one's
  // values are evicted.
  std::optional<OffloadPlan> mixed =
      planOffload(graph, systemWith({kUnlimited, 125}),
                  std::vector<DeviceId>{1, 1, 1, 1}, hostLinks(2, 100));
  ASSERT_TRUE(mixed);
  EXPECT_TRUE(mixed->fits) << mixed->diagnosis;
  ASSERT_EQ(mixed->evictions.size(), 1u);
  EXPECT_EQ(mixed->evictions[0].device, 1);
}

TEST(PlanOffload, RejectsBadOptions) {
  Graph graph = chainReadTwice();
  std::vector<DeviceId> assignment = {0, 0, 0, 0};
  std::string error;
  EXPECT_FALSE(planOffload(graph, systemWith({100}), assignment,
                           hostLinks(1, 0), &error));
  EXPECT_EQ(error, "device 0: host link bandwidth 0 is not positive");
  EXPECT_FALSE(planOffload(graph, systemWith({100}), assignment,
                           hostLinks(1, 1, -1), &error));
  EXPECT_EQ(error,
            "device 0: host link latency -1 is negative or not a finite "
            "number");
  GraphBuilder builder;
  builder.addNode(1, 1);
  Graph noBytes = *builder.build();
  EXPECT_FALSE(planOffload(noBytes, systemWith({100}),
                           std::vector<DeviceId>{0}, hostLinks(1, 1), &error));
  EXPECT_EQ(error, "offload planning needs the output size of every node, "
                   "and the graph has none");
}

/// The largest (inputs + output) working set of a node on each device,
/// plus the graph outputs there (they stay to the end).
std::vector<double> tightCapacities(const Graph &graph, int32_t numDevices,
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

TEST(PlanOffload, FitsAUNetLikeChain) {
  // x0 -> x1 -> ... -> x9, and x(i) -> x(9-i): skip connections keep the
  // early outputs live while the middle runs. 100 bytes each but the sink
  // (1 byte); unit compute.
  std::vector<NodeSpec> nodes(10, NodeSpec{1, 1, 100});
  nodes[9].bytes = 1;
  std::vector<std::pair<NodeId, NodeId>> edges;
  for (NodeId i = 0; i + 1 < 10; ++i)
    edges.emplace_back(i, i + 1);
  for (NodeId i = 0; i < 4; ++i)
    edges.emplace_back(i, 9 - i);
  Graph graph = makeGraph(nodes, edges);
  std::vector<DeviceId> assignment(10, 0);
  std::vector<double> capacity = tightCapacities(graph, 1, assignment);
  EXPECT_EQ(capacity[0], 301); // x6 reads x5 and x3
  OffloadOptions options = hostLinks(1, 100);
  std::optional<OffloadPlan> plan =
      planOffload(graph, systemWith(capacity), assignment, options);
  ASSERT_TRUE(plan);
  EXPECT_GT(plan->peakBefore[0], capacity[0]);
  EXPECT_TRUE(plan->fits) << plan->diagnosis;
  EXPECT_FALSE(plan->evictions.empty());
  EXPECT_GE(plan->makespan, plan->unlimitedMakespan);
  EXPECT_GT(plan->hostPeak, 0);
  expectPlanConsistent(graph, systemWith(capacity), assignment, options,
                       *plan);
}

TEST(PlanOffload, StaysWithinItsBudgets) {
  // The chain above: every evaluation budget and eviction limit is kept,
  // and the plan is always its own prediction.
  std::vector<NodeSpec> nodes(10, NodeSpec{1, 1, 100});
  nodes[9].bytes = 1;
  std::vector<std::pair<NodeId, NodeId>> edges;
  for (NodeId i = 0; i + 1 < 10; ++i)
    edges.emplace_back(i, i + 1);
  for (NodeId i = 0; i < 4; ++i)
    edges.emplace_back(i, 9 - i);
  Graph graph = makeGraph(nodes, edges);
  std::vector<DeviceId> assignment(10, 0);
  System system = systemWith(tightCapacities(graph, 1, assignment));
  for (int64_t budget = 1; budget <= 40; ++budget) {
    OffloadOptions options = hostLinks(1, 100);
    options.maxEvaluations = budget;
    std::optional<OffloadPlan> plan =
        planOffload(graph, system, assignment, options);
    ASSERT_TRUE(plan);
    EXPECT_LE(plan->evaluations, budget);
    expectPlanConsistent(graph, system, assignment, options, *plan);
  }
  for (int64_t limit = 0; limit <= 3; ++limit) {
    OffloadOptions options = hostLinks(1, 100);
    options.maxEvictions = limit;
    std::optional<OffloadPlan> plan =
        planOffload(graph, system, assignment, options);
    ASSERT_TRUE(plan);
    EXPECT_LE(static_cast<int64_t>(plan->evictions.size()), limit);
    expectPlanConsistent(graph, system, assignment, options, *plan);
  }
  std::string error;
  OffloadOptions options = hostLinks(1, 100);
  options.maxEvaluations = 0;
  EXPECT_FALSE(planOffload(graph, system, assignment, options, &error));
  EXPECT_EQ(error, "offload planning needs an evaluation budget of at least "
                   "1, got 0");
}

TEST(PlanOffload, FitsADiamondWithAHeavySide) {
  // A stretched diamond: a (400 bytes) -> b (100) -> e (200) -> f (200) ->
  // c (50) -> d (1), with a -> c and b -> d across. The big input a waits
  // for c while the long side runs; b waits for d. Ids are in IR (topological)
  // order: a 0, b 1, e 2, f 3, c 4, d 5.
  Graph graph = makeGraph({{1, 1, 400},
                           {1, 1, 100},
                           {1, 1, 200},
                           {1, 1, 200},
                           {1, 1, 50},
                           {1, 1, 1}},
                          {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {0, 4},
                           {1, 5}});
  std::vector<DeviceId> assignment(6, 0);
  std::vector<double> capacity = tightCapacities(graph, 1, assignment);
  EXPECT_EQ(capacity[0], 651); // c reads a and f: 400 + 200 + 50, and d
  // a must be gone when e runs (b, e: 300 bytes): its host copy must be
  // made between a's end (1) and e's start (2), so at 400 bytes a unit.
  OffloadOptions options = hostLinks(1, 400);
  std::optional<OffloadPlan> plan =
      planOffload(graph, systemWith(capacity), assignment, options);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->peakBefore[0], 900); // a, b, e and f while f runs
  EXPECT_TRUE(plan->fits) << plan->diagnosis;
  EXPECT_GE(plan->makespan, plan->unlimitedMakespan);
  expectPlanConsistent(graph, systemWith(capacity), assignment, options,
                       *plan);
}

/// Total bytes over capacity, resident included.
double overflowOf(const std::vector<double> &peaks, const System &system) {
  double overflow = 0;
  for (DeviceId d = 0; d < system.numDevices(); ++d)
    overflow += std::max(0.0, peaks[d] - system.memoryCapacity(d));
  return overflow;
}

/// A random chain x0 -> x1 -> ... with long skip connections x(i) ->
/// x(j), j > i + 1 (a U-Net-like layered graph, one node per layer): the
/// skips keep early outputs live across the middle. The last node, the
/// only graph output, has 1 byte.
Graph randomSkipChain(uint64_t seed) {
  SeededRandom random(seed);
  const int32_t length = 8 + static_cast<int32_t>(random.below(33));
  GraphBuilder builder;
  for (NodeId i = 0; i < length; ++i) {
    builder.addNode(1 + random.below(10), 1 + random.below(5));
    builder.setOutputBytes(i, i + 1 == length ? 1 : 10 + random.below(91));
    if (i > 0)
      builder.addEdge(i - 1, i);
  }
  const int32_t skips = 1 + static_cast<int32_t>(random.below(length / 2));
  for (int32_t k = 0; k < skips; ++k) {
    NodeId from = static_cast<NodeId>(random.below(length - 2));
    NodeId to = from + 2 +
                static_cast<NodeId>(random.below(length - from - 2));
    builder.addEdge(from, to);
  }
  std::optional<Graph> graph = builder.build();
  EXPECT_TRUE(graph);
  return graph ? *graph : Graph();
}

TEST(PlanOffload, FitsRandomSkipChains) {
  // 200 random skip chains on one device whose capacity is exactly the
  // largest working set of one node plus the graph output, with a slow
  // host link (50 bytes per unit, latency 1) and a fast one. The planner
  // must fit most of them (what it misses needs one value reloaded twice,
  // which the model does not allow, or, on the slow link, a host copy made
  // faster) and never make things worse.
  for (HostLink link : {HostLink{50, 1}, HostLink{1e6, 0}}) {
    int tight = 0, fitted = 0, evictions = 0;
    double slowdown = 0;
    for (uint64_t seed = 0; seed < 200; ++seed) {
      Graph graph = randomSkipChain(3000 + seed);
      std::vector<DeviceId> assignment(graph.numNodes(), 0);
      System system = systemWith(tightCapacities(graph, 1, assignment));
      OffloadOptions options;
      options.hostLinks = {link};
      std::string error;
      std::optional<OffloadPlan> plan =
          planOffload(graph, system, assignment, options, &error);
      ASSERT_TRUE(plan) << error;
      expectPlanConsistent(graph, system, assignment, options, *plan);
      EXPECT_LE(overflowOf(plan->peakAfter, system),
                overflowOf(plan->peakBefore, system));
      EXPECT_GE(plan->makespan, plan->unlimitedMakespan);
      if (plan->peakBefore[0] <= system.memoryCapacity(0)) {
        EXPECT_TRUE(plan->evictions.empty());
        continue;
      }
      ++tight;
      fitted += plan->fits;
      evictions += static_cast<int>(plan->evictions.size());
      slowdown += plan->makespan / plan->unlimitedMakespan;
    }
    std::printf("[ offload  ] skip chains, host link %g B/unit + %g: %d "
                "over capacity, %d fitted with %d evictions, makespan "
                "ratio %.3f on average\n",
                link.bandwidth, link.latency, tight, fitted, evictions,
                tight ? slowdown / tight : 1.0);
    EXPECT_GT(tight, 150); // the set is memory-tight
    // A slow link leaves less room: a value's host copy takes time to make.
    EXPECT_GE(fitted, tight * (link.latency == 0 ? 9 : 8) / 10);
  }
}

TEST(PlanOffload, LowersTheOverflowOfRandomLayeredGraphs) {
  // Random layered graphs (up to 5 nodes a layer) on one device and on two
  // (round-robin), capacity = the largest working set of one node there
  // plus the graph outputs there. Here the model often cannot fit: a
  // reader queued in its device's FIFO holds its inputs however long it
  // waits, and a received copy cannot be evicted. So: every plan is its
  // own prediction, never raises the overflow, lowers it on most graphs;
  // the counts are printed.
  LayeredGraphShape shape;
  shape.minLayers = 4;
  shape.maxLayers = 10;
  shape.maxWidth = 5;
  shape.sinkBytes = 1;
  for (auto [numDevices, received] :
       {std::pair{1, false}, std::pair{2, false}, std::pair{2, true}}) {
    int tight = 0, lowered = 0, fitted = 0, evictions = 0;
    double before = 0, after = 0;
    for (uint64_t seed = 0; seed < 100; ++seed) {
      Graph graph = randomLayeredGraph(1000 + seed, shape);
      std::vector<DeviceId> assignment = placeRoundRobin(graph, numDevices);
      System system =
          systemWith(tightCapacities(graph, numDevices, assignment));
      OffloadOptions options = hostLinks(numDevices, 50, 1);
      options.evictReceivedCopies = received;
      std::string error;
      std::optional<OffloadPlan> plan =
          planOffload(graph, system, assignment, options, &error);
      ASSERT_TRUE(plan) << error;
      expectPlanConsistent(graph, system, assignment, options, *plan);
      const double overBefore = overflowOf(plan->peakBefore, system);
      const double overAfter = overflowOf(plan->peakAfter, system);
      EXPECT_LE(overAfter, overBefore);
      if (numDevices == 1) {
        EXPECT_GE(plan->makespan, plan->unlimitedMakespan);
      }
      if (overBefore == 0)
        continue;
      ++tight;
      lowered += overAfter < overBefore;
      fitted += plan->fits;
      evictions += static_cast<int>(plan->evictions.size());
      before += overBefore;
      after += overAfter;
    }
    std::printf("[ offload  ] layered graphs on %d device(s)%s: %d over "
                "capacity, overflow lowered on %d (total %g -> %g bytes), "
                "%d fitted, %d evictions\n",
                numDevices, received ? ", received copies evicted" : "",
                tight, lowered, before, after, fitted,
                evictions);
    EXPECT_GT(tight, 80);
    // On two devices most of the peak is received copies.
    EXPECT_GT(lowered, numDevices == 1 ? tight * 3 / 4 : tight / 4);
  }
}

TEST(PlanOffload, FitsTheSharedGraphsInFourFifthsOfTheirPeak) {
  // The reference graphs with output bytes of 1000 x m(v), all on one
  // device whose capacity is 80% of the peak without offload; the host link
  // moves a tenth of that capacity per cost unit.
  for (const char *name : kSharedGraphs) {
    std::optional<Graph> reference = sharedGraph(name);
    ASSERT_TRUE(reference);
    GraphBuilder builder;
    for (NodeId v = 0; v < reference->numNodes(); ++v) {
      builder.addNode(reference->computeCost(v), reference->transferCost(v));
      builder.setOutputBytes(v, 1000 * reference->transferCost(v));
    }
    for (int32_t e = 0; e < reference->numEdges(); ++e)
      builder.addEdge(reference->edgeSource(e), reference->edgeTarget(e),
                      reference->edgeCost(e));
    Graph graph = *builder.build();
    std::vector<DeviceId> assignment(graph.numNodes(), 0);
    SimulatorOptions tracking;
    tracking.trackMemory = true;
    Simulator simulator(graph, System::uniform(1), tracking);
    simulator.run(assignment);
    const double capacity = 0.8 * simulator.schedule().peakMemory[0];
    System system = systemWith({capacity});
    OffloadOptions options = hostLinks(1, capacity / 10, 1);
    std::optional<OffloadPlan> plan =
        planOffload(graph, system, assignment, options);
    ASSERT_TRUE(plan);
    EXPECT_TRUE(plan->fits) << name << ": " << plan->diagnosis;
    // Readiness order without a limit does not fit; with the capacity
    // enforced (nodes that do not fit wait), an order or evictions may not
    // be needed.
    EXPECT_EQ(plan->evictions.empty(), plan->hostPeak == 0) << name;
    EXPECT_GE(plan->makespan, plan->unlimitedMakespan) << name;
    expectPlanConsistent(graph, system, assignment, options, *plan);
    std::printf("[ offload  ] %s on one device at 80%% of its peak: "
                "%s, %zu evictions, host peak %s, makespan x%.4f\n",
                name, plan->priority.empty() ? "readiness order" : "an order",
                plan->evictions.size(),
                formatBytes(plan->hostPeak).c_str(),
                plan->makespan / plan->unlimitedMakespan);
  }
}

/// s -> a_i (100 bytes) -> b_i (100 bytes) -> c_i (1 byte) -> t for i <
/// k, unit compute; s and t 1 byte. Chain i on device i % numDevices, s
/// and t on device 0.
struct ParallelChains {
  Graph graph;
  std::vector<DeviceId> assignment;
};
ParallelChains parallelChains(int32_t k, int32_t numDevices) {
  std::vector<NodeSpec> nodes = {{1, 1, 1}};
  std::vector<std::pair<NodeId, NodeId>> edges;
  std::vector<DeviceId> assignment = {0};
  const NodeId sink = 1 + 3 * k;
  for (int32_t i = 0; i < k; ++i) {
    const NodeId a = 1 + 3 * i;
    nodes.push_back({1, 1, 100});
    nodes.push_back({1, 1, 100});
    nodes.push_back({1, 1, 1});
    edges.insert(edges.end(), {{0, a}, {a, a + 1}, {a + 1, a + 2},
                               {a + 2, sink}});
    assignment.insert(assignment.end(), 3, i % numDevices);
  }
  nodes.push_back({1, 1, 1});
  assignment.push_back(0);
  return {makeGraph(nodes, edges), assignment};
}

TEST(PlanOffload, ParallelChainsFitThroughOrderAlone) {
  // Readiness order starts every chain's a_i before any b_i: k big values
  // at once. With room for about two big values per device, waiting for
  // memory alone deadlocks (the a_i that started hold the memory their b_i
  // need); a depth-first order runs one chain after the other and fits
  // with no eviction.
  for (int32_t numDevices : {1, 2}) {
    SCOPED_TRACE(std::to_string(numDevices) + " device(s)");
    ParallelChains chains = parallelChains(6, numDevices);
    System system = systemWith(std::vector<double>(numDevices, 250));
    OffloadOptions options = hostLinks(numDevices, 10, 1);
    std::string error;
    std::optional<OffloadPlan> plan =
        planOffload(chains.graph, system, chains.assignment, options, &error);
    ASSERT_TRUE(plan) << error;
    EXPECT_GT(overflowOf(plan->peakBefore, system), 0);
    EXPECT_TRUE(plan->fits) << plan->diagnosis;
    EXPECT_TRUE(plan->evictions.empty());
    ASSERT_EQ(plan->priority.size(),
              static_cast<size_t>(chains.graph.numNodes()));
    for (DeviceId d = 0; d < numDevices; ++d)
      EXPECT_LE(plan->peakAfter[d], 250);
    expectPlanConsistent(chains.graph, system, chains.assignment, options,
                         *plan);
    // One chain's b_i starts before the next chain's a_i on each device.
    for (int32_t i = 0; i + numDevices < 6; ++i)
      EXPECT_LT(plan->priority[2 + 3 * i],
                plan->priority[1 + 3 * (i + numDevices)])
          << "chain " << i;
    // The same plan in readiness order deadlocks.
    OffloadPlan readiness = *plan;
    readiness.priority.clear();
    std::optional<OffloadSimulation> simulation = simulateOffloadPlan(
        chains.graph, system, chains.assignment, readiness, options, &error);
    ASSERT_TRUE(simulation) << error;
    EXPECT_FALSE(simulation->fits);
    EXPECT_NE(simulation->deadlock.find("memory deadlock"), std::string::npos)
        << simulation->deadlock;
  }
}

TEST(PlanOffload, ParallelChainsWithoutWaitingOrReordering) {
  // The chains above on one device. A runtime that fails when memory runs
  // out (waitForMemory false) can still follow the depth-first order: it
  // fits with no eviction. In readiness order as well (chooseOrder false),
  // the planner can only evict, and over this slow host link the a_i
  // cannot leave in time.
  ParallelChains chains = parallelChains(6, 1);
  System system = systemWith({250});
  OffloadOptions options = hostLinks(1, 10, 1);
  options.waitForMemory = false;
  std::string error;
  std::optional<OffloadPlan> ordered =
      planOffload(chains.graph, system, chains.assignment, options, &error);
  ASSERT_TRUE(ordered) << error;
  EXPECT_TRUE(ordered->fits) << ordered->diagnosis;
  EXPECT_TRUE(ordered->evictions.empty());
  EXPECT_FALSE(ordered->priority.empty());
  expectPlanConsistent(chains.graph, system, chains.assignment, options,
                       *ordered);

  options.chooseOrder = false;
  std::optional<OffloadPlan> readiness =
      planOffload(chains.graph, system, chains.assignment, options, &error);
  ASSERT_TRUE(readiness) << error;
  EXPECT_TRUE(readiness->priority.empty());
  EXPECT_FALSE(readiness->evictions.empty());
  EXPECT_LE(overflowOf(readiness->peakAfter, system),
            overflowOf(readiness->peakBefore, system));
  expectPlanConsistent(chains.graph, system, chains.assignment, options,
                       *readiness);
  std::printf("[ offload  ] 6 parallel chains, readiness order, no waiting: "
              "%s with %zu evictions, makespan %g (ordered: %g)\n",
              readiness->fits ? "fits" : "no fit",
              readiness->evictions.size(), readiness->makespan,
              ordered->makespan);
}

TEST(PlanOffload, SimulateOffloadPlanChecksItsInputs) {
  ParallelChains chains = parallelChains(2, 1);
  System system = systemWith({1000});
  OffloadOptions options = hostLinks(1, 10);
  OffloadPlan plan;
  plan.priority = {1, 2};
  std::string error;
  EXPECT_FALSE(simulateOffloadPlan(chains.graph, system, chains.assignment,
                                   plan, options, &error));
  EXPECT_EQ(error, "expected 8 priorities (one per node), got 2");
  plan.priority.clear();
  plan.evictions = {{1, 0, 0, {}, {2}}};
  plan.evictions[0].trigger = 1;
  EXPECT_FALSE(simulateOffloadPlan(chains.graph, system, chains.assignment,
                                   plan, options, &error));
  EXPECT_EQ(error, "eviction 0: the trigger is the evicted value itself");
  plan.evictions.clear();
  std::optional<OffloadSimulation> simulation = simulateOffloadPlan(
      chains.graph, system, chains.assignment, plan, options, &error);
  ASSERT_TRUE(simulation) << error;
  EXPECT_TRUE(simulation->fits);
  EXPECT_TRUE(simulation->deadlock.empty());
  // s, a_0, a_1, b_0, b_1, c_0, c_1, t: one at a time in readiness order.
  EXPECT_EQ(simulation->schedule.makespan, 8);
}

TEST(PlanOffload, EvictsAReceivedCopyWhenAllowed) {
  // The graph above with 125 bytes on device 1: no order helps (one chain)
  // and a's only eviction is of its received copy.
  Graph graph = receivedTwice();
  std::vector<DeviceId> assignment = {0, 1, 1, 1};
  System system = systemWith({kUnlimited, 125});
  OffloadOptions options = hostLinks(2, 100);
  std::string error;
  std::optional<OffloadPlan> plan =
      planOffload(graph, system, assignment, options, &error);
  ASSERT_TRUE(plan) << error;
  EXPECT_FALSE(plan->fits);
  EXPECT_TRUE(plan->evictions.empty());
  EXPECT_NE(plan->diagnosis.find("a received copy"), std::string::npos)
      << plan->diagnosis;
  expectPlanConsistent(graph, system, assignment, options, *plan);

  options.evictReceivedCopies = true;
  plan = planOffload(graph, system, assignment, options, &error);
  ASSERT_TRUE(plan) << error;
  EXPECT_TRUE(plan->fits) << plan->diagnosis;
  ASSERT_EQ(plan->evictions.size(), 1u);
  EXPECT_TRUE(plan->evictions[0] == (Eviction{0, 1, 2, {1}, {3}}));
  EXPECT_EQ(plan->makespan, 6);
  EXPECT_EQ(plan->peakAfter, (std::vector<double>{100, 125}));
  expectPlanConsistent(graph, system, assignment, options, *plan);
}

TEST(PlanOffload, SameInputsSamePlan) {
  LayeredGraphShape shape;
  shape.sinkBytes = 1;
  Graph graph = randomLayeredGraph(77, shape);
  std::vector<DeviceId> assignment = placeRoundRobin(graph, 2);
  System system = systemWith(tightCapacities(graph, 2, assignment));
  OffloadOptions options = hostLinks(2, 50, 1);
  std::optional<OffloadPlan> first =
      planOffload(graph, system, assignment, options);
  std::optional<OffloadPlan> second =
      planOffload(graph, system, assignment, options);
  ASSERT_TRUE(first && second);
  EXPECT_TRUE(first->evictions == second->evictions);
  EXPECT_EQ(first->priority, second->priority);
  EXPECT_EQ(first->makespan, second->makespan);
  EXPECT_EQ(first->peakAfter, second->peakAfter);
  EXPECT_EQ(first->hostPeak, second->hostPeak);
}

} // namespace
