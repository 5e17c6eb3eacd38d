//===- EnvironmentTest.cpp - The sequential placement process -------------===//

#include "Doppler/Placement/Environment.h"
#include "PlacementTestGraphs.h"
#include "Doppler/Placement/Analysis.h"
#include "Doppler/Placement/Heuristics.h"
#include "Doppler/Placement/Simulator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <string>

using namespace doppler::placement;
using namespace doppler::placement::testing;

namespace {

std::vector<NodeId> toVector(ArrayView<NodeId> view) {
  return {view.begin(), view.end()};
}

TEST(EnvironmentTest, ResetRejectsNoDevices) {
  Graph graph = diamond();
  PlacementEnvironment env;
  std::string error;
  EXPECT_FALSE(env.reset(graph, 0, StartEstimate::EarliestStart, &error));
  EXPECT_EQ(error, "device count must be at least 1, got 0");
}

TEST(EnvironmentTest, CandidatesArriveInOrder) {
  // Sources 0 and 1; 0 -> 3, 0 -> 2, 1 -> 2.
  GraphBuilder builder;
  for (int i = 0; i < 4; ++i)
    builder.addNode(1, 1);
  builder.addEdge(0, 3);
  builder.addEdge(0, 2);
  builder.addEdge(1, 2);
  Graph graph = *builder.build();
  PlacementEnvironment env;
  ASSERT_TRUE(env.reset(graph, 2));
  EXPECT_EQ(toVector(env.candidates()), (std::vector<NodeId>{0, 1}));
  ASSERT_TRUE(env.step(0, 1));
  // 3 is released; 2 still waits for 1.
  EXPECT_EQ(toVector(env.candidates()), (std::vector<NodeId>{1, 3}));
  ASSERT_TRUE(env.step(1, 0));
  EXPECT_EQ(toVector(env.candidates()), (std::vector<NodeId>{3, 2}));
  EXPECT_TRUE(env.isCandidate(2));
  EXPECT_FALSE(env.isCandidate(0));
  ASSERT_TRUE(env.step(2, 0));
  ASSERT_TRUE(env.step(3, 1));
  EXPECT_TRUE(env.done());
  EXPECT_TRUE(env.candidates().empty());
  EXPECT_EQ(toVector(env.placementOrder()), (std::vector<NodeId>{0, 1, 2, 3}));
  EXPECT_EQ(toVector(env.nodesOn(0)), (std::vector<NodeId>{1, 2}));
  EXPECT_EQ(toVector(env.nodesOn(1)), (std::vector<NodeId>{0, 3}));
}

TEST(EnvironmentTest, StepRejectsBadActionsWithoutChangingState) {
  Graph graph = diamond();
  PlacementEnvironment env;
  ASSERT_TRUE(env.reset(graph, 2));
  std::string error;
  EXPECT_FALSE(env.step(1, 0, &error)); // predecessor 0 is unplaced
  EXPECT_EQ(error, "node 1 is not a candidate");
  EXPECT_FALSE(env.step(7, 0, &error));
  EXPECT_FALSE(env.step(-1, 0, &error));
  EXPECT_FALSE(env.step(0, 2, &error));
  EXPECT_EQ(error, "device 2 is out of range (2 devices)");
  EXPECT_FALSE(env.step(0, -1, &error));
  EXPECT_EQ(env.numPlaced(), 0);
  EXPECT_EQ(toVector(env.candidates()), (std::vector<NodeId>{0}));
  ASSERT_TRUE(env.step(0, 0));
  EXPECT_FALSE(env.step(0, 1, &error)); // already placed
  EXPECT_EQ(env.deviceOf(0), 0);
}

TEST(EnvironmentTest, EarliestStartEstimateByHand) {
  Graph graph = diamond();
  PlacementEnvironment env;
  ASSERT_TRUE(env.reset(graph, 2, StartEstimate::EarliestStart));
  EXPECT_EQ(env.earliestStart(0, 0), 0);
  ASSERT_TRUE(env.step(0, 0));
  EXPECT_EQ(env.estimatedStart(0), 0);
  EXPECT_EQ(env.estimatedFinish(0), 1);
  // Same device: its finish; elsewhere: finish + m(0).
  EXPECT_EQ(env.earliestStart(1, 0), 1);
  EXPECT_EQ(env.earliestStart(1, 1), 11);
  ASSERT_TRUE(env.step(1, 1));
  EXPECT_EQ(env.estimatedStart(1), 11);
  EXPECT_EQ(env.estimatedFinish(1), 13);
  EXPECT_EQ(env.deviceFreeTime(1), 13);
  EXPECT_EQ(env.earliestStart(2, 0), 1);
  EXPECT_EQ(env.earliestStart(2, 1), 13); // the device is busy until 13
  ASSERT_TRUE(env.step(2, 0));
  EXPECT_EQ(env.estimatedFinish(2), 4);

  double est[2];
  env.earliestStarts(3, est);
  EXPECT_EQ(est[0], 33); // 1's output arrives at 13 + 20
  EXPECT_EQ(est[1], 34); // 2's output arrives at 4 + 30
  EXPECT_EQ(env.earliestDevice(3), 0);

  double features[2 * kNumDeviceFeatures];
  env.deviceFeatures(3, features);
  const double *d0 = features, *d1 = features + kNumDeviceFeatures;
  EXPECT_EQ(d0[kDeviceLoadFeature], 1 + 3);
  EXPECT_EQ(d0[kInputComputeFeature], 3);
  EXPECT_EQ(d0[kInputMinStartFeature], 1);
  EXPECT_EQ(d0[kInputMaxFinishFeature], 4);
  EXPECT_EQ(d0[kEarliestStartFeature], 33);
  EXPECT_EQ(d1[kDeviceLoadFeature], 2);
  EXPECT_EQ(d1[kInputComputeFeature], 2);
  EXPECT_EQ(d1[kInputMinStartFeature], 11);
  EXPECT_EQ(d1[kInputMaxFinishFeature], 13);
  EXPECT_EQ(d1[kEarliestStartFeature], 34);

  ASSERT_TRUE(env.step(3, 0));
  EXPECT_EQ(env.estimatedMakespan(), 37);
}

/// Three producers joined by one consumer, plus a second consumer of the
/// last producer with a cheaper edge:
///   0 -> 3 (edge 5), 1 -> 3 (edge 7), 2 -> 3 (edge 2), 2 -> 4 (edge 1),
///   5 -> 4 (edge 9).
TEST(EnvironmentTest, JoinSplitCountsSiblingsOnOtherDevices) {
  GraphBuilder builder;
  for (int i = 0; i < 6; ++i)
    builder.addNode(1, 1);
  builder.addEdge(0, 3, 5.0);
  builder.addEdge(1, 3, 7.0);
  builder.addEdge(2, 3, 2.0);
  builder.addEdge(2, 4, 1.0);
  builder.addEdge(5, 4, 9.0);
  std::optional<Graph> graph = builder.build();
  ASSERT_TRUE(graph);
  PlacementEnvironment env;
  ASSERT_TRUE(env.reset(*graph, 3));

  // Nothing placed: nothing to split.
  double split[3];
  env.joinSplitCosts(0, split);
  EXPECT_EQ(split[0], 0);
  EXPECT_EQ(split[1], 0);
  EXPECT_EQ(split[2], 0);

  ASSERT_TRUE(env.step(0, 0));
  ASSERT_TRUE(env.step(1, 1));
  // 2's sibling inputs of 3: node 0 on device 0 (min(2, 5) = 2) and node 1
  // on device 1 (min(2, 7) = 2); node 5 (input of 4) is unplaced.
  env.joinSplitCosts(2, split);
  EXPECT_EQ(split[0], 2); // splits from node 1
  EXPECT_EQ(split[1], 2); // splits from node 0
  EXPECT_EQ(split[2], 4); // splits from both

  ASSERT_TRUE(env.step(5, 2));
  env.joinSplitCosts(2, split);
  // Node 5 feeds 4 with 2: min(1, 9) = 1, paid away from device 2.
  EXPECT_EQ(split[0], 2 + 1);
  EXPECT_EQ(split[1], 2 + 1);
  EXPECT_EQ(split[2], 4);

  // The same numbers as the last device-feature column.
  double features[3 * kNumDeviceFeatures];
  env.deviceFeatures(2, features);
  for (int d = 0; d < 3; ++d)
    EXPECT_EQ(features[d * kNumDeviceFeatures + kJoinSplitFeature], split[d]);
}

TEST(EnvironmentTest, DeviceLoadEstimateIgnoresWaiting) {
  Graph graph = diamond();
  PlacementEnvironment env;
  ASSERT_TRUE(env.reset(graph, 2, StartEstimate::DeviceLoad));
  ASSERT_TRUE(env.step(0, 0));
  ASSERT_TRUE(env.step(1, 1));
  // The reference dates node 1 by its device's load (0), not by its input.
  EXPECT_EQ(env.estimatedStart(1), 0);
  EXPECT_EQ(env.estimatedFinish(1), 2);
  EXPECT_EQ(env.deviceFreeTime(1), 2);
  EXPECT_EQ(env.earliestStart(2, 1), 11);
  ASSERT_TRUE(env.step(2, 1));
  EXPECT_EQ(env.estimatedStart(2), 2);
  EXPECT_EQ(env.deviceLoad(1), 5);

  double features[2 * kNumDeviceFeatures];
  env.deviceFeatures(3, features);
  // Device 0 holds none of 3's inputs: zeros, as the reference reports.
  EXPECT_EQ(features[kInputComputeFeature], 0);
  EXPECT_EQ(features[kInputMinStartFeature], 0);
  EXPECT_EQ(features[kInputMaxFinishFeature], 0);
  EXPECT_EQ(features[kEarliestStartFeature], 5 + 30);
}

TEST(EnvironmentTest, EmptyGraphIsDoneAtOnce) {
  Graph graph = *GraphBuilder().build();
  PlacementEnvironment env;
  ASSERT_TRUE(env.reset(graph, 3));
  EXPECT_TRUE(env.done());
  EXPECT_TRUE(env.candidates().empty());
}

/// Random episodes on the shared graphs, checking every invariant at every
/// step against a from-scratch recomputation.
TEST(EnvironmentTest, InvariantsHoldThroughRandomEpisodes) {
  for (const char *name : kSharedGraphs) {
    std::optional<Graph> graph = sharedGraph(name);
    ASSERT_TRUE(graph);
    const int32_t numNodes = graph->numNodes();
    for (StartEstimate estimate :
         {StartEstimate::EarliestStart, StartEstimate::DeviceLoad}) {
      for (int32_t numDevices : {1, 3, 4}) {
        SeededRandom random(numDevices * 7 + static_cast<int>(estimate));
        PlacementEnvironment env;
        ASSERT_TRUE(env.reset(*graph, numDevices, estimate));
        std::vector<double> est(numDevices);
        std::vector<double> features(numDevices * kNumDeviceFeatures);
        while (!env.done()) {
          // The candidate set is exactly the unplaced nodes whose
          // predecessors are all placed.
          int32_t expected = 0;
          for (NodeId v = 0; v < numNodes; ++v) {
            ArrayView<NodeId> preds = graph->predecessors(v);
            bool ready = !env.isPlaced(v) &&
                         std::all_of(preds.begin(), preds.end(),
                                     [&](NodeId u) { return env.isPlaced(u); });
            ASSERT_EQ(ready, env.isCandidate(v)) << name << " node " << v;
            expected += ready;
          }
          ASSERT_EQ(static_cast<int32_t>(env.candidates().size()), expected);

          ArrayView<NodeId> candidates = env.candidates();
          NodeId v = candidates[random.below(candidates.size())];
          env.earliestStarts(v, est.data());
          env.deviceFeatures(v, features.data());
          for (DeviceId d = 0; d < numDevices; ++d) {
            ASSERT_EQ(est[d], env.earliestStart(v, d));
            ASSERT_EQ(features[d * kNumDeviceFeatures + kEarliestStartFeature],
                      est[d]);
            ASSERT_EQ(features[d * kNumDeviceFeatures + kDeviceLoadFeature],
                      env.deviceLoad(d));
          }
          DeviceId d = static_cast<DeviceId>(random.below(numDevices));
          ASSERT_TRUE(env.step(v, d));
          if (estimate == StartEstimate::EarliestStart) {
            ASSERT_EQ(env.estimatedStart(v), est[d]);
          }
        }

        // Every node placed once; device lists partition the nodes.
        std::vector<int32_t> seen(numNodes, 0);
        double totalLoad = 0;
        for (DeviceId d = 0; d < numDevices; ++d) {
          double load = 0;
          double previousFinish = 0;
          for (NodeId v : env.nodesOn(d)) {
            ++seen[v];
            EXPECT_EQ(env.deviceOf(v), d);
            load += graph->computeCost(v);
            // Estimated schedules never overlap on a device.
            EXPECT_GE(env.estimatedStart(v), previousFinish);
            previousFinish = env.estimatedFinish(v);
          }
          EXPECT_EQ(load, env.deviceLoad(d));
          totalLoad += load;
        }
        for (NodeId v = 0; v < numNodes; ++v)
          EXPECT_EQ(seen[v], 1) << name << " node " << v;
        EXPECT_DOUBLE_EQ(totalLoad, graph->totalCompute());

        // The placement order is topological; true estimates respect inputs.
        std::vector<int32_t> position(numNodes);
        for (int32_t i = 0; i < numNodes; ++i)
          position[env.placementOrder()[i]] = i;
        for (NodeId v = 0; v < numNodes; ++v) {
          for (NodeId u : graph->predecessors(v)) {
            EXPECT_LT(position[u], position[v]);
            if (estimate == StartEstimate::EarliestStart) {
              EXPECT_GE(env.estimatedStart(v), env.estimatedFinish(u));
            }
          }
        }
      }
    }
  }
}

TEST(EnvironmentTest, ResetStartsAFreshEpisode) {
  std::optional<Graph> graph = sharedGraph("ffnn_192nodes");
  ASSERT_TRUE(graph);
  Graph small = diamond();
  PlacementEnvironment env;
  auto episode = [&](const Graph &g, int32_t numDevices) {
    EXPECT_TRUE(env.reset(g, numDevices));
    while (!env.done()) {
      NodeId v = env.candidates()[0];
      env.step(v, env.earliestDevice(v));
    }
    ArrayView<DeviceId> placed = env.assignment();
    return std::vector<DeviceId>(placed.begin(), placed.end());
  };
  std::vector<DeviceId> first = episode(*graph, 4);
  episode(small, 8);
  episode(*graph, 2);
  EXPECT_EQ(episode(*graph, 4), first);
}

} // namespace

