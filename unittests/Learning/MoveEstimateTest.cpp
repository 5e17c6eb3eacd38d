//===- MoveEstimateTest.cpp - The learned moves' makespan estimate --------===//
//
// LearnedMoves.h with LearnedMovesOptions::estimate: the heads-and-tails
// estimate is exact where a move changes no device's order but the moved
// node's own slot (a chain); it ranks moves much as the simulator does on
// random graphs; the climb it screens never returns worse than its start,
// keeps to its run budget, is deterministic and gains; and the better
// heuristic is the better of the two, as the tool's own pick was. The
// faster paths give the same numbers: a row of estimates is each move's
// estimate, and the policy starting from the heuristics' own run is the
// climb that runs its start again. The work bound is kept and
// deterministic.
//
//===----------------------------------------------------------------------===//

#include "Doppler/Placement/Learning/LearnedMoves.h"
#include "Doppler/Placement/Learning/LearnedPolicy.h"
#include "LearningTestSupport.h"
#include "MoveState.h"

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

TEST(MoveEstimateTest, RowIsTheSameAsEachMove) {
  // estimateRow (the climb's) against estimate() move by move: the same
  // numbers; with a cutoff, the moves below it keep theirs and the others
  // get a bound that is at most their estimate and at least the cutoff.
  int64_t cut = 0, kept = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    Graph graph = randomLayeredGraph(seed + 40, 160, 9);
    const int32_t devices = 2 + static_cast<int32_t>(seed % 4) * 2;
    Simulator judge(graph, devices);
    moves_detail::MoveState state(judge, placeCriticalPath(graph, devices));
    state.evaluate();
    state.keep();
    state.keepEstimates();
    const double cutoff = state.makespan() * (1 - 1e-9);
    std::vector<double> row(devices), heads(devices), cutRow(devices),
        cutHeads(devices);
    for (NodeId v = 0; v < graph.numNodes(); ++v) {
      state.estimateRow(v, row.data(), heads.data());
      state.estimateRow(v, cutRow.data(), cutHeads.data(), cutoff);
      for (DeviceId d = 0; d < devices; ++d) {
        double head = 0;
        const double estimate = state.estimate(v, d, &head);
        EXPECT_EQ(row[d], estimate) << "seed " << seed << " node " << v;
        EXPECT_EQ(heads[d], head);
        if (cutRow[d] < cutoff) {
          EXPECT_EQ(cutRow[d], estimate);
          EXPECT_EQ(cutHeads[d], head);
          ++kept;
        } else {
          EXPECT_LE(cutRow[d], estimate);
          EXPECT_GE(estimate, cutoff);
          ++cut;
        }
      }
    }
  }
  EXPECT_GT(cut, 0);
  EXPECT_GT(kept, 0);
}

TEST(MoveEstimateTest, ThePolicyStartsFromTheHeuristicsOwnRun) {
  // placeWithLearnedMoves hands the better heuristic's schedule to the
  // climb instead of running the judge on it again: the same placement,
  // makespan, runs and moves as the climb from placeBetterHeuristic.
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    Graph graph = randomLayeredGraph(seed + 60, 180, 10);
    const int32_t devices = 2 + static_cast<int32_t>(seed % 3) * 3;
    LearnedMovesOptions options;
    options.estimate = true;
    options.maxEvaluations = 40;
    Simulator judge(graph, devices);
    std::string error;
    auto policy = placeWithLearnedMoves(judge, {}, MoveModel::embedded(),
                                        options, &error);
    ASSERT_TRUE(policy) << error;
    auto start = placeBetterHeuristic(judge, {}, nullptr, nullptr, &error);
    ASSERT_TRUE(start) << error;
    auto climb = improveWithLearnedMoves(judge, *start, MoveModel::embedded(),
                                         options, &error);
    ASSERT_TRUE(climb) << error;
    EXPECT_EQ(policy->assignment, climb->assignment) << "seed " << seed;
    EXPECT_EQ(policy->makespan, climb->makespan);
    EXPECT_EQ(policy->initialMakespan, climb->initialMakespan);
    EXPECT_EQ(policy->evaluations, climb->evaluations);
    EXPECT_EQ(policy->accepted, climb->accepted);
  }
}

TEST(MoveEstimateTest, TheWorkBoundIsKeptAndDeterministic) {
  int improved = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    Graph graph = randomLayeredGraph(seed + 80, 200, 10);
    const int32_t devices = 4 + static_cast<int32_t>(seed % 2) * 4;
    Simulator judge(graph, devices);
    std::vector<DeviceId> start = placeCriticalPath(graph, devices);
    const double startMakespan = judge.run(start);
    const int64_t pass = graph.numNodes() + graph.numEdges();
    LearnedMovesOptions options;
    options.estimate = true;
    options.maxEvaluations = 2048;
    auto unbounded = improveWithLearnedMoves(judge, start,
                                             MoveModel::embedded(), options);
    ASSERT_TRUE(unbounded);
    // Less than a schedule read and a run: no round, the start.
    options.maxWork = 2 * pass - 1;
    auto none = improveWithLearnedMoves(judge, start, MoveModel::embedded(),
                                        options);
    ASSERT_TRUE(none);
    EXPECT_EQ(none->assignment, start);
    EXPECT_EQ(none->evaluations, 0);
    EXPECT_EQ(none->work, 0);
    // The default bound: never worse, fewer runs than unbounded, the same
    // twice; a later round starts only within the bound.
    options.maxWork = defaultMoveWork(graph, devices);
    EXPECT_EQ(options.maxWork,
              static_cast<int64_t>(kMoveWorkPerPass * pass *
                                   (1 + devices / 16.0)));
    auto first = improveWithLearnedMoves(judge, start, MoveModel::embedded(),
                                         options);
    auto second = improveWithLearnedMoves(judge, start, MoveModel::embedded(),
                                          options);
    ASSERT_TRUE(first && second);
    EXPECT_EQ(first->assignment, second->assignment);
    EXPECT_EQ(first->work, second->work);
    EXPECT_LE(first->makespan, startMakespan);
    EXPECT_DOUBLE_EQ(judge.run(first->assignment), first->makespan);
    EXPECT_GE(first->evaluations, 1);
    EXPECT_LE(first->evaluations, unbounded->evaluations);
    EXPECT_GE(first->makespan, unbounded->makespan);
    EXPECT_GT(first->work, 0);
    improved += first->makespan < startMakespan * (1 - 1e-9);
    // The policy by name uses that bound by default.
    LearnedPolicyOptions learned;
    std::string error;
    auto placed = placeWithNamedPolicy(kLearnedMovesPolicyName, graph,
                                       devices, {}, learned, &error);
    ASSERT_TRUE(placed) << error;
    Simulator policyJudge(graph, devices);
    options.maxEvaluations = defaultMoveEvaluations(graph, devices);
    auto expected = placeWithLearnedMoves(policyJudge, {},
                                          MoveModel::embedded(), options);
    ASSERT_TRUE(expected);
    EXPECT_EQ(*placed, expected->assignment);
  }
  EXPECT_GE(improved, 3);
}

} // namespace
