//===- AnalysisTest.cpp - Levels, bounds and features ---------------------===//

#include "Doppler/Placement/Analysis.h"
#include "PlacementTestGraphs.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>

using namespace doppler::placement;
using namespace doppler::placement::testing;

namespace {

TEST(AnalysisTest, BottomLevelsOfDiamond) {
  Graph graph = diamond();
  Levels bottom = computeBottomLevels(graph);
  // A sink counts c only; every other node c + m.
  EXPECT_EQ(bottom.value[3], 4);
  EXPECT_EQ(bottom.value[1], 2 + 20 + 4);
  EXPECT_EQ(bottom.value[2], 3 + 30 + 4);
  EXPECT_EQ(bottom.value[0], 1 + 10 + 37);
  EXPECT_EQ(bottom.path(0), (std::vector<NodeId>{0, 2, 3}));
  EXPECT_EQ(bottom.path(1), (std::vector<NodeId>{1, 3}));
  EXPECT_EQ(bottom.path(3), (std::vector<NodeId>{3}));
}

TEST(AnalysisTest, TopLevelsOfDiamond) {
  Graph graph = diamond();
  Levels top = computeTopLevels(graph);
  // The same on the reversed graph: a source counts c only, every other
  // node (v itself included) c + m.
  EXPECT_EQ(top.value[0], 1);
  EXPECT_EQ(top.value[1], 2 + 20 + 1);
  EXPECT_EQ(top.value[2], 3 + 30 + 1);
  EXPECT_EQ(top.value[3], 4 + 40 + 34);
  EXPECT_EQ(top.path(3), (std::vector<NodeId>{3, 2, 0}));
  EXPECT_EQ(top.path(0), (std::vector<NodeId>{0}));
}

TEST(AnalysisTest, EqualBranchesKeepTheFirstSuccessorInEdgeOrder) {
  GraphBuilder builder;
  builder.addNode(1, 1);
  builder.addNode(5, 0);
  builder.addNode(5, 0);
  builder.addEdge(0, 2); // first in edge order
  builder.addEdge(0, 1);
  std::optional<Graph> graph = builder.build();
  ASSERT_TRUE(graph);
  Levels bottom = computeBottomLevels(*graph);
  EXPECT_EQ(bottom.value[0], 7);
  EXPECT_EQ(bottom.path(0), (std::vector<NodeId>{0, 2}));
}

TEST(AnalysisTest, AppendPathReusesTheBuffer) {
  Graph graph = diamond();
  Levels bottom = computeBottomLevels(graph);
  std::vector<NodeId> buffer = {42};
  bottom.appendPath(1, buffer);
  EXPECT_EQ(buffer, (std::vector<NodeId>{42, 1, 3}));
}

TEST(AnalysisTest, CriticalPathAndLowerBound) {
  Graph graph = diamond();
  EXPECT_EQ(criticalPath(graph), (std::vector<NodeId>{0, 2, 3}));
  EXPECT_EQ(criticalPathLength(graph), 48);
  EXPECT_EQ(computeOnlyCriticalPathLength(graph), 1 + 3 + 4);
  // max(8, 10 / D).
  EXPECT_EQ(makespanLowerBound(graph, 1), 10);
  EXPECT_EQ(makespanLowerBound(graph, 2), 8);
  EXPECT_EQ(makespanLowerBound(graph, 4), 8);
}

TEST(AnalysisTest, ChainAndIndependentNodes) {
  // Two chains 0 -> 1 -> 2 and 3 -> 4, plus an isolated node 5.
  GraphBuilder builder;
  for (double c : {3.0, 4.0, 5.0, 10.0, 1.0, 7.0})
    builder.addNode(c, 2);
  builder.addEdge(0, 1);
  builder.addEdge(1, 2);
  builder.addEdge(3, 4);
  std::optional<Graph> graph = builder.build();
  ASSERT_TRUE(graph);
  Levels bottom = computeBottomLevels(*graph);
  EXPECT_EQ(bottom.value[0], 3 + 2 + 4 + 2 + 5);
  EXPECT_EQ(bottom.value[3], 10 + 2 + 1);
  EXPECT_EQ(bottom.value[5], 7);
  EXPECT_EQ(criticalPath(*graph), (std::vector<NodeId>{0, 1, 2}));
  EXPECT_EQ(computeOnlyCriticalPathLength(*graph), 12);
  EXPECT_EQ(makespanLowerBound(*graph, 2), 15); // 30 / 2
  EXPECT_EQ(makespanLowerBound(*graph, 3), 12);
}

TEST(AnalysisTest, EmptyGraph) {
  std::optional<Graph> graph = GraphBuilder().build();
  ASSERT_TRUE(graph);
  EXPECT_TRUE(criticalPath(*graph).empty());
  EXPECT_EQ(criticalPathLength(*graph), 0);
  EXPECT_EQ(makespanLowerBound(*graph, 4), 0);
  GraphAnalysis analysis = analyzeGraph(*graph);
  EXPECT_EQ(analysis.nodeFeatures.rows, 0);
  EXPECT_EQ(analysis.edgeFeatures.rows, 0);
}

TEST(AnalysisTest, NodeAndEdgeFeatures) {
  GraphBuilder builder;
  builder.addNode(1, 10);
  builder.addNode(2, 20);
  builder.addNode(3, 30);
  builder.addEdge(0, 2);
  builder.addEdge(1, 2, 7.0); // an explicit edge cost
  builder.addEdge(0, 1);
  std::optional<Graph> graph = builder.build();
  ASSERT_TRUE(graph);
  FeatureMatrix features = computeNodeFeatures(*graph);
  ASSERT_EQ(features.rows, 3);
  ASSERT_EQ(features.cols, kNumNodeFeatures);
  EXPECT_EQ(features.at(2, kComputeCostFeature), 3);
  EXPECT_EQ(features.at(0, kBottomLevelFeature),
            computeBottomLevels(*graph).value[0]);
  EXPECT_EQ(features.at(2, kTopLevelFeature),
            computeTopLevels(*graph).value[2]);
  EXPECT_EQ(features.at(2, kIncomingTransferFeature), 10 + 7);
  EXPECT_EQ(features.at(0, kIncomingTransferFeature), 0);
  EXPECT_EQ(features.at(0, kOutgoingTransferFeature), 10 + 10);
  EXPECT_EQ(features.at(1, kOutgoingTransferFeature), 7);
  EXPECT_EQ(features.at(2, kOutgoingTransferFeature), 0);

  FeatureMatrix edges = computeEdgeFeatures(*graph);
  ASSERT_EQ(edges.rows, graph->numEdges());
  ASSERT_EQ(edges.cols, 1);
  for (int32_t e = 0; e < graph->numEdges(); ++e)
    EXPECT_EQ(edges.at(e, 0), graph->edgeCost(e));
}

TEST(AnalysisTest, RepeatedEdgesCountOnce) {
  GraphBuilder builder;
  builder.addNode(1, 5);
  builder.addNode(1, 5);
  builder.addEdge(0, 1);
  builder.addEdge(0, 1);
  std::optional<Graph> graph = builder.build();
  ASSERT_TRUE(graph);
  FeatureMatrix features = computeNodeFeatures(*graph);
  EXPECT_EQ(features.at(1, kIncomingTransferFeature), 5);
  EXPECT_EQ(features.at(0, kOutgoingTransferFeature), 5);
}

TEST(AnalysisTest, StandardizeColumns) {
  FeatureMatrix matrix;
  matrix.rows = 4;
  matrix.cols = 3;
  // Column 0 varies, column 1 is constant, column 2 spans 1e14.
  matrix.values = {1, 5, 1e14, 2, 5, 0, 3, 5, 3e14, 4, 5, 1};
  standardizeColumns(matrix);
  for (int32_t col = 0; col < 3; ++col) {
    double sum = 0, squares = 0;
    for (int32_t row = 0; row < 4; ++row) {
      sum += matrix.at(row, col);
      squares += matrix.at(row, col) * matrix.at(row, col);
    }
    EXPECT_NEAR(sum / 4, 0, 1e-12) << "column " << col;
    if (col == 1) {
      EXPECT_EQ(squares, 0);
    } else {
      // Slightly below 1: the epsilon sits in the denominator.
      EXPECT_NEAR(squares / 4, 1, 1e-5) << "column " << col;
    }
  }
  // Population std of {1,2,3,4} is sqrt(1.25); epsilon is 1e-6.
  EXPECT_NEAR(matrix.at(0, 0), -1.5 / (std::sqrt(1.25) + 1e-6), 1e-15);
}

TEST(AnalysisTest, AnalyzeGraphBundlesEverything) {
  Graph graph = diamond();
  GraphAnalysis analysis = analyzeGraph(graph);
  EXPECT_EQ(analysis.bottom.value, computeBottomLevels(graph).value);
  EXPECT_EQ(analysis.top.value, computeTopLevels(graph).value);
  EXPECT_EQ(analysis.criticalPathLength, 48);
  EXPECT_EQ(analysis.computeOnlyCriticalPathLength, 8);
  EXPECT_EQ(analysis.totalCompute, 10);
  EXPECT_EQ(analysis.lowerBound(2), 8);
  EXPECT_EQ(analysis.nodeFeatures.rows, 4);
  EXPECT_EQ(analysis.edgeFeatures.rows, 4);
  // Standardised: the compute column of {1,2,3,4} has mean 0.
  double sum = 0;
  for (int32_t v = 0; v < 4; ++v)
    sum += analysis.nodeFeatures.at(v, kComputeCostFeature);
  EXPECT_NEAR(sum, 0, 1e-12);
}

// The totals stated in reference_cases.json for the shared graphs.
TEST(AnalysisTest, SharedGraphsMatchReferenceTotals) {
  const std::string dataDir = DOPPLER_SHARED_DATA_DIR;
  std::ifstream in(dataDir + "/reference_cases.json");
  if (!in)
    GTEST_SKIP() << "no reference data at " << dataDir;
  nlohmann::json cases = nlohmann::json::parse(in, nullptr, false);
  ASSERT_FALSE(cases.is_discarded());
  for (auto &[name, entry] : cases["graphs"].items()) {
    std::string error;
    std::optional<Graph> graph =
        readReferenceGraph(dataDir + "/graphs/" + name + ".txt", &error);
    ASSERT_TRUE(graph) << error;
    EXPECT_EQ(computeOnlyCriticalPathLength(*graph),
              entry["critical_path_comp_only"].get<double>())
        << name;
    GraphAnalysis analysis = analyzeGraph(*graph);
    EXPECT_EQ(analysis.totalCompute, entry["comp_sum"].get<double>()) << name;
    const int32_t devices = entry["devices"].get<int32_t>();
    EXPECT_EQ(makespanLowerBound(*graph, devices),
              std::max(entry["critical_path_comp_only"].get<double>(),
                       entry["comp_sum"].get<double>() / devices))
        << name;
    // A critical path is a real path whose length is the largest b-level.
    std::vector<NodeId> path = criticalPath(*graph);
    ASSERT_FALSE(path.empty());
    EXPECT_EQ(graph->inDegree(path.front()), 0);
    EXPECT_EQ(graph->outDegree(path.back()), 0);
    double length = 0;
    for (size_t i = 0; i < path.size(); ++i) {
      length += graph->computeCost(path[i]);
      if (i + 1 < path.size()) {
        length += graph->transferCost(path[i]);
        ArrayView<NodeId> next = graph->successors(path[i]);
        EXPECT_NE(std::find(next.begin(), next.end(), path[i + 1]),
                  next.end());
      }
    }
    EXPECT_EQ(length, criticalPathLength(*graph));
  }
}

} // namespace