namespace {

/// A layered random DAG whose ready sets grow to hundreds of nodes when
/// placed in critical-path order, with small integer costs (ties).
Graph wideRandomGraph(int32_t numNodes, uint64_t seed) {
  SeededRandom random(seed);
  GraphBuilder builder;
  const int32_t width = 16;
  for (int32_t v = 0; v < numNodes; ++v)
    builder.addNode(1 + random.below(8), 1 + random.below(4));
  for (NodeId v = width; v < numNodes; ++v) {
    int32_t layer = v / width;
    for (uint32_t k = 0, n = 1 + random.below(3); k < n; ++k) {
      int32_t lo = std::max(0, (layer - 2) * width), hi = layer * width - 1;
      builder.addEdge(lo + static_cast<NodeId>(random.below(hi - lo + 1)), v);
    }
  }
  return *builder.build();
}

/// CandidateOrder::first() is the scan's pick (the first largest key in
/// environment order) at every step, and firstInEnvironmentOrder keeps the
/// environment's order; on graphs with ties and ready sets of hundreds.
TEST(CandidateOrderTest, MatchesAScanOfTheCandidates) {
  for (uint64_t seed : {1, 2, 3}) {
    Graph graph = wideRandomGraph(2000, seed);
    // Bottom levels of small integer costs: many ties.
    std::vector<double> key = computeBottomLevels(graph).value;
    PlacementEnvironment env;
    ASSERT_TRUE(env.reset(graph, 3));
    CandidateOrder order;
    order.reset(graph.numNodes(), key.data());
    SeededRandom random(seed);
    size_t largestReady = 0;
    std::vector<NodeId> window;
    while (!env.done()) {
      order.sync(env);
      ArrayView<NodeId> candidates = env.candidates();
      ASSERT_EQ(order.size(), candidates.size());
      largestReady = std::max(largestReady, candidates.size());
      NodeId scan = candidates[0];
      for (NodeId v : candidates)
        if (key[v] > key[scan])
          scan = v;
      ASSERT_EQ(order.first(), scan);
      // The window: the 8 largest keys (earliest among equals), in
      // environment order.
      order.firstInEnvironmentOrder(8, window);
      std::vector<size_t> positions(candidates.size());
      for (size_t i = 0; i < positions.size(); ++i)
        positions[i] = i;
      std::stable_sort(positions.begin(), positions.end(),
                       [&](size_t a, size_t b) {
                         return key[candidates[a]] > key[candidates[b]];
                       });
      positions.resize(std::min<size_t>(8, positions.size()));
      std::sort(positions.begin(), positions.end());
      std::vector<NodeId> expected;
      for (size_t i : positions)
        expected.push_back(candidates[i]);
      ASSERT_EQ(window, expected);
      // Mostly the critical-path pick (deep chains first: the others pile
      // up, so the ready set grows), sometimes a random one: removal from
      // anywhere must keep the order in step.
      NodeId v = random.below(10) == 0
                     ? candidates[random.below(candidates.size())]
                     : scan;
      ASSERT_TRUE(env.step(v, static_cast<DeviceId>(random.below(3))));
      order.remove(v);
    }
    EXPECT_TRUE(order.empty());
    EXPECT_GT(largestReady, 100u);
  }
}

} // namespace

