//===- GraphTest.cpp - Graph building, CSR layout and validation ----------===//

#include "Doppler/Placement/Graph.h"

#include <cmath>
#include <gtest/gtest.h>
#include <limits>

using namespace doppler::placement;

namespace {

std::vector<NodeId> toVector(ArrayView<NodeId> view) {
  return {view.begin(), view.end()};
}

std::string buildError(const GraphBuilder &builder) {
  std::string error;
  EXPECT_FALSE(builder.build(&error).has_value());
  return error;
}

TEST(Graph, BuildsCsr) {
  GraphBuilder b;
  EXPECT_EQ(b.addNode(1, 10, "input"), 0);
  EXPECT_EQ(b.addNode(2, 20), 1);
  EXPECT_EQ(b.addNode(3, 30), 2);
  EXPECT_EQ(b.addNode(4, 40), 3);
  EXPECT_EQ(b.numNodes(), 4);
  b.addEdge(2, 3);
  b.addEdge(0, 2);
  b.addEdge(0, 1, 7.5); // explicit cost
  b.addEdge(1, 3);
  std::string error;
  auto graph = b.build(&error);
  ASSERT_TRUE(graph) << error;

  EXPECT_EQ(graph->numNodes(), 4);
  EXPECT_EQ(graph->numEdges(), 4);
  EXPECT_EQ(graph->computeCost(2), 3);
  EXPECT_EQ(graph->transferCost(3), 40);
  EXPECT_EQ(graph->opType(0), "input");
  EXPECT_EQ(graph->opType(1), "");
  EXPECT_EQ(graph->totalCompute(), 10);
  EXPECT_FALSE(graph->hasOutputBytes());

  // Edge order: source ascending, destinations in order of appearance.
  std::vector<std::pair<NodeId, NodeId>> edges;
  for (int32_t e = 0; e < graph->numEdges(); ++e)
    edges.emplace_back(graph->edgeSource(e), graph->edgeTarget(e));
  EXPECT_EQ(edges, (std::vector<std::pair<NodeId, NodeId>>{
                       {0, 2}, {0, 1}, {1, 3}, {2, 3}}));
  EXPECT_EQ(graph->edgeCost(0), 10); // defaults to m(source)
  EXPECT_EQ(graph->edgeCost(1), 7.5);
  EXPECT_EQ(graph->succBegin(0), 0);
  EXPECT_EQ(graph->succEnd(0), 2);
  EXPECT_EQ(toVector(graph->successors(0)), (std::vector<NodeId>{2, 1}));
  EXPECT_EQ(toVector(graph->predecessors(3)), (std::vector<NodeId>{1, 2}));
  auto predEdges = graph->predecessorEdges(3);
  ASSERT_EQ(predEdges.size(), 2u);
  EXPECT_EQ(predEdges[0], 2);
  EXPECT_EQ(predEdges[1], 3);
  EXPECT_EQ(graph->inDegree(0), 0);
  EXPECT_EQ(graph->inDegree(3), 2);
  EXPECT_EQ(graph->outDegree(0), 2);
  EXPECT_EQ(graph->outDegree(3), 0);
  EXPECT_EQ(graph->topologicalOrder(), (std::vector<NodeId>{0, 1, 2, 3}));
}

TEST(Graph, TopologicalOrderTakesSmallestReadyId) {
  GraphBuilder b;
  for (int i = 0; i < 5; ++i)
    b.addNode(1, 1);
  b.addEdge(4, 0);
  b.addEdge(3, 1);
  b.addEdge(0, 1);
  auto graph = b.build();
  ASSERT_TRUE(graph);
  EXPECT_EQ(graph->topologicalOrder(), (std::vector<NodeId>{2, 3, 4, 0, 1}));
}

TEST(Graph, RepeatedEdgesCountOnce) {
  GraphBuilder b;
  for (int i = 0; i < 3; ++i)
    b.addNode(1, 5);
  b.addEdge(0, 2, 3);
  b.addEdge(0, 1);
  b.addEdge(0, 2, 9); // repeat: dropped, the first cost wins
  b.addEdge(1, 2);
  b.addEdge(1, 2);
  auto graph = b.build();
  ASSERT_TRUE(graph);
  EXPECT_EQ(graph->numEdges(), 3);
  EXPECT_EQ(toVector(graph->successors(0)), (std::vector<NodeId>{2, 1}));
  EXPECT_EQ(graph->edgeCost(0), 3);
  EXPECT_EQ(graph->inDegree(2), 2);
}

TEST(Graph, EmptyGraph) {
  auto graph = GraphBuilder().build();
  ASSERT_TRUE(graph);
  EXPECT_EQ(graph->numNodes(), 0);
  EXPECT_EQ(graph->numEdges(), 0);
  EXPECT_EQ(graph->totalCompute(), 0);
  EXPECT_TRUE(graph->topologicalOrder().empty());
}

TEST(Graph, OutputBytes) {
  GraphBuilder b;
  b.addNode(1, 1);
  b.addNode(1, 1);
  b.setOutputBytes(1, 64);
  auto graph = b.build();
  ASSERT_TRUE(graph);
  ASSERT_TRUE(graph->hasOutputBytes());
  EXPECT_EQ(graph->outputBytes(0), 0);
  EXPECT_EQ(graph->outputBytes(1), 64);

  GraphBuilder bad;
  bad.addNode(1, 1);
  bad.setOutputBytes(3, 8);
  EXPECT_EQ(buildError(bad),
            "output bytes given for 3, which is not a node (graph has 1 "
            "nodes)");
  GraphBuilder negative;
  negative.addNode(1, 1);
  negative.setOutputBytes(0, -8);
  EXPECT_EQ(buildError(negative), "node 0: output bytes -8 is negative");
}

TEST(Graph, RejectsBadCosts) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  {
    GraphBuilder b;
    b.addNode(1, 1);
    b.addNode(-1, 1);
    EXPECT_EQ(buildError(b), "node 1: compute cost -1 is negative");
  }
  {
    GraphBuilder b;
    b.addNode(1, -0.5);
    EXPECT_EQ(buildError(b), "node 0: transfer cost -0.5 is negative");
  }
  {
    GraphBuilder b;
    b.addNode(nan, 1);
    EXPECT_EQ(buildError(b), "node 0: compute cost nan is not finite");
  }
  {
    GraphBuilder b;
    b.addNode(1, inf);
    EXPECT_EQ(buildError(b), "node 0: transfer cost inf is not finite");
  }
  {
    GraphBuilder b;
    b.addNode(1, 1);
    b.addNode(1, 1);
    b.addEdge(0, 1, -2);
    EXPECT_EQ(buildError(b), "edge 0: cost -2 is negative");
  }
}

