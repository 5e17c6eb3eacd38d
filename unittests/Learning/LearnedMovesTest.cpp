//===- LearnedMovesTest.cpp - Learned improvement moves --------------------===//
//
// LearnedMoves.h: the improvement never makes the start worse, keeps to its
// budget and is deterministic; the trained model ranks improving moves
// first on graphs it was not fitted on; the model file round-trips and its
// errors name what is wrong; the gain analysis adds up.
//
//===----------------------------------------------------------------------===//

#include "Doppler/Placement/Learning/LearnedMoves.h"
#include "Doppler/Placement/Learning/LearnedPolicy.h"
#include "LearningTestSupport.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdio>
#include <fstream>

using namespace doppler::placement;
using doppler::placement::test_support::randomLayeredGraph;

namespace {

double betterHeuristicMakespan(Simulator &judge, const Graph &graph,
                               int32_t devices) {
  return std::min(judge.run(placeCriticalPath(graph, devices)),
                  judge.run(placeJoinAware(graph, devices)));
}

TEST(LearnedMovesTest, NeverWorseThanTheStartAndWithinTheBudget) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    Graph graph = randomLayeredGraph(seed, 120, 8);
    const int32_t devices = 2 + static_cast<int32_t>(seed % 3) * 2;
    Simulator judge(graph, devices);
    std::vector<DeviceId> start = placeCriticalPath(graph, devices);
    const double startMakespan = judge.run(start);
    LearnedMovesOptions options;
    options.maxEvaluations = 40;
    std::string error;
    auto result = improveWithLearnedMoves(judge, start, MoveModel::embedded(),
                                          options, &error);
    ASSERT_TRUE(result) << error;
    EXPECT_LE(result->makespan, startMakespan);
    EXPECT_EQ(result->initialMakespan, startMakespan);
    EXPECT_LE(result->evaluations, 40);
    // The reported makespan is the returned placement's.
    EXPECT_DOUBLE_EQ(judge.run(result->assignment), result->makespan);
  }
}

TEST(LearnedMovesTest, ImprovesAndIsDeterministic) {
  Graph graph = randomLayeredGraph(11, 200, 10);
  Simulator judge(graph, 4);
  const double better = betterHeuristicMakespan(judge, graph, 4);
  LearnedMovesOptions options;
  options.maxEvaluations = 300;
  std::string error;
  auto first = placeWithLearnedMoves(judge, {}, MoveModel::embedded(),
                                     options, &error);
  auto second = placeWithLearnedMoves(judge, {}, MoveModel::embedded(),
                                      options, &error);
  ASSERT_TRUE(first && second) << error;
  EXPECT_EQ(first->assignment, second->assignment);
  EXPECT_EQ(first->initialMakespan, better);
  // A 200-node layered DAG on 4 devices: the heuristics leave transfers on
  // the critical chain that single moves remove.
  EXPECT_LT(first->makespan, better * 0.999);
  EXPECT_GT(first->accepted, 0);
}

TEST(LearnedMovesTest, NoBudgetKeepsTheStart) {
  Graph graph = randomLayeredGraph(5, 80, 6);
  Simulator judge(graph, 3);
  std::vector<DeviceId> start = placeJoinAware(graph, 3);
  LearnedMovesOptions options;
  options.maxEvaluations = 0;
  auto result =
      improveWithLearnedMoves(judge, start, MoveModel::embedded(), options);
  ASSERT_TRUE(result);
  EXPECT_EQ(result->assignment, start);
  EXPECT_EQ(result->evaluations, 0);
}

TEST(LearnedMovesTest, RejectsAnInvalidStart) {
  Graph graph = randomLayeredGraph(5, 20, 4);
  Simulator judge(graph, 2);
  std::vector<DeviceId> start(graph.numNodes(), 2);
  std::string error;
  EXPECT_FALSE(improveWithLearnedMoves(judge, start, MoveModel::embedded(),
                                       {}, &error));
  EXPECT_FALSE(error.empty());
}

