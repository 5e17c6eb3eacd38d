//===- BudgetTest.cpp - Placement within a budget --------------------------===//
//
// placeWithinBudget (Budget.h): its starts, its refinement, determinism for
// a budget in simulator runs, and the default budget's size.
//
//===----------------------------------------------------------------------===//

#include "Doppler/Placement/Learning/Budget.h"
#include "Doppler/Placement/Analysis.h"
#include "LearningTestSupport.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cstdlib>

using namespace doppler::placement;
using doppler::placement::test_support::randomLayeredGraph;

namespace {

/// Makes the loader find the library built beside the tests.
void useBuiltLibrary() {
  setenv("DOPPLER_LEARNING_LIBRARY", DOPPLER_LEARNING_LIBRARY_FILE, 1);
}

std::optional<Graph> sharedGraph(const std::string &name) {
  return readReferenceGraph(std::string(DOPPLER_SHARED_DATA_DIR) + "/graphs/" +
                            name);
}

TEST(BudgetTest, AHeuristicWithoutABudgetIsThatHeuristic) {
  Graph graph = randomLayeredGraph(3, 60, 6);
  Simulator judge(graph, 3);
  BudgetedPlaceOptions options;
  options.policy = "critical-path";
  std::string error;
  auto placed = placeWithinBudget(judge, graph, 3, options, &error);
  ASSERT_TRUE(placed) << error;
  auto alone = placeWithPolicy("critical-path", graph, 3, {}, &error);
  ASSERT_TRUE(alone) << error;
  EXPECT_EQ(placed->assignment, *alone);
  EXPECT_FALSE(placed->refinement);
  ASSERT_EQ(placed->starts.size(), 1u);
  EXPECT_EQ(placed->starts[0].name, "critical-path");
  EXPECT_EQ(placed->makespan, judge.run(*alone));
}

TEST(BudgetTest, ARunBudgetRefinesAndRepeats) {
  Graph graph = randomLayeredGraph(8, 120, 8);
  Simulator judge(graph, 4);
  BudgetedPlaceOptions options;
  options.policy = "round-robin";
  options.heuristic.seed = 11;
  options.evaluations = 3000;
  std::string error;
  auto first = placeWithinBudget(judge, graph, 4, options, &error);
  auto second = placeWithinBudget(judge, graph, 4, options, &error);
  ASSERT_TRUE(first && second) << error;
  EXPECT_EQ(first->assignment, second->assignment);
  ASSERT_TRUE(first->refinement);
  EXPECT_EQ(first->refinement->evaluations, 3000);
  // Round robin is a poor start: the search improves it, and the result's
  // makespan is the judge's.
  EXPECT_LT(first->makespan, first->starts[0].makespan);
  EXPECT_EQ(first->makespan, judge.run(first->assignment));
  // Another seed searches elsewhere.
  options.heuristic.seed = 12;
  auto other = placeWithinBudget(judge, graph, 4, options, &error);
  ASSERT_TRUE(other) << error;
  EXPECT_NE(other->assignment, first->assignment);
}

TEST(BudgetTest, TheLearnedPolicyStartsFromItsPriorsToo) {
  useBuiltLibrary();
  std::optional<Graph> graph = sharedGraph("transformer_block_215nodes.txt");
  ASSERT_TRUE(graph);
  Simulator judge(*graph, 4);
  BudgetedPlaceOptions options;
  options.evaluations = 4000;
  options.targetMakespan = makespanLowerBound(*graph, 4);
  std::string error;
  auto placed = placeWithinBudget(judge, *graph, 4, options, &error);
  ASSERT_TRUE(placed) << error;
  ASSERT_EQ(placed->starts.size(), 4u);
  EXPECT_EQ(placed->starts[0].name, "doppler greedy");
  EXPECT_EQ(placed->starts[1].name, "critical-path");
  EXPECT_EQ(placed->starts[2].name, "join-aware");
  EXPECT_EQ(placed->starts[3].name, "single");
  // Everything on one device: the graph's serial time.
  EXPECT_EQ(placed->starts[3].makespan,
            judge.run(std::vector<DeviceId>(graph->numNodes(), 0)));
  // The best start is refined, and the result is no worse than any start.
  double best = std::min({placed->starts[0].makespan,
                          placed->starts[1].makespan,
                          placed->starts[2].makespan,
                          placed->starts[3].makespan});
  EXPECT_EQ(placed->starts[placed->best].makespan, best);
  ASSERT_TRUE(placed->refinement);
  EXPECT_EQ(placed->refinement->initialMakespan, best);
  EXPECT_LE(placed->makespan, best);
  // Each start is what its policy places.
  auto joinAware = placeWithPolicy("join-aware", *graph, 4, {}, &error);
  ASSERT_TRUE(joinAware) << error;
  EXPECT_EQ(placed->starts[2].makespan, judge.run(*joinAware));
  std::string line = describeBudgetedPlacement(*placed);
  EXPECT_NE(line.find("doppler greedy "), std::string::npos) << line;
  EXPECT_NE(line.find(" in 4000 runs"), std::string::npos) << line;

  // Without a budget: the greedy rollout alone.
  options.evaluations = 0;
  auto greedy = placeWithinBudget(judge, *graph, 4, options, &error);
  ASSERT_TRUE(greedy) << error;
  EXPECT_EQ(greedy->starts.size(), 1u);
  EXPECT_FALSE(greedy->refinement);
  LearnedPolicyOptions learned;
  auto direct = placeWithLearnedPolicy(*graph, 4, learned, &error);
  ASSERT_TRUE(direct) << error;
  EXPECT_EQ(greedy->assignment, *direct);
}

TEST(BudgetTest, ErrorsAreThePolicies) {
  Graph graph = randomLayeredGraph(2, 20, 4);
  Simulator judge(graph, 2);
  BudgetedPlaceOptions options;
  options.policy = "oracle";
  options.evaluations = 10;
  std::string error;
  EXPECT_FALSE(placeWithinBudget(judge, graph, 2, options, &error));
  EXPECT_NE(error.find("unknown policy 'oracle'"), std::string::npos) << error;
  useBuiltLibrary();
  options.policy = "doppler";
  options.learned.modelPath = "/nonexistent/model.pt";
  EXPECT_FALSE(placeWithinBudget(judge, graph, 2, options, &error));
  EXPECT_NE(error.find("/nonexistent/model.pt"), std::string::npos) << error;
}

TEST(BudgetTest, DefaultBudgetScalesWithTheGraph) {
  // Small graphs: 200 runs per (node, device).
  Graph tiny = randomLayeredGraph(1, 10, 3);
  EXPECT_EQ(defaultBudgetEvaluations(tiny, 4), 200 * 10 * 4);
  // A few hundred nodes: about 25e6 / (n + e + D) runs (one second).
  Graph mid = randomLayeredGraph(1, 300, 10);
  double visits = mid.numNodes() + mid.numEdges() + 4.0;
  EXPECT_NEAR(static_cast<double>(defaultBudgetEvaluations(mid, 4)),
              25e6 / visits, 1.0);
  // Above 500 nodes the time grows as sqrt(n / 500): fewer runs per graph
  // (each run costs more) but more visits in all.
  Graph big = randomLayeredGraph(1, 2000, 10);
  double bigVisits = big.numNodes() + big.numEdges() + 4.0;
  int64_t bigRuns = defaultBudgetEvaluations(big, 4);
  EXPECT_LT(bigRuns, defaultBudgetEvaluations(mid, 4));
  EXPECT_NEAR(static_cast<double>(bigRuns) * bigVisits, 2.0 * 25e6,
              bigVisits);
  EXPECT_EQ(defaultBudgetEvaluations(Graph(), 4), 0);
}

} // namespace