namespace {

/// diamond() with outputs of 100, 200, 300 and 400 bytes.
Graph sizedDiamond() {
  GraphBuilder builder;
  const double compute[] = {1, 2, 3, 4};
  for (int i = 0; i < 4; ++i) {
    builder.addNode(compute[i], 10 * (i + 1));
    builder.setOutputBytes(i, 100 * (i + 1));
  }
  builder.addEdge(0, 1);
  builder.addEdge(0, 2);
  builder.addEdge(1, 3);
  builder.addEdge(2, 3);
  return *builder.build();
}

std::vector<double> pressureOf(const PlacementEnvironment &env, NodeId v) {
  std::vector<double> out(env.numDevices());
  env.memoryPressure(v, out.data());
  return out;
}

} // namespace

TEST(EnvironmentTest, MemoryEstimateByHand) {
  Graph graph = sizedDiamond();
  PlacementEnvironment env;
  ASSERT_TRUE(env.reset(graph, 2));
  EXPECT_FALSE(env.tracksMemory());
  env.setMemoryCapacities({1000, 500});
  ASSERT_TRUE(env.tracksMemory());

  ASSERT_TRUE(env.step(0, 0));
  EXPECT_EQ(env.residentBytes(0), 100);
  // Node 1 on device 1 also brings node 0's value there.
  EXPECT_EQ(pressureOf(env, 1), (std::vector<double>{0.3, 0.6}));
  ASSERT_TRUE(env.step(1, 1));
  EXPECT_EQ(env.residentBytes(1), 300);
  EXPECT_EQ(env.estimatedPeakBytes(1), 300);
  // Node 0's value is on both devices now.
  EXPECT_EQ(pressureOf(env, 2), (std::vector<double>{0.4, 1.2}));
  ASSERT_TRUE(env.step(2, 0));
  // Node 2 was the last reader of 0: its two copies are gone.
  EXPECT_EQ(env.residentBytes(0), 300);
  EXPECT_EQ(env.residentBytes(1), 200);
  EXPECT_EQ(env.estimatedPeakBytes(0), 400);
  EXPECT_EQ(pressureOf(env, 3), (std::vector<double>{0.9, 1.8}));
  EXPECT_FALSE(env.raisesOverflow(0.9, 0));
  EXPECT_TRUE(env.raisesOverflow(1.8, 1));
  double features[2 * kNumDeviceFeatures];
  env.deviceFeatures(3, features);
  EXPECT_EQ(features[kMemoryPressureFeature], 0.9);
  EXPECT_EQ(features[kNumDeviceFeatures + kMemoryPressureFeature], 1.8);
  ASSERT_TRUE(env.step(3, 0));
  // The graph output (node 3) stays; everything else was freed.
  EXPECT_EQ(env.residentBytes(0), 400);
  EXPECT_EQ(env.residentBytes(1), 0);
  EXPECT_EQ(env.estimatedPeakBytes(0), 900);
  EXPECT_EQ(env.estimatedPeakBytes(1), 300);

  // reset() turns the estimate off.
  ASSERT_TRUE(env.reset(graph, 2));
  EXPECT_FALSE(env.tracksMemory());
  EXPECT_EQ(pressureOf(env, 0), (std::vector<double>{0, 0}));
}