TEST(Graph, RejectsDanglingIdsAndSelfLoops) {
  GraphBuilder base;
  for (int i = 0; i < 3; ++i)
    base.addNode(1, 1);
  {
    GraphBuilder b = base;
    b.addEdge(0, 1);
    b.addEdge(1, 99);
    EXPECT_EQ(buildError(b),
              "edge 1: target 99 is not a node (graph has 3 nodes)");
  }
  {
    GraphBuilder b = base;
    b.addEdge(-1, 1);
    EXPECT_EQ(buildError(b),
              "edge 0: source -1 is not a node (graph has 3 nodes)");
  }
  {
    GraphBuilder b = base;
    b.addEdge(0, 1);
    b.addEdge(2, 2);
    EXPECT_EQ(buildError(b), "edge 1: self loop on node 2");
  }
}

TEST(Graph, ReportsCycleWithItsNodes) {
  GraphBuilder b;
  for (int i = 0; i < 10; ++i)
    b.addNode(1, 1);
  b.addEdge(0, 9); // leads into the cycle, not part of it
  b.addEdge(9, 4);
  b.addEdge(4, 7);
  b.addEdge(7, 9);
  b.addEdge(7, 8); // leaves the cycle
  EXPECT_EQ(buildError(b), "cycle: 4 -> 7 -> 9 -> 4");

  GraphBuilder two;
  two.addNode(1, 1);
  two.addNode(1, 1);
  two.addEdge(1, 0);
  two.addEdge(0, 1);
  EXPECT_EQ(buildError(two), "cycle: 0 -> 1 -> 0");
}

TEST(Graph, BuildWithoutErrorString) {
  GraphBuilder b;
  b.addNode(-1, 0);
  EXPECT_FALSE(b.build().has_value());
}

} // namespace
