//===- MemoryFitTest.cpp - Placements that fit the devices' memory --------===//
//
// fitToMemory keeps placements that fit, repairs ones that do not (on small
// graphs and on a generated set of memory-tight random layered graphs where
// a feasible placement provably exists), and says why when none can fit;
// memoryLowerBoundViolation's proofs.
//
//===----------------------------------------------------------------------===//

#include "Doppler/Placement/MemoryFit.h"

#include "Doppler/Placement/Heuristics.h"
#include "Doppler/Placement/Simulator.h"
#include "PlacementTestGraphs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

using namespace doppler::placement;
using namespace doppler::placement::testing;

namespace {

/// Two independent chains a -> b and c -> d (unit compute, transfer 1),
/// outputs of 100 bytes each.
Graph twoChains() {
  return makeGraph({{1, 1, 100}, {1, 1, 100}, {1, 1, 100}, {1, 1, 100}},
                   {{0, 1}, {2, 3}});
}

TEST(BufferIntervals, AgreeWithTheSimulatorsPeaks) {
  // On random layered graphs and placements: the live bytes at each
  // device's Schedule::peakMemoryTime add up to its peak, and no instant
  // (every allocation is a candidate) holds more.
  SimulatorOptions tracking;
  tracking.trackMemory = true;
  for (uint64_t seed = 0; seed < 100; ++seed) {
    Graph graph = randomLayeredGraph(seed);
    const int32_t numDevices = 1 + static_cast<int32_t>(seed % 4);
    std::vector<DeviceId> assignment =
        placeRandom(graph, numDevices, seed);
    Simulator simulator(graph, System::uniform(numDevices), tracking);
    simulator.run(assignment);
    const Schedule &schedule = simulator.schedule();
    std::vector<BufferInterval> buffers =
        bufferIntervals(graph, assignment, schedule);
    auto liveOn = [&](DeviceId d, double time) {
      double bytes = 0;
      for (const BufferInterval &buffer : buffers)
        if (buffer.device == d && buffer.liveAt(time))
          bytes += buffer.bytes;
      return bytes;
    };
    for (DeviceId d = 0; d < numDevices; ++d) {
      EXPECT_EQ(liveOn(d, schedule.peakMemoryTime[d]), schedule.peakMemory[d])
          << "seed " << seed << ", device " << d;
      for (const BufferInterval &buffer : buffers) {
        if (buffer.device == d) {
          EXPECT_LE(liveOn(d, buffer.allocated), schedule.peakMemory[d]);
        }
      }
    }
  }
}

TEST(MemoryFit, KeepsAPlacementThatFits) {
  Graph graph = twoChains();
  std::vector<DeviceId> assignment = {0, 0, 1, 1};
  std::optional<MemoryFitResult> result =
      fitToMemory(graph, systemWith({200, 200}), assignment, {});
  ASSERT_TRUE(result);
  EXPECT_TRUE(result->feasible);
  EXPECT_FALSE(result->changed);
  EXPECT_EQ(result->assignment, assignment);
  EXPECT_EQ(result->evaluations, 1);
  EXPECT_EQ(result->makespan, 2);
  EXPECT_EQ(result->peakMemory, (std::vector<double>{200, 200}));
  EXPECT_EQ(result->initialPeakMemory, result->peakMemory);
  EXPECT_TRUE(result->diagnosis.empty());
}

TEST(MemoryFit, MovesAChainOffAnOverfullDevice) {
  // All on device 0: a 0..1, b 1..2, c 2..3, d 3..4; b and d are graph
  // outputs, so [3,4) holds b, c, d = 300 > 250. One chain per device fits
  // (200 each).
  Graph graph = twoChains();
  std::vector<DeviceId> assignment = {0, 0, 0, 0};
  MemoryFitOptions options;
  options.maxEvaluations = 200;
  std::optional<MemoryFitResult> result =
      fitToMemory(graph, systemWith({250, 250}), assignment, options);
  ASSERT_TRUE(result);
  EXPECT_EQ(result->initialPeakMemory, (std::vector<double>{300, 0}));
  EXPECT_EQ(result->initialMakespan, 4);
  EXPECT_TRUE(result->feasible) << result->diagnosis;
  EXPECT_TRUE(result->changed);
  EXPECT_LE(result->peakMemory[0], 250);
  EXPECT_LE(result->peakMemory[1], 250);
  EXPECT_EQ(result->makespan, 2); // the annealing then finds the best
  EXPECT_LE(result->evaluations, 200);
  // The reported figures are the judge's on the returned placement.
  SimulatorOptions tracking;
  tracking.trackMemory = true;
  Simulator simulator(graph, System::uniform(2), tracking);
  EXPECT_EQ(simulator.run(result->assignment), result->makespan);
  EXPECT_EQ(simulator.schedule().peakMemory, result->peakMemory);
}

TEST(MemoryFit, ResidentBytesCount) {
  // One chain per device: 200 bytes each, but device 1 has 60 resident, so
  // it peaks at 260 > 250. Everything on device 0 (300 <= 300) fits.
  Graph graph = twoChains();
  std::vector<DeviceId> assignment = {0, 0, 1, 1};
  MemoryFitOptions options;
  options.maxEvaluations = 1500;
  options.residentBytes = {0, 60};
  std::optional<MemoryFitResult> result =
      fitToMemory(graph, systemWith({300, 250}), assignment, options);
  ASSERT_TRUE(result);
  EXPECT_EQ(result->initialPeakMemory, (std::vector<double>{200, 260}));
  EXPECT_TRUE(result->feasible) << result->diagnosis;
  EXPECT_LE(result->peakMemory[0], 300);
  EXPECT_LE(result->peakMemory[1], 250);
  EXPECT_GE(result->peakMemory[1], 60);
  // Without the resident bytes the input fits as it is.
  options.residentBytes.clear();
  result = fitToMemory(graph, systemWith({300, 250}), assignment, options);
  ASSERT_TRUE(result);
  EXPECT_TRUE(result->feasible);
  EXPECT_FALSE(result->changed);
}

TEST(MemoryFit, EdgeCases) {
  // An empty graph fits.
  Graph empty = makeGraph({}, {});
  std::optional<MemoryFitResult> result =
      fitToMemory(empty, systemWith({0, 0}), std::vector<DeviceId>{}, {});
  ASSERT_TRUE(result);
  EXPECT_TRUE(result->feasible);
  EXPECT_EQ(result->makespan, 0);
  // One device: nowhere to move; the diagnosis names the best found.
  Graph graph = twoChains();
  result = fitToMemory(graph, systemWith({250}),
                       std::vector<DeviceId>{0, 0, 0, 0}, {});
  ASSERT_TRUE(result);
  EXPECT_FALSE(result->feasible);
  EXPECT_FALSE(result->changed);
  EXPECT_EQ(result->diagnosis,
            "best found: device 0 peaks at 300 B, over its 250 B capacity");
  // An unlimited device takes the overflow.
  result = fitToMemory(graph, systemWith({150, kUnlimited}),
                       std::vector<DeviceId>{0, 0, 0, 0}, {});
  ASSERT_TRUE(result);
  EXPECT_TRUE(result->feasible) << result->diagnosis;
  EXPECT_LE(result->peakMemory[0], 150);
}

TEST(MemoryFit, StaysWithinTheEvaluationBudget) {
  // Budgets from 1 up: never more simulator runs than allowed, and the
  // reported figures are always the returned placement's.
  Graph graph = randomLayeredGraph(11);
  SimulatorOptions tracking;
  tracking.trackMemory = true;
  Simulator simulator(graph, System::uniform(3), tracking);
  simulator.run(placeRoundRobin(graph, 3));
  System system = systemWith(simulator.schedule().peakMemory);
  std::vector<DeviceId> start = placeSingle(graph, 3);
  bool fitted = false;
  for (int64_t budget = 1; budget <= 60; ++budget) {
    MemoryFitOptions options;
    options.maxEvaluations = budget;
    std::optional<MemoryFitResult> result =
        fitToMemory(graph, system, start, options);
    ASSERT_TRUE(result);
    EXPECT_LE(result->evaluations, budget);
    simulator.run(result->assignment);
    EXPECT_EQ(simulator.schedule().makespan, result->makespan);
    EXPECT_EQ(simulator.schedule().peakMemory, result->peakMemory);
    fitted |= result->feasible;
  }
  EXPECT_TRUE(fitted);
  std::string error;
  MemoryFitOptions none;
  none.maxEvaluations = 0;
  EXPECT_FALSE(fitToMemory(graph, system, start, none, &error));
  EXPECT_EQ(error, "fitting a placement to memory needs an evaluation budget "
                   "of at least 1, got 0");
}

TEST(MemoryFit, RejectsBadInputs) {
  Graph noBytes = [] {
    GraphBuilder builder;
    builder.addNode(1, 1);
    return *builder.build();
  }();
  std::string error;
  EXPECT_FALSE(fitToMemory(noBytes, systemWith({1}), std::vector<DeviceId>{0},
                           {}, &error));
  EXPECT_EQ(error, "fitting a placement to memory needs the output size of "
                   "every node, and the graph has none");
  Graph graph = twoChains();
  MemoryFitOptions options;
  options.residentBytes = {1};
  EXPECT_FALSE(fitToMemory(graph, systemWith({1, 1}),
                           std::vector<DeviceId>{0, 0, 0, 0}, options, &error));
  EXPECT_EQ(error, "expected 2 resident byte counts, got 1");
  EXPECT_FALSE(fitToMemory(graph, systemWith({1, 1}),
                           std::vector<DeviceId>{0, 0, 2, 0}, {}, &error));
  EXPECT_EQ(error, "node 2: device 2 out of range [0, 2)");
}

TEST(MemoryLowerBound, ProvesImpossibility) {
  // Node 3 reads 1 and 2: it needs 100 + 200 + 400 = 700 at once.
  Graph graph = makeGraph(
      {{1, 1, 50}, {1, 1, 100}, {1, 1, 200}, {1, 1, 400}},
      {{0, 1}, {0, 2}, {1, 3}, {2, 3}});
  EXPECT_EQ(memoryLowerBoundViolation(graph, systemWith({700, 700})), "");
  EXPECT_EQ(memoryLowerBoundViolation(graph, systemWith({699, 600})),
            "node 3 needs 700 B at once (inputs and output) but the largest "
            "device holds 699 B");
  EXPECT_EQ(memoryLowerBoundViolation(graph, systemWith({2000, 2000}),
                                      {1500, 1600}),
            "node 3 needs 700 B at once (inputs and output) but the largest "
            "device holds 500 B");
  EXPECT_EQ(memoryLowerBoundViolation(graph, systemWith({2000, 2000}),
                                      {0, 2001}),
            "device 1 holds 2 kB but 2 kB are resident there");
  // Three 1 GB graph outputs on two 1.2 GB devices.
  Graph outputs = makeGraph({{1, 1, 1e9}, {1, 1, 1e9}, {1, 1, 1e9}}, {});
  EXPECT_EQ(memoryLowerBoundViolation(outputs, systemWith({1.2e9, 1.2e9})),
            "the graph outputs need 3 GB together (they stay live to the "
            "end) but all devices hold 2.4 GB");
  EXPECT_EQ(memoryLowerBoundViolation(outputs, systemWith({kUnlimited, 1})),
            "");
}

TEST(MemoryFit, AnImpossibleInstanceSaysSo) {
  Graph graph = makeGraph(
      {{1, 1, 50}, {1, 1, 100}, {1, 1, 200}, {1, 1, 400}},
      {{0, 1}, {0, 2}, {1, 3}, {2, 3}});
  std::optional<MemoryFitResult> result = fitToMemory(
      graph, systemWith({650, 650}), std::vector<DeviceId>{0, 0, 1, 1}, {});
  ASSERT_TRUE(result);
  EXPECT_FALSE(result->feasible);
  EXPECT_FALSE(result->changed);
  EXPECT_EQ(result->diagnosis,
            "node 3 needs 700 B at once (inputs and output) but the largest "
            "device holds 650 B");
}

TEST(MemoryFit, RepairsEveryPolicyOnMemoryTightGraphs) {
  // 200 random layered graphs on 2 to 4 devices. A known placement P*
  // (round-robin or critical-path, alternately) sets each device's capacity
  // to its simulated peak there times 1 + slack (slack 0 to 10%), so a
  // feasible placement exists. Every heuristic policy's placement must
  // then be made to fit.
  static const int kGraphs = 200;
  int before = 0, total = 0, changedCount = 0, restarted = 0;
  int64_t evaluations = 0;
  double slowdown = 0;
  SimulatorOptions tracking;
  tracking.trackMemory = true;
  for (int i = 0; i < kGraphs; ++i) {
    Graph graph = randomLayeredGraph(5000 + i);
    const int32_t numDevices = 2 + i % 3;
    std::vector<DeviceId> known = i % 2 ? placeRoundRobin(graph, numDevices)
                                        : placeCriticalPath(graph, numDevices);
    Simulator simulator(graph, System::uniform(numDevices), tracking);
    simulator.run(known);
    const double slack = 0.1 * (i % 11) / 10;
    std::vector<double> capacity = simulator.schedule().peakMemory;
    for (double &bytes : capacity)
      bytes *= 1 + slack;
    System system = systemWith(capacity);
    for (const std::string &policy : heuristicPolicyNames()) {
      PolicyOptions policyOptions;
      policyOptions.seed = i;
      std::string error;
      std::optional<std::vector<DeviceId>> start =
          placeWithPolicy(policy, graph, numDevices, policyOptions, &error);
      ASSERT_TRUE(start) << error;
      MemoryFitOptions options;
      options.seed = i;
      options.maxEvaluations = 1500;
      std::optional<MemoryFitResult> result =
          fitToMemory(graph, system, *start, options, &error);
      ASSERT_TRUE(result) << error;
      ++total;
      bool fitted = true;
      for (DeviceId d = 0; d < numDevices; ++d)
        fitted &= result->initialPeakMemory[d] <= capacity[d];
      before += !fitted;
      changedCount += result->changed;
      restarted += !result->restartPolicy.empty();
      evaluations += result->evaluations;
      EXPECT_TRUE(result->feasible)
          << "graph " << i << ", policy " << policy << ": "
          << result->diagnosis;
      EXPECT_EQ(result->changed, !fitted);
      EXPECT_LE(result->evaluations, options.maxEvaluations);
      // The figures are the judge's on the returned placement.
      simulator.run(result->assignment);
      EXPECT_EQ(simulator.schedule().makespan, result->makespan);
      EXPECT_EQ(simulator.schedule().peakMemory, result->peakMemory);
      for (DeviceId d = 0; d < numDevices; ++d)
        EXPECT_LE(result->peakMemory[d], capacity[d]);
      if (result->changed)
        slowdown += result->makespan / result->initialMakespan;
    }
  }
  std::printf("[ memfit   ] %d placements (%zu policies x %d graphs), %d "
              "over capacity before the fit (%d of them fitted only from a "
              "restart); %d evaluations on average; makespan ratio "
              "after/before %.3f on average over the changed ones\n",
              total, heuristicPolicyNames().size(), kGraphs, before,
              restarted, static_cast<int>(evaluations / total),
              changedCount ? slowdown / changedCount : 1.0);
  EXPECT_GT(before, total / 4); // the set is memory-tight
  // The repair itself does the work; restarts are the exception.
  EXPECT_LT(restarted, before / 20);
}

TEST(MemoryFit, SameSeedSameResult) {
  Graph graph = randomLayeredGraph(42);
  std::vector<DeviceId> start = placeSingle(graph, 3);
  SimulatorOptions tracking;
  tracking.trackMemory = true;
  Simulator simulator(graph, System::uniform(3), tracking);
  simulator.run(placeRoundRobin(graph, 3));
  System system = systemWith(simulator.schedule().peakMemory);
  MemoryFitOptions options;
  options.seed = 7;
  options.maxEvaluations = 500;
  std::optional<MemoryFitResult> first =
      fitToMemory(graph, system, start, options);
  std::optional<MemoryFitResult> second =
      fitToMemory(graph, system, start, options);
  ASSERT_TRUE(first && second);
  EXPECT_TRUE(first->feasible) << first->diagnosis;
  EXPECT_EQ(first->assignment, second->assignment);
  EXPECT_EQ(first->makespan, second->makespan);
  EXPECT_EQ(first->evaluations, second->evaluations);
}

} // namespace
