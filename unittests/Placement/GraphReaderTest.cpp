//===- GraphReaderTest.cpp - The reference text format --------------------===//

#include "Doppler/Placement/Graph.h"

#include <algorithm>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace doppler::placement;

namespace {

const std::string kDataDir = DOPPLER_SHARED_DATA_DIR;

std::string parseError(const std::string &text) {
  std::string error;
  EXPECT_FALSE(parseReferenceGraph(text, "g.txt", &error).has_value()) << text;
  return error;
}

// 5 nodes in all, 2 of them inputs: nodes 0..2, edges 0->1, 0->2, 1->2.
const char *kSmall = "5\n"
                     "100, 101, \n"
                     "0, 0, 1, \n"
                     "1, 2, 2, \n"
                     "10,1\n"
                     "20,2\n"
                     "30,3\n";

TEST(GraphReader, ParsesSmallGraph) {
  std::string error;
  auto graph = parseReferenceGraph(kSmall, "small.txt", &error);
  ASSERT_TRUE(graph) << error;
  EXPECT_EQ(graph->numNodes(), 3);
  EXPECT_EQ(graph->numEdges(), 3);
  EXPECT_EQ(graph->computeCost(2), 30);
  EXPECT_EQ(graph->transferCost(1), 2);
  EXPECT_EQ(graph->edgeCost(2), 2); // 1 -> 2 costs m(1)
  EXPECT_EQ(graph->opType(0), "");
}

TEST(GraphReader, ToleratesLooseSeparatorsAndLineEndings) {
  // The reference's own files write "16,6, 16, " (no space after the first
  // comma, a trailing comma and space); also accept CRLF, tabs, blank
  // trailing lines, an op type word, and an empty input line.
  std::string text = "3\r\n"
                     "\r\n"
                     "0,0 ,1,,\r\n"
                     "1,\t2, 2\r\n"
                     " 10 , 1 ,einsummable\r\n"
                     "20,2, fill\r\n"
                     "30,3,\r\n"
                     "\r\n"
                     "   \n";
  std::string error;
  auto graph = parseReferenceGraph(text, "loose.txt", &error);
  ASSERT_TRUE(graph) << error;
  EXPECT_EQ(graph->numNodes(), 3);
  EXPECT_EQ(graph->numEdges(), 3);
  EXPECT_EQ(graph->opType(0), "einsummable");
  EXPECT_EQ(graph->opType(1), "fill");
  EXPECT_EQ(graph->opType(2), "");
}

TEST(GraphReader, MergesRepeatedEdges) {
  std::string text = "3\n\n0, 0, 1, 0\n1, 2, 2, 1\n1,1\n1,1\n1,1";
  auto graph = parseReferenceGraph(text, "dup.txt");
  ASSERT_TRUE(graph);
  EXPECT_EQ(graph->numEdges(), 3);
}

TEST(GraphReader, ErrorsNameTheLine) {
  EXPECT_EQ(parseError(""), "g.txt:1: missing the total node count (the file "
                            "has 0 lines)");
  EXPECT_EQ(parseError("x\n\n\n\n"),
            "g.txt:1: expected the total node count (one non-negative "
            "integer), found 'x'");
  EXPECT_EQ(parseError("5, 6\n\n\n\n"),
            "g.txt:1: expected the total node count (one non-negative "
            "integer), found '5, 6'");
  EXPECT_EQ(parseError("3\n"),
            "g.txt:2: missing the input node ids (the file has 1 lines)");
  EXPECT_EQ(parseError("3\n1, a\n\n\n"),
            "g.txt:2: input id entry 1: 'a' is not a non-negative integer");
  EXPECT_EQ(parseError("1\n4, 5\n\n\n"),
            "g.txt:1: total node count 1 is less than the 2 input ids on "
            "line 2");
  EXPECT_EQ(parseError("2\n\n0\n"),
            "g.txt:4: missing edge destination (the file has 3 lines)");
  EXPECT_EQ(parseError("2\n\n0, -1\n1, 0\n1,1\n1,1"),
            "g.txt:3: edge source entry 1: '-1' is not a non-negative "
            "integer");
  EXPECT_EQ(parseError("2\n\n0, 1\n1\n1,1\n1,1"),
            "g.txt:4: expected 2 edge destinations (one per source on line "
            "3), found 1");
  EXPECT_EQ(parseError("5\n100, 101\n0, 3\n1, 2\n1,1\n1,1\n1,1"),
            "g.txt:3: edge source entry 1: 3 is not a node id (graph has 3 "
            "nodes, ids 0..2)");
  EXPECT_EQ(parseError("3\n\n0, 1\n1, 7\n1,1\n1,1\n1,1"),
            "g.txt:4: edge destination entry 1: 7 is not a node id (graph "
            "has 3 nodes, ids 0..2)");
  EXPECT_EQ(parseError("3\n\n0, 1\n1, 1\n1,1\n1,1\n1,1"),
            "g.txt:4: edge 1 (1 -> 1) is a self loop");
  EXPECT_EQ(parseError("2\n\n0\n1\n1,1\n1"),
            "g.txt:6: node 1: expected 'compute_cost,comm_cost' and an "
            "optional op type, found '1'");
  EXPECT_EQ(parseError("2\n\n0\n1\n1,1\n1,2,3"),
            "g.txt:6: node 1: expected 'compute_cost,comm_cost' and an "
            "optional op type, found '1,2,3'");
  EXPECT_EQ(parseError("2\n\n0\n1\n-1,1\n1,1"),
            "g.txt:5: node 0: compute cost '-1' is not a non-negative "
            "integer");
  EXPECT_EQ(parseError("2\n\n0\n1\n1,1\n1,2.5"),
            "g.txt:6: node 1: comm cost '2.5' is not a non-negative integer");
  EXPECT_EQ(parseError("3\n\n0\n1\n1,1\n1,1\n"),
            "g.txt:7: expected 3 node lines (lines 5..7), found 2");
  EXPECT_EQ(parseError("2\n\n0\n1\n1,1\n1,1\n1,1\n"),
            "g.txt:7: unexpected text after the 2 node lines (line 1 says 2 "
            "nodes, 0 of them inputs)");
  EXPECT_EQ(parseError("3\n\n0, 1, 2\n1, 2, 0\n1,1\n1,1\n1,1"),
            "g.txt: cycle: 0 -> 1 -> 2 -> 0");
}

TEST(GraphReader, MissingFile) {
  std::string error;
  EXPECT_FALSE(readReferenceGraph(kDataDir + "/graphs/no_such.txt", &error));
  EXPECT_EQ(error, kDataDir + "/graphs/no_such.txt: cannot open file");
}

/// Longest path counting compute costs only.
double computeCriticalPath(const Graph &graph) {
  std::vector<double> finish(graph.numNodes(), 0);
  double longest = 0;
  for (NodeId v : graph.topologicalOrder()) {
    double start = 0;
    for (NodeId u : graph.predecessors(v))
      start = std::max(start, finish[u]);
    finish[v] = start + graph.computeCost(v);
    longest = std::max(longest, finish[v]);
  }
  return longest;
}

class GraphReaderSharedGraphs : public ::testing::TestWithParam<std::string> {};

// Counts and sums agree with what the reference computed for these files.
TEST_P(GraphReaderSharedGraphs, MatchesReferenceSummary) {
  const std::string name = GetParam();
  std::string error;
  auto graph =
      readReferenceGraph(kDataDir + "/graphs/" + name + ".txt", &error);
  ASSERT_TRUE(graph) << error;

  std::ifstream file(kDataDir + "/reference_cases.json");
  ASSERT_TRUE(file);
  auto summary = nlohmann::json::parse(file)["graphs"][name];
  EXPECT_EQ(graph->numNodes(), summary["nodes"].get<int32_t>());
  EXPECT_EQ(graph->numEdges(), summary["edges"].get<int32_t>());
  EXPECT_EQ(graph->totalCompute(), summary["comp_sum"].get<double>());
  EXPECT_EQ(computeCriticalPath(*graph),
            summary["critical_path_comp_only"].get<double>());
  // Edge order is source ascending.
  for (int32_t e = 1; e < graph->numEdges(); ++e)
    EXPECT_LE(graph->edgeSource(e - 1), graph->edgeSource(e));
}

INSTANTIATE_TEST_SUITE_P(Graphs, GraphReaderSharedGraphs,
                         ::testing::Values("chain_mm_112nodes", "ffnn_192nodes",
                                           "transformer_block_215nodes"),
                         [](const ::testing::TestParamInfo<std::string> &info) {
                           return info.param;
                         });

TEST(GraphReader, ReadsTheQuirkyFirstDestination) {
  // chain_mm's destination line starts "16,6, 16": the reference extracts
  // the integers, so edge 1 is 1 -> 6.
  auto graph = readReferenceGraph(kDataDir + "/graphs/chain_mm_112nodes.txt");
  ASSERT_TRUE(graph);
  auto successors = graph->successors(1);
  EXPECT_NE(std::find(successors.begin(), successors.end(), 6),
            successors.end());
}

} // namespace
