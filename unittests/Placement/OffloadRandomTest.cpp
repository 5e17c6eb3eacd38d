//===- OffloadRandomTest.cpp - Offload plans on generated graphs --------===//
//
// planOffload on random skip chains and layered graphs (it must fit
// whenever every node's own inputs and output fit, and otherwise lower the
// overflow), the shared reference graphs, parallel chains that fit
// through order alone, its input checks and its determinism.
//
//===----------------------------------------------------------------------===//

#include "OffloadTestSupport.h"

using namespace doppler::placement;
using namespace doppler::placement::testing;

namespace {


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
