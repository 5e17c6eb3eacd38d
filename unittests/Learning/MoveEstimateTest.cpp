//===- MoveEstimateTest.cpp - The learned moves' makespan estimate --------===//
//
// LearnedMoves.h with LearnedMovesOptions::estimate: the heads-and-tails
// estimate is exact where a move changes no device's order but the moved
// node's own slot (a chain); it ranks moves much as the simulator does on
// random graphs; the climb it screens never returns worse than its start,
// keeps to its run budget, is deterministic and gains; and the better
// heuristic is the better of the two, as the tool's own pick was.
//
//===----------------------------------------------------------------------===//

#include "Doppler/Placement/Learning/LearnedMoves.h"
#include "LearningTestSupport.h"

#include "gtest/gtest.h"

using namespace doppler::placement;
using doppler::placement::test_support::randomLayeredGraph;

namespace {

Graph chainGraph() {
  GraphBuilder builder;
  const double compute[] = {3, 5, 2, 7, 4, 1};
  for (int i = 0; i < 6; ++i)
    builder.addNode(compute[i], 1.5 + i);
  for (NodeId v = 1; v < 6; ++v)
    builder.addEdge(v - 1, v);
  return *builder.build();
}

TEST(MoveEstimateTest, ExactOnAChain) {
  Graph graph = chainGraph();
  Simulator judge(graph, 2);
  std::vector<DeviceId> placement(6, 0);
  std::vector<std::pair<NodeId, DeviceId>> moves;
  for (NodeId v = 0; v < 6; ++v)
    moves.push_back({v, 1});
  std::vector<double> estimates =
      estimateMoveMakespans(judge, placement, moves);
  ASSERT_EQ(estimates.size(), moves.size());
  for (NodeId v = 0; v < 6; ++v) {
    std::vector<DeviceId> moved = placement;
    moved[v] = 1;
    EXPECT_DOUBLE_EQ(estimates[v], judge.run(moved)) << "node " << v;
  }
  // From a split chain too: nodes 3-5 on device 1; moving any one node
  // changes only its own slot.
  for (NodeId v = 3; v < 6; ++v)
    placement[v] = 1;
  moves.clear();
  for (NodeId v = 0; v < 6; ++v)
    moves.push_back({v, placement[v] == 0 ? 1 : 0});
  estimates = estimateMoveMakespans(judge, placement, moves);
  for (NodeId v = 0; v < 6; ++v) {
    std::vector<DeviceId> moved = placement;
    moved[v] = moves[v].second;
    EXPECT_DOUBLE_EQ(estimates[v], judge.run(moved)) << "node " << v;
  }
}

TEST(MoveEstimateTest, RanksMovesMuchAsTheSimulatorDoes) {
  int64_t estimatedBetter = 0, bothBetter = 0, simulatedBetter = 0;
  double spearman = 0;
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    Graph graph = randomLayeredGraph(seed, 150, 8);
    const int32_t devices = 3 + static_cast<int32_t>(seed % 2);
    Simulator judge(graph, devices);
    MoveEstimateAgreement a =
        checkMoveEstimates(judge, placeCriticalPath(graph, devices));
    ASSERT_GT(a.candidates, 0);
    EXPECT_LE(a.bothBetter, std::min(a.estimatedBetter, a.simulatedBetter));
    EXPECT_GT(a.exact, 0);
    estimatedBetter += a.estimatedBetter;
    simulatedBetter += a.simulatedBetter;
    bothBetter += a.bothBetter;
    spearman += a.spearman / 4;
  }
  // Most moves the estimate calls shortening are, and it finds most of
  // those that are; its order correlates with the simulator's.
  ASSERT_GT(estimatedBetter, 0);
  EXPECT_GE(static_cast<double>(bothBetter) / estimatedBetter, 0.5);
  EXPECT_GE(static_cast<double>(bothBetter) / simulatedBetter, 0.5);
  EXPECT_GT(spearman, 0.5);
}

TEST(MoveEstimateTest, ClimbNeverWorseWithinBudgetDeterministicAndGains) {
  int improved = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    Graph graph = randomLayeredGraph(seed + 20, 200, 10);
    const int32_t devices = 2 + static_cast<int32_t>(seed % 3) * 2;
    Simulator judge(graph, devices);
    std::vector<DeviceId> start = placeCriticalPath(graph, devices);
    const double startMakespan = judge.run(start);
    LearnedMovesOptions options;
    options.estimate = true;
    options.maxEvaluations = 30;
    std::string error;
    auto first = improveWithLearnedMoves(judge, start, MoveModel::embedded(),
                                         options, &error);
    ASSERT_TRUE(first) << error;
    EXPECT_LE(first->makespan, startMakespan);
    EXPECT_LE(first->evaluations, 30);
    EXPECT_DOUBLE_EQ(judge.run(first->assignment), first->makespan);
    EXPECT_EQ(first->batchesKept + first->estimatedKept + first->modelKept > 0,
              first->accepted > 0);
    auto second = improveWithLearnedMoves(judge, start, MoveModel::embedded(),
                                          options, &error);
    ASSERT_TRUE(second) << error;
    EXPECT_EQ(first->assignment, second->assignment);
    improved += first->makespan < startMakespan * (1 - 1e-9);
  }
  EXPECT_GE(improved, 4);
}

TEST(MoveEstimateTest, NoRunsKeepsTheStart) {
  Graph graph = randomLayeredGraph(5, 80, 6);
  Simulator judge(graph, 3);
  std::vector<DeviceId> start = placeCriticalPath(graph, 3);
  LearnedMovesOptions options;
  options.estimate = true;
  options.maxEvaluations = 0;
  auto result = improveWithLearnedMoves(judge, start, MoveModel::embedded(),
                                        options, nullptr);
  ASSERT_TRUE(result);
  EXPECT_EQ(result->assignment, start);
  EXPECT_EQ(result->evaluations, 0);
}

TEST(MoveEstimateTest, BetterHeuristicIsTheBetterOfTheTwo) {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    Graph graph = randomLayeredGraph(seed, 120, 8);
    const int32_t devices = 2 + static_cast<int32_t>(seed % 4);
    Simulator judge(graph, devices);
    std::vector<DeviceId> cp = placeCriticalPath(graph, devices);
    std::vector<DeviceId> ja = placeJoinAware(graph, devices);
    const double cpMakespan = judge.run(cp), jaMakespan = judge.run(ja);
    std::string_view name;
    double makespan = 0;
    auto better = placeBetterHeuristic(judge, {}, &name, &makespan, nullptr);
    ASSERT_TRUE(better);
    const bool join = jaMakespan < cpMakespan;
    EXPECT_EQ(*better, join ? ja : cp);
    EXPECT_EQ(name, join ? "join-aware" : "critical-path");
    EXPECT_EQ(makespan, std::min(cpMakespan, jaMakespan));
  }
}

} // namespace
