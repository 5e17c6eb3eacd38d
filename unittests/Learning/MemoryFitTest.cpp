//===- MemoryFitTest.cpp - The learned policy's placements made to fit ----===//
//
// Issue 17: no policy returns a placement over a device's memory when one
// that fits exists. The learned policy's placements (the embedded default
// model, greedy and best of 4 rollouts) go through fitToMemory as in
// doppler-place; on memory-tight graphs with a known feasible placement,
// every result must fit. The heuristics have the same test in
// unittests/Placement/MemoryFitTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "LearningTestSupport.h"

#include "Doppler/Placement/Heuristics.h"
#include "Doppler/Placement/MemoryFit.h"
#include "Doppler/Placement/Simulator.h"
#include "Doppler/Placement/System.h"

#include <gtest/gtest.h>

#include <cstdio>

using namespace doppler::placement;
using namespace doppler::placement::test_support;

namespace {

/// `graph` with seeded output sizes (64 KiB to 4 MiB per node): the
/// generated layered graphs carry costs only.
Graph withOutputBytes(const Graph &graph, uint64_t seed) {
  GraphBuilder builder;
  SeededRandom random(seed);
  for (NodeId v = 0; v < graph.numNodes(); ++v) {
    builder.addNode(graph.computeCost(v), graph.transferCost(v),
                    graph.opType(v));
    builder.setOutputBytes(v, 65536.0 * (1 + random.below(64)));
  }
  for (int32_t e = 0; e < graph.numEdges(); ++e)
    builder.addEdge(graph.edgeSource(e), graph.edgeTarget(e),
                    graph.edgeCost(e));
  return *builder.build();
}

TEST(LearnedMemoryFit, EveryLearnedPlacementIsMadeToFit) {
  if (!LearnedPolicy::hasDefaultModel())
    GTEST_SKIP() << "no embedded default model";
  std::string error;
  std::unique_ptr<LearnedPolicy> policy = LearnedPolicy::loadDefault(&error);
  ASSERT_TRUE(policy) << error;
  // 40 graphs of 40 to 80 nodes on 2 to 4 devices; capacities from a known
  // placement (critical-path or round-robin) times 1 + 0..10%.
  static const int kGraphs = 40;
  int total = 0, before = 0;
  SimulatorOptions tracking;
  tracking.trackMemory = true;
  for (int i = 0; i < kGraphs; ++i) {
    Graph graph = withOutputBytes(
        randomLayeredGraph(9100 + i, 40 + 10 * (i % 5), 6), 77 + i);
    const int32_t numDevices = 2 + i % 3;
    std::vector<DeviceId> known = i % 2 ? placeRoundRobin(graph, numDevices)
                                        : placeCriticalPath(graph, numDevices);
    Simulator judge(graph, System::uniform(numDevices), tracking);
    judge.run(known);
    std::vector<double> capacity = judge.schedule().peakMemory;
    for (double &bytes : capacity)
      bytes *= 1 + 0.01 * (i % 11);
    SystemBuilder builder(numDevices);
    builder.setMemoryCapacities(capacity);
    std::optional<System> system = builder.build(&error);
    ASSERT_TRUE(system) << error;
    for (int32_t samples : {0, 4}) {
      PlaceOptions options;
      options.samples = samples;
      options.seed = i;
      std::optional<PlacementResult> placed =
          policy->place(graph, numDevices, options, &error);
      ASSERT_TRUE(placed) << error;
      MemoryFitOptions fit;
      fit.seed = i;
      fit.maxEvaluations = 1500;
      std::optional<MemoryFitResult> result =
          fitToMemory(graph, *system, placed->assignment, fit, &error);
      ASSERT_TRUE(result) << error;
      ++total;
      before += result->changed;
      EXPECT_TRUE(result->feasible)
          << "graph " << i << ", samples " << samples << ": "
          << result->diagnosis;
      judge.run(result->assignment);
      for (DeviceId d = 0; d < numDevices; ++d)
        EXPECT_LE(judge.schedule().peakMemory[d], capacity[d])
            << "graph " << i << ", device " << d;
    }
  }
  std::printf("[ memfit   ] %d learned placements (%d graphs, greedy and "
              "best of 4), %d over capacity before the fit, all made to "
              "fit\n",
              total, kGraphs, before);
  EXPECT_GT(before, total / 4); // the set is memory-tight
}

} // namespace
