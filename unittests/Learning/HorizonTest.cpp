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

/// A graph on D devices, with an environment and a horizon over it; `u` of
/// `placed` goes on device `on` first (none when u < 0).
struct HorizonCase {
  Graph graph;
  std::vector<double> bottom;
  PlacementEnvironment env;
  HorizonLookahead horizon;
  std::vector<double> makespans;
  HorizonCase(Graph g, int32_t devices, NodeId u = -1, DeviceId on = 0)
      : graph(std::move(g)), bottom(computeBottomLevels(graph).value),
        makespans(devices) {
    env.reset(graph, devices);
    if (u >= 0)
      env.step(u, on);
    horizon.reset(graph, devices, bottom, kHorizonNodes);
  }
  DeviceId evaluate(NodeId v, std::vector<NodeId> window) {
    return horizon.evaluate(env, v, window, makespans.data());
  }
};

TEST(HorizonTest, AJoinGoesWhereItsOtherInputIs) {
  // u is on device 1. v on device 1 runs after u (1 -> 2) and w follows at
  // once (2 -> 3); v on device 0 runs at 0 -> 1, but w waits 100 us for one
  // of its inputs wherever it goes (101 -> 102). The rule's device for v
  // alone (the earliest start) is 0; the horizon sees the join.
  HorizonCase s(join(), 2, /*u=*/0, /*on=*/1);
  EXPECT_EQ(s.env.earliestDevice(1), 0);
  EXPECT_EQ(s.evaluate(1, {1}), 1);
  EXPECT_DOUBLE_EQ(s.makespans[1], 3);
  EXPECT_DOUBLE_EQ(s.makespans[0], 102);
}

TEST(HorizonTest, TheWorkLeftBoundsTheEstimate) {
  // Four independent 10 us nodes on 2 devices, none placed: whatever the
  // first one's device, the horizon (the three others) ends at 20 us, and
  // no estimate is below the work over the devices (40 / 2).
  GraphBuilder builder;
  for (int i = 0; i < 4; ++i)
    builder.addNode(10, 1);
  HorizonCase s(*builder.build(), 2);
  EXPECT_EQ(s.evaluate(0, {0, 1, 2, 3}), 0);
  EXPECT_DOUBLE_EQ(s.makespans[0], 20);
  EXPECT_DOUBLE_EQ(s.makespans[1], 20);
  // With a horizon of one node, the two others are work left: still 20.
  s.horizon.reset(s.graph, 2, s.bottom, 1);
  s.evaluate(0, {0, 1, 2, 3});
  EXPECT_DOUBLE_EQ(s.makespans[0], 20);
}

TEST(HorizonTest, OnlyTheEarliestDevicesAreTried) {
  // 12 devices, u on device 11: v is tried on the 8 devices with the
  // smallest est (0-7, free at 0); device 11 (est 1) is not among them and
  // reads as the worst tried, never the best.
  HorizonCase s(join(), 12, /*u=*/0, /*on=*/11);
  EXPECT_LT(s.evaluate(1, {1}), kHorizonDevices);
  double worst = 0;
  for (DeviceId d = 0; d < kHorizonDevices; ++d)
    worst = std::max(worst, s.makespans[d]);
  for (DeviceId d = kHorizonDevices; d < 12; ++d)
    EXPECT_EQ(s.makespans[d], worst);
}

} // namespace
