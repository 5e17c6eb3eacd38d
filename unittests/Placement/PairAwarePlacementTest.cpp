//===- PairAwarePlacementTest.cpp - Placement that sees the network -------===//
//
// PlacementEnvironment::setSystem and PolicyOptions::system: on a System
// with nodes, a cross-device input costs its pair's link (latency + bytes /
// bandwidth; the network between nodes) instead of the graph's edge cost.
// Expected estimates and makespans worked out by hand in the comments.
//
//===----------------------------------------------------------------------===//

#include "Doppler/Placement/Environment.h"
#include "Doppler/Placement/Heuristics.h"
#include "Doppler/Placement/Simulator.h"

#include <gtest/gtest.h>

using namespace doppler::placement;

namespace {

/// s -> x1, x2, x3 -> t: a fork of three 10-unit branches and a join, unit
/// compute at both ends, every edge cost 1, every output 1000 bytes
/// (`bytes` false: no sizes, a cost-only graph).
Graph fork(bool bytes = true) {
  GraphBuilder b;
  b.addNode(1, 1);  // 0: s
  b.addNode(10, 1); // 1: x1
  b.addNode(10, 1); // 2: x2
  b.addNode(10, 1); // 3: x3
  b.addNode(1, 1);  // 4: t
  for (NodeId x = 1; x <= 3; ++x) {
    b.addEdge(0, x);
    b.addEdge(x, 4);
  }
  if (bytes)
    for (NodeId v = 0; v < 5; ++v)
      b.setOutputBytes(v, 1000);
  std::string error;
  std::optional<Graph> graph = b.build(&error);
  EXPECT_TRUE(graph) << error;
  return graph ? std::move(*graph) : Graph();
}

/// Two nodes of two devices ({0, 1}, {2, 3}), one NIC each. Inside a node
/// 1000 bytes take 1 unit (as the edge costs say); the network moves
/// `networkBandwidth` bytes per unit, no latency.
System twoNodes(double networkBandwidth) {
  std::string error;
  std::optional<System> system =
      SystemBuilder(4)
          .setUniformLink({1000, 0})
          .setNodes({0, 0, 1, 1}, {1, 1}, {networkBandwidth, 0})
          .build(&error);
  EXPECT_TRUE(system) << error;
  return system ? *system : System::uniform(4);
}

std::vector<double> row(const double *values, int32_t count) {
  return {values, values + count};
}

double networkMakespan(const Graph &graph, const System &system,
                       const std::vector<DeviceId> &assignment) {
  SimulatorOptions options;
  options.linkContention = true;
  options.transferModel = TransferModel::LinkBandwidth;
  Simulator simulator(graph, system, options);
  return simulator.run(assignment);
}

TEST(PairAwareEnvironment, EstimatesPriceEachPairsLink) {
  const Graph graph = fork();
  const System slow = twoNodes(10); // 1000 bytes: 100 units between nodes
  PlacementEnvironment env;
  env.setSystem(&slow);
  ASSERT_TRUE(env.reset(graph, 4));
  EXPECT_TRUE(env.pairAware());
  ASSERT_TRUE(env.step(0, 0)); // s on device 0: [0, 1]
  // x1: its input is on device 0 (finish 1); device 1 shares the node
  // (+1), devices 2 and 3 are across the network (+100).
  double est[4];
  env.earliestStarts(1, est);
  EXPECT_EQ(row(est, 4), (std::vector<double>{1, 2, 101, 101}));
  for (DeviceId d = 0; d < 4; ++d)
    EXPECT_EQ(env.earliestStart(1, d), est[d]);
  EXPECT_EQ(env.transferCost(graph.succBegin(0), 0, 2), 100);
  EXPECT_EQ(env.transferCost(graph.succBegin(0), 0, 1), 1);
  EXPECT_EQ(env.transferCost(graph.succBegin(0), 0, 0), 0);

  // Join split: x1 on device 2 (node 1). x2 joins it at t: on device 0 or
  // 1, t waits min(x2 -> device 2, x1 -> device d) = 100; on device 3
  // (x1's node) 1; on device 2 itself nothing.
  ASSERT_TRUE(env.step(1, 2));
  double split[4];
  env.joinSplitCosts(2, split);
  EXPECT_EQ(row(split, 4), (std::vector<double>{100, 100, 0, 1}));
}

TEST(PairAwareEnvironment, WithoutSystemOrBytesTheEdgeCostsStay) {
  const System slow = twoNodes(10);
  // No sizes: the pair costs cannot be priced, the edge costs stay.
  const Graph costOnly = fork(/*bytes=*/false);
  PlacementEnvironment env;
  env.setSystem(&slow);
  ASSERT_TRUE(env.reset(costOnly, 4));
  EXPECT_FALSE(env.pairAware());
  // Another device count than the system's: likewise.
  const Graph graph = fork();
  ASSERT_TRUE(env.reset(graph, 3));
  EXPECT_FALSE(env.pairAware());
  ASSERT_TRUE(env.step(0, 0));
  double est[3];
  env.earliestStarts(1, est);
  EXPECT_EQ(row(est, 3), (std::vector<double>{1, 2, 2}));
  // setSystem(nullptr) turns it off again.
  env.setSystem(nullptr);
  ASSERT_TRUE(env.reset(graph, 4));
  EXPECT_FALSE(env.pairAware());
}

// Critical path on the fork (devices 0-1 node 0, 2-3 node 1). s goes to
// device 0 ([0, 1]), x1 to device 0 ([1, 11]), x2 to device 1 ([2, 12]).
// x3: device 0 free at 11, device 1 at 12, devices 2 and 3 at
// 1 + network time.
//  - Fast network (1000 bytes per unit: 1 unit): devices 2 and 3 can start
//    at 2; the lowest id, 2: x3 on [2, 12], t on device 1 at 13: 14. The
//    network simulator agrees: 14.
//  - Slow network (10 bytes per unit: 100 units): devices 2 and 3 start at
//    101; device 0 at 11 wins: x3 on [11, 21] and t on device 0 [21, 22].
//    Everything stays in node 0: 22, where the spread placement the
//    network-blind heuristic makes takes 1 + 100 + 10 + 100 + 1 = 212.
TEST(PairAwareHeuristics, CriticalPathKeepsTheForkInANodeOnASlowNetwork) {
  const Graph graph = fork();
  const System fast = twoNodes(1000), slow = twoNodes(10);

  const std::vector<DeviceId> spread = {0, 0, 1, 2, 1};
  EXPECT_EQ(placeCriticalPath(graph, 4, StartEstimate::EarliestStart, &fast),
            spread);
  EXPECT_EQ(networkMakespan(graph, fast, spread), 14);

  const std::vector<DeviceId> inNode = {0, 0, 1, 0, 0};
  EXPECT_EQ(placeCriticalPath(graph, 4, StartEstimate::EarliestStart, &slow),
            inNode);
  EXPECT_EQ(networkMakespan(graph, slow, inNode), 22);

  // Blind to the pairs (no system): the spread placement, whatever the
  // network, and on the slow one it takes 212.
  const std::vector<DeviceId> blind = placeCriticalPath(graph, 4);
  EXPECT_EQ(blind, spread);
  EXPECT_EQ(networkMakespan(graph, slow, blind), 212);
}

TEST(PairAwareHeuristics, JoinAwareAndHeftSeeTheNetworkToo) {
  const Graph graph = fork();
  const System slow = twoNodes(10);
  for (const std::vector<DeviceId> &placed :
       {placeJoinAware(graph, 4, &slow), placeHeft(graph, 4, &slow)})
    for (DeviceId d : placed)
      EXPECT_LT(d, 2) << "a device of node 1 on the slow network";
  // The policy objects take the system through PolicyOptions.
  PolicyOptions options;
  options.system = &slow;
  for (const char *name : {"critical-path", "join-aware", "heft"}) {
    std::optional<std::vector<DeviceId>> placed =
        placeWithPolicy(name, graph, 4, options);
    ASSERT_TRUE(placed) << name;
    EXPECT_EQ(networkMakespan(graph, slow, *placed), 22) << name;
  }
}

TEST(PairAwareHeuristics, WithoutSystemNothingChanges) {
  // A cost-only graph with a system, and any graph without one: the same
  // placements as the network-blind heuristics.
  const System slow = twoNodes(10);
  const Graph costOnly = fork(/*bytes=*/false);
  EXPECT_EQ(placeCriticalPath(costOnly, 4, StartEstimate::EarliestStart, &slow),
            placeCriticalPath(costOnly, 4));
  EXPECT_EQ(placeJoinAware(costOnly, 4, &slow), placeJoinAware(costOnly, 4));
  EXPECT_EQ(placeHeft(costOnly, 4, &slow), placeHeft(costOnly, 4));
  const HeftSchedule blind = scheduleHeft(fork(), 4);
  // HEFT's own estimate of the spread placement: t at 13, so 14.
  EXPECT_EQ(blind.makespan, 14);
}

// A chain of four equal nodes cut into two stages: {0, 0, 1, 1}; the
// hierarchical placement runs stage s on node s. On the chain a -> b -> c
// -> d (unit compute, 1000 bytes each, slow network) that is a, b on node 0,
// c, d on node 1 with one crossing: 1 + 1 + 100 + 1 + 1 = 104.
TEST(PairAwareHeuristics, HierarchicalPlacesOneStagePerNode) {
  GraphBuilder b;
  for (int i = 0; i < 4; ++i)
    b.addNode(1, 1);
  for (NodeId v = 0; v < 3; ++v)
    b.addEdge(v, v + 1);
  for (NodeId v = 0; v < 4; ++v)
    b.setOutputBytes(v, 1000);
  std::optional<Graph> chain = b.build();
  ASSERT_TRUE(chain);
  EXPECT_EQ(pipelineStages(*chain, 2), (std::vector<int32_t>{0, 0, 1, 1}));
  EXPECT_EQ(pipelineStages(*chain, 1), (std::vector<int32_t>{0, 0, 0, 0}));
  EXPECT_EQ(pipelineStages(*chain, 4), (std::vector<int32_t>{0, 1, 2, 3}));
  const System slow = twoNodes(10);
  const std::vector<DeviceId> placed = placeHierarchical(*chain, slow);
  EXPECT_EQ(placed, (std::vector<DeviceId>{0, 0, 2, 2}));
  EXPECT_EQ(networkMakespan(*chain, slow, placed), 104);
}

} // namespace