// The embedded model, trained on real programs, against the same candidates
// in a random order, on generated graphs it never saw: summed over a few
// graphs, its order gets further in few runs.
TEST(LearnedMovesTest, TheModelsOrderBeatsARandomOrderInFewRuns) {
  double learnedTotal = 0, shuffledTotal = 0;
  for (uint64_t seed = 21; seed <= 28; ++seed) {
    Graph graph = randomLayeredGraph(seed, 240, 12);
    Simulator judge(graph, 4);
    std::vector<DeviceId> start = placeCriticalPath(graph, 4);
    LearnedMovesOptions options;
    options.maxEvaluations = 24;
    options.seed = seed;
    auto learned =
        improveWithLearnedMoves(judge, start, MoveModel::embedded(), options);
    options.randomOrder = true;
    auto shuffled =
        improveWithLearnedMoves(judge, start, MoveModel::embedded(), options);
    ASSERT_TRUE(learned && shuffled);
    learnedTotal += learned->makespan / learned->initialMakespan;
    shuffledTotal += shuffled->makespan / shuffled->initialMakespan;
  }
  EXPECT_LT(learnedTotal, shuffledTotal);
}

TEST(LearnedMovesTest, ExplorationMixesInRandomTries) {
  Graph graph = randomLayeredGraph(31, 200, 10);
  Simulator judge(graph, 4);
  std::vector<DeviceId> start = placeCriticalPath(graph, 4);
  const double startMakespan = judge.run(start);
  LearnedMovesOptions options;
  options.maxEvaluations = 120;
  auto modelOrder =
      improveWithLearnedMoves(judge, start, MoveModel::embedded(), options);
  options.explore = 0.5;
  options.seed = 4;
  auto mixed =
      improveWithLearnedMoves(judge, start, MoveModel::embedded(), options);
  auto again =
      improveWithLearnedMoves(judge, start, MoveModel::embedded(), options);
  ASSERT_TRUE(modelOrder && mixed && again);
  EXPECT_NE(mixed->assignment, modelOrder->assignment);
  EXPECT_EQ(mixed->assignment, again->assignment); // seeded
  EXPECT_LE(mixed->makespan, startMakespan);
}

TEST(LearnedMovesTest, FitSeparatesTheClasses) {
  // Improving moves have feature 3 (the transfers a move adds) negative.
  std::vector<MoveExample> examples;
  for (int i = 0; i < 200; ++i) {
    MoveExample e;
    e.improves = i % 5 == 0;
    e.features[3] = (e.improves ? -1.0 : 1.0) * (1 + (i % 7) * 0.1);
    e.features[6] = (i % 3) * 0.5; // noise
    examples.push_back(e);
  }
  MoveModel model = fitMoveModel(examples);
  EXPECT_LT(model.weight[3], 0);
  for (const MoveExample &e : examples)
    if (e.improves)
      EXPECT_GT(model.score(e.features), 0);
    else
      EXPECT_LT(model.score(e.features), 0);
}

TEST(LearnedMovesTest, CollectsLabelledExamples) {
  Graph graph = randomLayeredGraph(7, 150, 8);
  Simulator judge(graph, 4);
  std::vector<MoveExample> examples;
  collectMoveExamples(judge, placeCriticalPath(graph, 4), 5, 16, 3, examples);
  ASSERT_FALSE(examples.empty());
  EXPECT_LE(examples.size(), 5u * 16u);
  std::vector<MoveExample> again;
  collectMoveExamples(judge, placeCriticalPath(graph, 4), 5, 16, 3, again);
  ASSERT_EQ(again.size(), examples.size());
  for (size_t i = 0; i < examples.size(); ++i) {
    EXPECT_EQ(again[i].features, examples[i].features);
    EXPECT_EQ(again[i].improves, examples[i].improves);
  }
}

