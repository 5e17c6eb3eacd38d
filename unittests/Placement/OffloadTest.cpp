//===- OffloadTest.cpp - Evicting values to host memory and back ----------===//
//
// buildOffloadGraph against timelines and peaks computed by hand from the
// rules of Offload.h and SimulatorOptions::trackMemory; planOffload on
// memory-tight chains, diamonds and random layered graphs (it must fit
// whenever every node's own inputs and output fit), its diagnoses and its
// determinism.
//
//===----------------------------------------------------------------------===//

#include "OffloadTestSupport.h"

using namespace doppler::placement;
using namespace doppler::placement::testing;

namespace {

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

/// x0 -> x1 -> ... -> x9, and x(i) -> x(9-i): skip connections keep the
/// early outputs live while the middle runs. 100 bytes each but the sink
/// (1 byte); unit compute.
Graph uNetLikeChain() {
  std::vector<NodeSpec> nodes(10, NodeSpec{1, 1, 100});
  nodes[9].bytes = 1;
  std::vector<std::pair<NodeId, NodeId>> edges;
  for (NodeId i = 0; i + 1 < 10; ++i)
    edges.emplace_back(i, i + 1);
  for (NodeId i = 0; i < 4; ++i)
    edges.emplace_back(i, 9 - i);
  return makeGraph(nodes, edges);
}

TEST(PlanOffload, FitsAUNetLikeChain) {
  Graph graph = uNetLikeChain();
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
  // The U-Net-like chain: every evaluation budget and eviction limit is
  // kept, and the plan is always its own prediction.
  Graph graph = uNetLikeChain();
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

} // namespace
