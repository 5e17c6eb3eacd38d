//===- SimulatorMemoryTest.cpp - The simulator's memory accounting --------===//
//
// Peaks per device against figures computed by hand from the rules of
// SimulatorOptions::trackMemory (outputs live from their op's start, received
// copies from their transfer's start, both until their last reader on that
// device; graph outputs to the end; frees first at equal times), and a
// property test against an independent sweep over the recorded schedule.
//
//===----------------------------------------------------------------------===//

#include "Doppler/Placement/PlacementReport.h"
#include "Doppler/Placement/Simulator.h"
#include "PlacementTestGraphs.h"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <limits>
#include <map>
#include <random>

using namespace doppler::placement;
using namespace doppler::placement::testing;

namespace {

SimulatorOptions memoryOptions(bool linkContention = false) {
  SimulatorOptions options;
  options.trackMemory = true;
  options.linkContention = linkContention;
  return options;
}

std::vector<double> peaks(const Graph &graph, int32_t numDevices,
                          const std::vector<DeviceId> &assignment,
                          SimulatorOptions options = memoryOptions()) {
  Simulator simulator(graph, System::uniform(numDevices), options);
  simulator.run(assignment);
  EXPECT_TRUE(simulator.schedule().ok());
  return simulator.schedule().peakMemory;
}

TEST(SimulatorMemory, ChainOnOneDeviceHoldsTwoTensors) {
  // A(10) -> B(20) -> C(40) -> D(5), unit compute. Live: [0,1) A = 10,
  // [1,2) A+B = 30, [2,3) B+C = 60 (A is freed at 2 as C starts: frees
  // first), [3,4) C+D = 45, then D (a graph output) = 5.
  Graph graph = makeGraph({{1, 0, 10}, {1, 0, 20}, {1, 0, 40}, {1, 0, 5}},
                          {{0, 1}, {1, 2}, {2, 3}});
  EXPECT_EQ(peaks(graph, 1, {0, 0, 0, 0}), (std::vector<double>{60}));
  // The peak is first reached at 2.
  Simulator simulator(graph, System::uniform(1), memoryOptions());
  simulator.run(std::vector<DeviceId>{0, 0, 0, 0});
  EXPECT_EQ(simulator.schedule().peakMemoryTime, (std::vector<double>{2}));
}

TEST(SimulatorMemory, ReceivedCopyLivesUntilItsLastReaderThere) {
  // A (device 0, 100 bytes, sends in 2) feeds B on device 0 and C, D on
  // device 1; C feeds D. A 0..1, B 1..2; A's copy leaves at 1 and arrives
  // at 3; C 3..6, D 6..7.
  // Device 0: A over [0,3) (until its transfer arrives, after B's end at 2),
  // B (1 byte, an output) from 1: peak 101.
  // Device 1: A's copy over [1,7) (D is its last reader there), C over
  // [3,7), D from 6: [6,7) holds 100 + 10 + 5 = 115.
  Graph graph = makeGraph({{1, 2, 100}, {1, 0, 1}, {3, 0, 10}, {1, 0, 5}},
                          {{0, 1}, {0, 2}, {0, 3}, {2, 3}});
  EXPECT_EQ(peaks(graph, 2, {0, 0, 1, 1}), (std::vector<double>{101, 115}));
}

TEST(SimulatorMemory, DiamondAcrossTwoDevices) {
  // 0 -> {1, 2} -> 3 with c = 1, 2, 3, 4, m = 10, 20, 30, 40, outputs of
  // 100, 200, 300, 400 bytes; 2 on device 1, the rest on device 0.
  // 0: 0..1; 1: 1..3; 0's copy to device 1 over 1..11; 2: 11..14; 2's copy
  // to device 0 over 14..44; 3: 44..48.
  // Device 0: 0 over [0,11), 1 over [1,48), 2's copy over [14,48), 3 from
  // 44: [44,48) holds 200 + 300 + 400 = 900.
  // Device 1: 0's copy over [1,14), 2 over [11,44) (until its transfer
  // arrives): [11,14) holds 400.
  Graph graph = makeGraph(
      {{1, 10, 100}, {2, 20, 200}, {3, 30, 300}, {4, 40, 400}},
      {{0, 1}, {0, 2}, {1, 3}, {2, 3}});
  Simulator simulator(graph, System::uniform(2), memoryOptions());
  EXPECT_EQ(simulator.run(std::vector<DeviceId>{0, 0, 1, 0}), 48);
  EXPECT_EQ(simulator.schedule().peakMemory, (std::vector<double>{900, 400}));
  EXPECT_EQ(simulator.schedule().peakMemoryTime,
            (std::vector<double>{44, 11}));
  EXPECT_EQ(simulator.schedule().peakMemoryOf(0), 900);
  EXPECT_EQ(simulator.schedule().peakMemoryOf(1), 400);
}

TEST(SimulatorMemory, TensorReadTwiceIsFreedAfterTheSecondRead) {
  // A (50) -> B (1), A -> C (2) on one device: A 0..1, B 1..2, C 2..3. A
  // stays until C ends: [2,3) holds 50 + 1 + 2 = 53 (51 had it been freed
  // after its first reader).
  Graph graph = makeGraph({{1, 0, 50}, {1, 0, 1}, {1, 0, 2}}, {{0, 1}, {0, 2}});
  EXPECT_EQ(peaks(graph, 1, {0, 0, 0}), (std::vector<double>{53}));
}

TEST(SimulatorMemory, GraphOutputsStayToTheEnd) {
  // Two sources with no readers (graph outputs), run one after the other:
  // the first (100) is still live when the second (50) starts.
  Graph graph = makeGraph({{1, 0, 100}, {1, 0, 50}}, {});
  EXPECT_EQ(peaks(graph, 1, {0, 0}), (std::vector<double>{150}));
  // On two devices each holds its own.
  EXPECT_EQ(peaks(graph, 2, {0, 1}), (std::vector<double>{100, 50}));
}

TEST(SimulatorMemory, QueuedTransferAllocatesWhenItStarts) {
  // With link contention B's transfer to device 1 waits for A's (1..6) and
  // runs 6..11: its copy appears at 6, not when it is requested at 2.
  // Device 1 also runs E (1000 bytes) 0..3 and its reader F 3..4, so a copy
  // allocated at 2 would have made [2,4) hold 1000 + 10 + 20 = 1030.
  // A: 0, B: 1, C (reads A): 2, D (reads B): 3, E: 4, F: 5.
  Graph graph = makeGraph({{1, 5, 10},
                           {1, 5, 20},
                           {1, 0, 1},
                           {1, 0, 1},
                           {3, 0, 1000},
                           {1, 0, 0}},
                          {{0, 2}, {1, 3}, {4, 5}});
  SimulatorOptions options = memoryOptions(/*linkContention=*/true);
  options.recordTransfers = true;
  Simulator simulator(graph, System::uniform(2), options);
  EXPECT_EQ(simulator.run(std::vector<DeviceId>{0, 0, 1, 1, 1, 1}), 12);
  ASSERT_EQ(simulator.schedule().transfers.size(), 2u);
  EXPECT_EQ(simulator.schedule().transfers[1].start, 6);
  // Device 1: [1,4) E + A's copy = 1010; [6,7) A's copy, B's copy, C = 31.
  // Device 0: A over [0,6), B over [1,11): 30.
  EXPECT_EQ(simulator.schedule().peakMemory, (std::vector<double>{30, 1010}));
}

TEST(SimulatorMemory, FreesComeFirstAtEqualTimes) {
  // At 5 on device 1, B's queued transfer starts (its event was created at
  // 2) before R ends and frees X (its event was created at 3): the engine
  // allocates first, but the peak must not count X and B's copy together.
  // A: 0, B: 1 on device 0 (A's transfer 1..5, B's waits and runs 5..6);
  // X: 2 (100 bytes, 0..3), R: 3 (reads X, 3..5), P: 4 (reads A, 5..6),
  // Q: 5 (reads B, 6..7) on device 1. Device 1: [1,5) X + A's copy = 110;
  // from 5 A's copy + B's copy = 30 (130 had the tie gone the other way).
  Graph graph = makeGraph({{1, 4, 10},
                           {1, 1, 20},
                           {3, 0, 100},
                           {2, 0, 0},
                           {1, 0, 0},
                           {1, 0, 0}},
                          {{0, 4}, {1, 5}, {2, 3}});
  SimulatorOptions options = memoryOptions(/*linkContention=*/true);
  Simulator simulator(graph, System::uniform(2), options);
  EXPECT_EQ(simulator.run(std::vector<DeviceId>{0, 0, 1, 1, 1, 1}), 7);
  EXPECT_EQ(simulator.schedule().end[3], 5);
  EXPECT_EQ(simulator.schedule().peakMemory, (std::vector<double>{30, 110}));
}

TEST(SimulatorMemory, LimitCountsReceivedCopies) {
  // The fan-out above: C (10 bytes) starts on device 1 at 3 beside A's
  // 100-byte copy, which a 105-byte device cannot hold.
  Graph graph = makeGraph({{1, 2, 100}, {1, 0, 1}, {3, 0, 10}, {1, 0, 5}},
                          {{0, 1}, {0, 2}, {0, 3}, {2, 3}});
  std::optional<System> system =
      SystemBuilder(2).setMemoryCapacity(1, 105).build();
  ASSERT_TRUE(system);
  SimulatorOptions options = memoryOptions();
  options.enforceMemoryCapacity = true;
  Simulator simulator(graph, *system, options);
  EXPECT_TRUE(std::isinf(simulator.run(std::vector<DeviceId>{0, 0, 1, 1})));
  const Schedule &schedule = simulator.schedule();
  EXPECT_EQ(schedule.status, SimulationStatus::MemoryExceeded);
  EXPECT_EQ(schedule.failedNode, 2);
  EXPECT_EQ(schedule.failedDevice, 1);
  EXPECT_EQ(schedule.failedLiveBytes, 100);
}

TEST(SimulatorMemory, ReportShowsPeaksAndCapacities) {
  // The diamond's peaks as doppler-place reports them; one capacity
  // unknown.
  Graph graph = makeGraph(
      {{1, 10, 100}, {2, 20, 200}, {3, 30, 300}, {4, 40, 400}},
      {{0, 1}, {0, 2}, {1, 3}, {2, 3}});
  PlacementReport report;
  report.devices = 2;
  report.assignment = {0, 0, 1, 0};
  report.peakMemory = peaks(graph, 2, report.assignment);
  report.memoryCapacity = {1000, std::numeric_limits<double>::infinity()};
  const std::string json = formatPlacementReportJson(report);
  EXPECT_NE(json.find(R"("peak_memory":[900,400],"memory_capacity":[1000,null])"),
            std::string::npos)
      << json;
  const std::string text = formatPlacementReportText(report);
  EXPECT_NE(text.find("memory:      peak per device [900, 400] of capacity "
                      "[1000, unlimited] bytes\n"),
            std::string::npos)
      << text;
  // Graphs without output sizes report no memory.
  report.peakMemory.clear();
  report.memoryCapacity.clear();
  EXPECT_EQ(formatPlacementReportJson(report).find("peak_memory"),
            std::string::npos);
  EXPECT_EQ(formatPlacementReportText(report).find("memory:"),
            std::string::npos);
}

/// The peak per device recomputed from a finished schedule by a sweep over
/// the buffers' [allocation, free) intervals, applying every change at one
/// time before sampling (frees first at equal times).
std::vector<double> sweepPeaks(const Graph &graph, int32_t numDevices,
                               const std::vector<DeviceId> &assignment,
                               const Schedule &schedule) {
  const double inf = std::numeric_limits<double>::infinity();
  std::map<double, std::vector<double>> changes; // time -> delta per device
  auto add = [&](double from, double to, DeviceId d, double bytes) {
    for (auto [time, delta] : {std::pair{from, bytes}, std::pair{to, -bytes}}) {
      std::vector<double> &row = changes[time];
      row.resize(numDevices, 0.0);
      row[d] += delta;
    }
  };
  for (NodeId u = 0; u < graph.numNodes(); ++u) {
    const DeviceId home = assignment[u];
    double homeFree = graph.outDegree(u) == 0 ? inf : schedule.start[u];
    std::map<DeviceId, std::pair<double, double>> copies; // first start, free
    for (int32_t e = graph.succBegin(u); e < graph.succEnd(u); ++e) {
      const NodeId v = graph.edgeTarget(e);
      const DeviceId d = assignment[v];
      if (d == home) {
        homeFree = std::max(homeFree, schedule.end[v]);
        continue;
      }
      auto &copy = copies.try_emplace(d, inf, 0.0).first->second;
      copy.second = std::max(copy.second, schedule.end[v]);
    }
    for (const TransferRecord &transfer : schedule.transfers) {
      if (graph.edgeSource(transfer.edge) != u)
        continue;
      homeFree = std::max(homeFree, transfer.end);
      auto &copy = copies[transfer.to];
      copy.first = std::min(copy.first, transfer.start);
    }
    add(schedule.start[u], homeFree, home, graph.outputBytes(u));
    for (auto [d, interval] : copies)
      add(interval.first, interval.second, d, graph.outputBytes(u));
  }
  std::vector<double> live(numDevices, 0.0), peak(numDevices, 0.0);
  for (auto &[time, row] : changes)
    for (DeviceId d = 0; d < numDevices; ++d) {
      live[d] += row[d];
      peak[d] = std::max(peak[d], live[d]);
    }
  return peak;
}

TEST(SimulatorMemory, RandomGraphsKeepThePeakBetweenItsBounds) {
  std::mt19937 rng(17);
  for (int trial = 0; trial < 300; ++trial) {
    const int32_t numNodes = 2 + static_cast<int32_t>(rng() % 25);
    const int32_t numDevices = 1 + static_cast<int32_t>(rng() % 4);
    const bool contention = rng() % 2;
    std::vector<NodeSpec> nodes;
    double total = 0;
    for (NodeId v = 0; v < numNodes; ++v) {
      // Positive compute: a zero-length op holds its inputs and output
      // together for no time at all, so the lower bound would not apply.
      nodes.push_back({1.0 + rng() % 5, static_cast<double>(rng() % 4),
                       1.0 + rng() % 100});
      total += nodes.back().bytes;
    }
    std::vector<std::pair<NodeId, NodeId>> edges;
    for (NodeId v = 1; v < numNodes; ++v)
      for (NodeId u = 0; u < v; ++u)
        if (rng() % 4 == 0)
          edges.push_back({u, v});
    Graph graph = makeGraph(nodes, edges);
    std::vector<DeviceId> assignment(numNodes);
    for (DeviceId &d : assignment)
      d = static_cast<DeviceId>(rng() % numDevices);

    SimulatorOptions options = memoryOptions(contention);
    options.recordTransfers = true;
    Simulator simulator(graph, System::uniform(numDevices), options);
    simulator.run(assignment);
    const Schedule &schedule = simulator.schedule();
    ASSERT_TRUE(schedule.ok());
    SCOPED_TRACE("trial " + std::to_string(trial));
    for (DeviceId d = 0; d < numDevices; ++d)
      EXPECT_LE(schedule.peakMemory[d], total);
    for (NodeId v = 0; v < numNodes; ++v) {
      double working = graph.outputBytes(v);
      for (NodeId u : graph.predecessors(v))
        working += graph.outputBytes(u);
      EXPECT_GE(schedule.peakMemory[assignment[v]], working) << "node " << v;
    }
    EXPECT_EQ(schedule.peakMemory,
              sweepPeaks(graph, numDevices, assignment, schedule));
  }
}

//===----------------------------------------------------------------------===//
// Priorities and the Skip policy
//===----------------------------------------------------------------------===//

std::vector<double> startsWith(const Graph &graph, int32_t numDevices,
                               const std::vector<DeviceId> &assignment,
                               SimulatorOptions options) {
  Simulator simulator(graph, System::uniform(numDevices), options);
  simulator.run(assignment);
  EXPECT_TRUE(simulator.schedule().ok());
  return simulator.schedule().start;
}

TEST(SimulatorPriority, SmallestPriorityFirstTiesInReadinessOrder) {
  // Four sources X, A, B, C on one device, unit compute, ready at 0 in id
  // order; the device serves them by priority.
  Graph graph =
      makeGraph({{1, 0, 1}, {1, 0, 1}, {1, 0, 1}, {1, 0, 1}}, {});
  std::vector<DeviceId> assignment = {0, 0, 0, 0};
  for (bool trackMemory : {false, true}) {
    SimulatorOptions options;
    options.trackMemory = trackMemory; // the reference mode and the other
    EXPECT_EQ(startsWith(graph, 1, assignment, options),
              (std::vector<double>{0, 1, 2, 3}));
    options.priorities = {3, 2, 1, 0};
    EXPECT_EQ(startsWith(graph, 1, assignment, options),
              (std::vector<double>{3, 2, 1, 0}));
    // X and B tie, and A and C: readiness order within each pair.
    options.priorities = {0, 1, 0, 1};
    EXPECT_EQ(startsWith(graph, 1, assignment, options),
              (std::vector<double>{0, 2, 1, 3}));
    // A and C tie: readiness order (A first) between them.
    options.priorities = {0, 1, 0, 1};
    EXPECT_EQ(startsWith(graph, 1, assignment, options),
              (std::vector<double>{0, 2, 1, 3}));
  }
}

TEST(SimulatorPriority, OnlyReadyNodesAreChosen) {
  // A -> B, A -> C and D, one device, unit compute. Readiness order: A 0..1
  // (the device was idle), D 1..2 (the only node waiting when A ends: A
  // frees its device before its output reaches B and C), B, C. Ranked C <
  // B < D < A: D runs first (B and C, ranked better, are not ready at 0),
  // A 1..2, then C before B.
  Graph graph = makeGraph({{1, 0, 1}, {1, 0, 1}, {1, 0, 1}, {1, 0, 1}},
                          {{0, 1}, {0, 2}});
  std::vector<DeviceId> assignment = {0, 0, 0, 0};
  SimulatorOptions options;
  EXPECT_EQ(startsWith(graph, 1, assignment, options),
            (std::vector<double>{0, 2, 3, 1}));
  options.priorities = {3, 1, 0, 2};
  EXPECT_EQ(startsWith(graph, 1, assignment, options),
            (std::vector<double>{1, 3, 2, 0}));
}

TEST(SimulatorPriority, PlannedStartTimesReproduceTheSchedule) {
  // The planner hands the runtime a schedule's start times as priorities:
  // with positive compute (one start per instant on a device) they give
  // back that schedule exactly, on random graphs over 1 to 4 devices, with
  // and without memory tracking.
  std::mt19937 rng(29);
  for (int trial = 0; trial < 200; ++trial) {
    const int32_t numNodes = 2 + static_cast<int32_t>(rng() % 30);
    const int32_t numDevices = 1 + static_cast<int32_t>(rng() % 4);
    std::vector<NodeSpec> nodes;
    for (NodeId v = 0; v < numNodes; ++v)
      nodes.push_back({1.0 + rng() % 4, static_cast<double>(rng() % 4),
                       1.0 + rng() % 10});
    std::vector<std::pair<NodeId, NodeId>> edges;
    for (NodeId v = 1; v < numNodes; ++v)
      for (NodeId u = 0; u < v; ++u)
        if (rng() % 4 == 0)
          edges.push_back({u, v});
    Graph graph = makeGraph(nodes, edges);
    std::vector<DeviceId> assignment(numNodes);
    for (DeviceId &d : assignment)
      d = static_cast<DeviceId>(rng() % numDevices);
    Simulator reference(graph, numDevices);
    reference.run(assignment);
    SimulatorOptions options;
    options.trackMemory = trial % 2;
    options.priorities = reference.schedule().start;
    Simulator prioritised(graph, numDevices, options);
    prioritised.run(assignment);
    SCOPED_TRACE("trial " + std::to_string(trial));
    EXPECT_EQ(prioritised.schedule().start, reference.schedule().start);
    EXPECT_EQ(prioritised.schedule().end, reference.schedule().end);
  }
}

TEST(SimulatorPriority, ReversedPlannedStartsChangeTheOrder) {
  // Ten sources on one device: readiness order runs them in id order;
  // priorities = minus the id run them backwards.
  Graph graph = makeGraph(std::vector<NodeSpec>(10, NodeSpec{1, 0, 1}), {});
  std::vector<DeviceId> assignment(10, 0);
  SimulatorOptions options;
  for (NodeId v = 0; v < 10; ++v)
    options.priorities.push_back(-v);
  std::vector<double> starts = startsWith(graph, 1, assignment, options);
  for (NodeId v = 0; v < 10; ++v)
    EXPECT_EQ(starts[v], 9 - v);
}

TEST(SimulatorPriority, CreateChecksTheLength) {
  Graph graph = makeGraph({{1, 0, 1}, {1, 0, 1}}, {{0, 1}});
  SimulatorOptions options;
  options.priorities = {1};
  std::string error;
  EXPECT_FALSE(Simulator::create(graph, System::uniform(1), options, &error));
  EXPECT_EQ(error, "expected 2 priorities (one per node), got 1");
  options.priorities = {1, std::nan("")};
  EXPECT_FALSE(Simulator::create(graph, System::uniform(1), options, &error));
  EXPECT_EQ(error, "node 1: priority is not a number");
}

/// A (50 bytes) -> A2, B (60) -> B2, C (10) -> C2 on one 100-byte device,
/// unit compute; the readers' outputs are empty.
Graph threePairs() {
  return makeGraph({{1, 0, 50}, {1, 0, 0}, {1, 0, 60}, {1, 0, 0}, {1, 0, 10},
                    {1, 0, 0}},
                   {{0, 1}, {2, 3}, {4, 5}});
}

Schedule runLimited(const Graph &graph, double capacity,
                    MemoryLimitPolicy policy,
                    std::vector<double> priorities = {}) {
  std::optional<System> system =
      SystemBuilder(1).setMemoryCapacity(0, capacity).build();
  EXPECT_TRUE(system);
  SimulatorOptions options = memoryOptions();
  options.enforceMemoryCapacity = true;
  options.memoryPolicy = policy;
  options.priorities = std::move(priorities);
  Simulator simulator(graph, *system, options);
  simulator.run(std::vector<DeviceId>(graph.numNodes(), 0));
  return simulator.schedule();
}

TEST(SimulatorSkip, ANodeThatDoesNotFitWaitsWhileSmallerOnesRun) {
  // Queue at 0: A, B, C. A 0..1 (50 live). At 1, B needs 110: under Skip,
  // C runs instead (1..2, 60 live), then A2 (B would need 120) 2..3, which
  // frees A: B fits (70) 3..4; C2 4..5 and B2 5..6.
  Graph graph = threePairs();
  Schedule skip = runLimited(graph, 100, MemoryLimitPolicy::Skip);
  ASSERT_TRUE(skip.ok()) << skip.describeFailure();
  EXPECT_EQ(skip.start, (std::vector<double>{0, 2, 3, 5, 1, 4}));
  EXPECT_EQ(skip.makespan, 6);
  EXPECT_EQ(skip.peakMemory, (std::vector<double>{70}));
  // Head-of-line Stall waits for B with nothing left to free memory.
  Schedule stall = runLimited(graph, 100, MemoryLimitPolicy::Stall);
  EXPECT_EQ(stall.status, SimulationStatus::MemoryDeadlock);
  EXPECT_EQ(stall.failedNode, 2);
  Schedule fail = runLimited(graph, 100, MemoryLimitPolicy::Fail);
  EXPECT_EQ(fail.status, SimulationStatus::MemoryExceeded);
  // With room for everything, Skip is readiness order.
  Schedule roomy = runLimited(graph, 120, MemoryLimitPolicy::Skip);
  ASSERT_TRUE(roomy.ok());
  EXPECT_EQ(roomy.start, (std::vector<double>{0, 3, 1, 4, 2, 5}));
}

TEST(SimulatorSkip, PrioritiesChooseAmongTheNodesThatFit) {
  // As above, ranked C2 < A < C < A2 < B2 < B. A 0..1. At 1: C (ranked
  // before A2 and B; it fits) 1..2. At 2: C2 (the best) 2..3, which frees
  // C. A2 3..4, which frees A. B 4..5, B2 5..6. At most A and C (60) are
  // live at once.
  Graph graph = threePairs();
  Schedule schedule =
      runLimited(graph, 100, MemoryLimitPolicy::Skip, {1, 3, 5, 4, 2, 0});
  ASSERT_TRUE(schedule.ok()) << schedule.describeFailure();
  EXPECT_EQ(schedule.start, (std::vector<double>{0, 3, 4, 5, 1, 2}));
  EXPECT_EQ(schedule.peakMemory, (std::vector<double>{60}));
}

TEST(SimulatorSkip, DeadlockIsDetectedNotWaitedFor) {
  // A (50), B (60) and C (10) all feed D: after A and C, B never fits and
  // nothing running can free memory.
  Graph graph = makeGraph({{1, 0, 50}, {1, 0, 60}, {1, 0, 10}, {1, 0, 0}},
                          {{0, 3}, {1, 3}, {2, 3}});
  Schedule schedule = runLimited(graph, 100, MemoryLimitPolicy::Skip);
  EXPECT_EQ(schedule.status, SimulationStatus::MemoryDeadlock);
  EXPECT_TRUE(std::isinf(schedule.makespan));
  EXPECT_EQ(schedule.failedNode, 1);
  EXPECT_EQ(schedule.failedLiveBytes, 60);
  EXPECT_EQ(schedule.start[0], 0);
  EXPECT_EQ(schedule.start[2], 1);
  EXPECT_TRUE(std::isnan(schedule.start[1]));
  EXPECT_TRUE(std::isnan(schedule.start[3]));
  // 120 bytes hold all three.
  EXPECT_TRUE(runLimited(graph, 120, MemoryLimitPolicy::Skip).ok());
}

} // namespace