TEST(EnvironmentTest, MemoryEstimateNeedsBytesAndALimit) {
  PlacementEnvironment env;
  Graph unsized = diamond();
  ASSERT_TRUE(env.reset(unsized, 2));
  env.setMemoryCapacities({1000, 500});
  EXPECT_FALSE(env.tracksMemory());

  Graph sized = sizedDiamond();
  const double unlimited = std::numeric_limits<double>::infinity();
  ASSERT_TRUE(env.reset(sized, 2));
  env.setMemoryCapacities({unlimited, unlimited});
  EXPECT_FALSE(env.tracksMemory());
  ASSERT_TRUE(env.reset(sized, 2));
  env.setMemoryCapacities({1000}); // one value for two devices
  EXPECT_FALSE(env.tracksMemory());

  // An unlimited device reads 0; the limited one its share.
  ASSERT_TRUE(env.reset(sized, 2));
  env.setMemoryCapacities({unlimited, 200});
  ASSERT_TRUE(env.tracksMemory());
  EXPECT_EQ(pressureOf(env, 0), (std::vector<double>{0, 0.5}));
  ASSERT_TRUE(env.step(0, 1));
  ASSERT_TRUE(env.step(1, 1)); // 300 bytes held: over its 200
  EXPECT_EQ(env.estimatedPeakBytes(1), 300);
  // Holding 220 bytes would be over capacity but not above the peak
  // already reached: it does not raise the overflow; 320 does.
  EXPECT_FALSE(env.raisesOverflow(1.1, 1));
  EXPECT_TRUE(env.raisesOverflow(1.6, 1));
  EXPECT_FALSE(env.raisesOverflow(5.0, 0)); // unlimited
}

TEST(EnvironmentTest, MemoryEstimateMatchesSimulatorOnAChainInOrder) {
  // On a chain placed in order, the placement-order profile is exactly
  // the simulator's: each node's input and output are live while it runs.
  GraphBuilder builder;
  for (int i = 0; i < 6; ++i) {
    builder.addNode(1, 1);
    builder.setOutputBytes(i, 10 * (i + 1));
    if (i > 0)
      builder.addEdge(i - 1, i);
  }
  Graph graph = *builder.build();
  const std::vector<DeviceId> assignment = {0, 1, 1, 0, 1, 0};
  PlacementEnvironment env;
  ASSERT_TRUE(env.reset(graph, 2));
  env.setMemoryCapacities({1000, 1000});
  for (NodeId v = 0; v < 6; ++v)
    ASSERT_TRUE(env.step(v, assignment[v]));
  SimulatorOptions options;
  options.trackMemory = true;
  Simulator simulator(graph, 2, options);
  simulator.run(assignment);
  for (DeviceId d = 0; d < 2; ++d)
    EXPECT_EQ(env.estimatedPeakBytes(d), simulator.schedule().peakMemory[d])
        << "device " << d;
}
