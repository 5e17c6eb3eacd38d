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

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <limits>
#include <map>
#include <random>

using namespace doppler::placement;

namespace {

struct NodeSpec {
  double compute, transfer, bytes;
};

Graph makeGraph(const std::vector<NodeSpec> &nodes,
                const std::vector<std::pair<NodeId, NodeId>> &edges) {
  GraphBuilder builder;
  for (const NodeSpec &node : nodes)
    builder.setOutputBytes(builder.addNode(node.compute, node.transfer),
                           node.bytes);
  for (auto [u, v] : edges)
    builder.addEdge(u, v);
  std::string error;
  std::optional<Graph> graph = builder.build(&error);
  EXPECT_TRUE(graph) << error;
  return graph ? *graph : Graph();
}

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

} // namespace
