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

/// Trains `kind` on fourChains() and checks the run's consistency, that the
/// last `window` placements are much better than the first (random ones pay
/// 20 per cut edge; the optimum is 6), and that the seed repeats the run.
BaselineResult learnFourChains(BaselineKind kind, int32_t episodes,
                               int32_t window, uint64_t seed) {
  Graph graph = fourChains();
  BaselineOptions options;
  options.kind = kind;
  options.episodes = episodes;
  options.seed = seed;
  std::string error;
  auto result = trainBaseline(graph, 4, options, &error);
  EXPECT_TRUE(result) << error;
  if (!result)
    return {};
  expectConsistent(graph, 4, *result, episodes);
  double first = meanMakespan(result->curve, 0, window);
  double last = meanMakespan(result->curve, episodes - window, episodes);
  EXPECT_LT(last, 0.7 * first) << first << " -> " << last;
  auto again = trainBaseline(graph, 4, options, &error);
  EXPECT_TRUE(again) << error;
  if (again) {
    EXPECT_EQ(again->assignment, result->assignment);
    for (size_t i = 0; i < result->curve.size(); ++i)
      EXPECT_EQ(again->curve[i].makespan, result->curve[i].makespan) << i;
  }
  return *result;
}

TEST(BaselinesTest, GdpLearnsToKeepChainsTogether) {
  BaselineResult result = learnFourChains(BaselineKind::GDP, 800, 100, 3);
  EXPECT_EQ(result.simulatorRuns, 800);
}

TEST(BaselinesTest, PlacetoLearnsToKeepChainsTogether) {
  BaselineResult result = learnFourChains(BaselineKind::Placeto, 120, 20, 5);
  // Each episode: the random start and one run per node visited.
  EXPECT_EQ(result.simulatorRuns, 120 * (fourChains().numNodes() + 1));
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
