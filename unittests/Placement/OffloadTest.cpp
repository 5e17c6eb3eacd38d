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

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

using namespace doppler::placement;

namespace {

constexpr double kUnlimited = std::numeric_limits<double>::infinity();

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

System systemWith(std::vector<double> capacities) {
  std::optional<System> system =
      SystemBuilder(static_cast<int32_t>(capacities.size()))
          .setMemoryCapacities(capacities)
          .build();
  EXPECT_TRUE(system);
  return *system;
}

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
            "eviction 0: value 0 is on device 0, not 1");
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

} // namespace
