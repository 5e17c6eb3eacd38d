//===- HorizonTest.cpp - Bounded-horizon completions ----------------------===//

#include "Horizon.h"

#include "Doppler/Placement/Analysis.h"
#include "Doppler/Placement/Environment.h"

#include <gtest/gtest.h>

using namespace doppler::placement;
using namespace doppler::placement::learning;

namespace {

/// u and v (1 us each, outputs costing 100 us to move) both feed w (1 us).
Graph join() {
  GraphBuilder builder;
  NodeId u = builder.addNode(1, 100), v = builder.addNode(1, 100);
  NodeId w = builder.addNode(1, 0);
  builder.addEdge(u, w);
  builder.addEdge(v, w);
  return *builder.build();
}

TEST(HorizonTest, AJoinGoesWhereItsOtherInputIs) {
  // u is on device 1. v on device 1 runs after u (1 -> 2) and w follows at
  // once (2 -> 3); v on device 0 runs at 0 -> 1, but w waits 100 us for one
  // of its inputs wherever it goes (101 -> 102). The rule's device for v
  // alone (the earliest start) is 0; the horizon sees the join.
  Graph graph = join();
  std::vector<double> bottom = computeBottomLevels(graph).value;
  PlacementEnvironment env;
  ASSERT_TRUE(env.reset(graph, 2));
  ASSERT_TRUE(env.step(0, 1));
  EXPECT_EQ(env.earliestDevice(1), 0);
  HorizonLookahead horizon;
  horizon.reset(graph, 2, bottom, kHorizonNodes);
  std::vector<double> makespans(2);
  std::vector<NodeId> window = {1};
  EXPECT_EQ(horizon.evaluate(env, 1, window, makespans.data()), 1);
  EXPECT_DOUBLE_EQ(makespans[1], 3);
  EXPECT_DOUBLE_EQ(makespans[0], 102);
}

TEST(HorizonTest, TheWorkLeftBoundsTheEstimate) {
  // Four independent 10 us nodes on 2 devices, none placed: whatever the
  // first one's device, the horizon (the three others) ends at 20 us, and
  // no estimate is below the work over the devices (40 / 2).
  GraphBuilder builder;
  for (int i = 0; i < 4; ++i)
    builder.addNode(10, 1);
  Graph graph = *builder.build();
  std::vector<double> bottom = computeBottomLevels(graph).value;
  PlacementEnvironment env;
  ASSERT_TRUE(env.reset(graph, 2));
  HorizonLookahead horizon;
  horizon.reset(graph, 2, bottom, kHorizonNodes);
  std::vector<double> makespans(2);
  std::vector<NodeId> window = {0, 1, 2, 3};
  EXPECT_EQ(horizon.evaluate(env, 0, window, makespans.data()), 0);
  EXPECT_DOUBLE_EQ(makespans[0], 20);
  EXPECT_DOUBLE_EQ(makespans[1], 20);
  // With a horizon of one node, the two others are work left: still 20.
  horizon.reset(graph, 2, bottom, 1);
  horizon.evaluate(env, 0, window, makespans.data());
  EXPECT_DOUBLE_EQ(makespans[0], 20);
}

TEST(HorizonTest, OnlyTheEarliestDevicesAreTried) {
  // 12 devices, u on device 11: v is tried on the 8 devices with the
  // smallest est (0-7, free at 0); device 11 (est 1) is not among them and
  // reads as the worst tried, never the best.
  Graph graph = join();
  std::vector<double> bottom = computeBottomLevels(graph).value;
  PlacementEnvironment env;
  ASSERT_TRUE(env.reset(graph, 12));
  ASSERT_TRUE(env.step(0, 11));
  HorizonLookahead horizon;
  horizon.reset(graph, 12, bottom, kHorizonNodes);
  std::vector<double> makespans(12);
  std::vector<NodeId> window = {1};
  DeviceId best = horizon.evaluate(env, 1, window, makespans.data());
  EXPECT_LT(best, kHorizonDevices);
  double worst = 0;
  for (DeviceId d = 0; d < kHorizonDevices; ++d)
    worst = std::max(worst, makespans[d]);
  for (DeviceId d = kHorizonDevices; d < 12; ++d)
    EXPECT_EQ(makespans[d], worst);
}

} // namespace