TEST(LearnedMovesTest, ModelFileRoundTrips) {
  MoveModel model = MoveModel::embedded();
  for (int i = 0; i < kMoveFeatureCount; ++i)
    ASSERT_GT(model.scale[i], 0) << kMoveFeatureNames[i];
  model.weight[2] = -0.125;
  const std::string path = testing::TempDir() + "/moves-model.txt";
  std::string error;
  ASSERT_TRUE(writeMoveModel(model, path, "line one\nline two", &error))
      << error;
  auto read = readMoveModel(path, &error);
  ASSERT_TRUE(read) << error;
  EXPECT_EQ(read->mean, model.mean);
  EXPECT_EQ(read->scale, model.scale);
  EXPECT_EQ(read->weight, model.weight);
  EXPECT_EQ(read->bias, model.bias);
}

TEST(LearnedMovesTest, ModelFileErrorsNameTheProblem) {
  std::string error;
  EXPECT_FALSE(parseMoveModel("// nothing\n1, 2, 3\n", &error));
  EXPECT_EQ(error, "move model: expected 40 numbers, got 3");
  EXPECT_FALSE(parseMoveModel("1, 2, x3\n", &error));
  EXPECT_EQ(error, "move model: 'x3' is not a finite number");
  std::string zeroScale;
  for (int i = 0; i < 40; ++i)
    zeroScale += i == kMoveFeatureCount ? "0, " : "1, ";
  EXPECT_FALSE(parseMoveModel(zeroScale, &error));
  EXPECT_EQ(error, "move model: scale of on_chain must be positive");
  EXPECT_FALSE(readMoveModel("/nonexistent/moves.txt", &error));
  EXPECT_EQ(error, "cannot read move model '/nonexistent/moves.txt'");
}

TEST(LearnedMovesTest, GainAnalysisOfAPlacementAgainstItself) {
  Graph graph = randomLayeredGraph(9, 100, 6);
  Simulator judge(graph, 3);
  std::vector<DeviceId> start = placeCriticalPath(graph, 3);
  PlacementGainAnalysis same = analysePlacementGain(judge, start, start);
  EXPECT_EQ(same.moved, 0);
  EXPECT_EQ(same.start.makespan, same.end.makespan);
  EXPECT_EQ(same.chainMovesOnly, same.start.makespan);
  EXPECT_GT(same.start.chainNodes, 0);
  // The chain's parts add up to the makespan.
  EXPECT_NEAR(same.start.chainCompute + same.start.chainTransfer +
                  same.start.chainWait,
              same.start.makespan, 1e-6 * same.start.makespan);
  EXPECT_GE(same.start.maxBusy, same.start.meanBusy);

  LearnedMovesOptions options;
  options.maxEvaluations = 200;
  auto improved =
      improveWithLearnedMoves(judge, start, MoveModel::embedded(), options);
  ASSERT_TRUE(improved);
  PlacementGainAnalysis gain =
      analysePlacementGain(judge, start, improved->assignment);
  EXPECT_EQ(gain.end.makespan, improved->makespan);
  EXPECT_GE(gain.moved, gain.movedNearChain);
  EXPECT_GE(gain.movedNearChain, gain.movedOnChain);
}

TEST(LearnedMovesTest, ThePolicyByName) {
  Graph graph = randomLayeredGraph(13, 90, 6);
  LearnedPolicyOptions learned;
  learned.moveEvaluations = 50;
  std::string error;
  auto placed = placeWithNamedPolicy(kLearnedMovesPolicyName, graph, 3, {},
                                     learned, &error);
  ASSERT_TRUE(placed) << error;
  Simulator judge(graph, 3);
  EXPECT_LE(judge.run(*placed), betterHeuristicMakespan(judge, graph, 3));
  learned.modelPath = "/nonexistent/moves.txt";
  EXPECT_FALSE(placeWithNamedPolicy(kLearnedMovesPolicyName, graph, 3, {},
                                    learned, &error));
  EXPECT_EQ(error, "cannot read move model '/nonexistent/moves.txt'");
  EXPECT_GE(defaultMoveEvaluations(graph, 3), 16);
  EXPECT_LE(defaultMoveEvaluations(graph, 3), 2048);
}

} // namespace
