//===- BaselinesTest.cpp - GDP and Placeto trained per graph --------------===//

#include "Doppler/Placement/Learning/Baselines.h"
#include "Doppler/Placement/Simulator.h"
#include "LearningTestSupport.h"

#include "gtest/gtest.h"

#include <numeric>

using namespace doppler::placement;
using doppler::placement::test_support::randomLayeredGraph;

namespace {

/// Four independent chains of 6 nodes whose transfers cost 20 compute
/// units: on 4 devices a chain per device is optimal (makespan 6), and a
/// random placement pays transfers along every chain.
Graph fourChains() {
  GraphBuilder builder;
  for (int chain = 0; chain < 4; ++chain)
    for (int i = 0; i < 6; ++i) {
      NodeId v = builder.addNode(1.0, 20.0);
      if (i > 0)
        builder.addEdge(v - 1, v, 20.0);
    }
  return *builder.build();
}

double meanMakespan(const std::vector<BaselineCurvePoint> &curve, size_t begin,
                    size_t end) {
  double sum = 0;
  for (size_t i = begin; i < end; ++i)
    sum += curve[i].makespan;
  return sum / static_cast<double>(end - begin);
}

void expectConsistent(const Graph &graph, int32_t devices,
                      const BaselineResult &result, int32_t episodes) {
  ASSERT_EQ(result.curve.size(), static_cast<size_t>(episodes));
  ASSERT_EQ(result.assignment.size(), static_cast<size_t>(graph.numNodes()));
  Simulator simulator(graph, devices);
  EXPECT_EQ(result.makespan, simulator.run(result.assignment));
  for (size_t i = 0; i < result.curve.size(); ++i) {
    EXPECT_EQ(result.curve[i].episode, static_cast<int32_t>(i) + 1);
    EXPECT_GE(result.curve[i].makespan, result.makespan);
    if (i > 0) {
      EXPECT_LE(result.curve[i].bestMakespan, result.curve[i - 1].bestMakespan);
      EXPECT_GE(result.curve[i].seconds, result.curve[i - 1].seconds);
    }
  }
  EXPECT_EQ(result.curve.back().bestMakespan, result.makespan);
}

TEST(BaselinesTest, GdpLearnsToKeepChainsTogether) {
  Graph graph = fourChains();
  BaselineOptions options;
  options.kind = BaselineKind::GDP;
  options.episodes = 800;
  options.seed = 3;
  std::string error;
  auto result = trainBaseline(graph, 4, options, &error);
  ASSERT_TRUE(result) << error;
  expectConsistent(graph, 4, *result, 800);
  EXPECT_EQ(result->simulatorRuns, 800);
  // The last 100 placements are much better than the first 100 (random
  // ones pay 20 per cut edge; the optimum is 6).
  double first = meanMakespan(result->curve, 0, 100);
  double last = meanMakespan(result->curve, 700, 800);
  EXPECT_LT(last, 0.7 * first) << first << " -> " << last;
  // The same seed, the same run.
  auto again = trainBaseline(graph, 4, options, &error);
  ASSERT_TRUE(again) << error;
  EXPECT_EQ(again->assignment, result->assignment);
  for (size_t i = 0; i < result->curve.size(); ++i)
    ASSERT_EQ(again->curve[i].makespan, result->curve[i].makespan) << i;
}

TEST(BaselinesTest, PlacetoLearnsToKeepChainsTogether) {
  Graph graph = fourChains();
  BaselineOptions options;
  options.kind = BaselineKind::Placeto;
  options.episodes = 120;
  options.seed = 5;
  std::string error;
  auto result = trainBaseline(graph, 4, options, &error);
  ASSERT_TRUE(result) << error;
  expectConsistent(graph, 4, *result, 120);
  // Each episode: the random start and one run per node visited.
  EXPECT_EQ(result->simulatorRuns, 120 * (graph.numNodes() + 1));
  double first = meanMakespan(result->curve, 0, 20);
  double last = meanMakespan(result->curve, 100, 120);
  EXPECT_LT(last, 0.7 * first) << first << " -> " << last;
}

TEST(BaselinesTest, Errors) {
  Graph graph = randomLayeredGraph(1, 20, 4);
  BaselineOptions options;
  std::string error;
  EXPECT_FALSE(trainBaseline(graph, 0, options, &error));
  EXPECT_EQ(error, "devices must be at least 1, got 0");
  options.episodes = 0;
  EXPECT_FALSE(trainBaseline(graph, 2, options, &error));
  EXPECT_EQ(error, "episodes must be at least 1, got 0");
  options.episodes = 1;
  EXPECT_FALSE(trainBaseline(Graph(), 2, options, &error));
  EXPECT_EQ(error, "the graph has no nodes");
  options.kind = BaselineKind::Placeto;
  Graph big = randomLayeredGraph(1, 2100, 40);
  EXPECT_FALSE(trainBaseline(big, 2, options, &error));
  EXPECT_NE(error.find("placeto: 2100 nodes is more than it handles (2048"),
            std::string::npos)
      << error;
  EXPECT_EQ(parseBaselineKind("gdp"), BaselineKind::GDP);
  EXPECT_EQ(parseBaselineKind("placeto"), BaselineKind::Placeto);
  EXPECT_FALSE(parseBaselineKind("GDP"));
}

} // namespace
