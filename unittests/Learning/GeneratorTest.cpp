//===- GeneratorTest.cpp - Synthetic training graphs ----------------------===//

#include "Doppler/Placement/Analysis.h"
#include "Doppler/Placement/Learning/GraphGenerator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

using namespace doppler::placement;

namespace {

bool sameGraph(const Graph &a, const Graph &b) {
  if (a.numNodes() != b.numNodes() || a.numEdges() != b.numEdges())
    return false;
  for (NodeId v = 0; v < a.numNodes(); ++v)
    if (a.computeCost(v) != b.computeCost(v) ||
        a.transferCost(v) != b.transferCost(v))
      return false;
  for (int32_t e = 0; e < a.numEdges(); ++e)
    if (a.edgeSource(e) != b.edgeSource(e) ||
        a.edgeTarget(e) != b.edgeTarget(e))
      return false;
  return true;
}

} // namespace

TEST(GeneratorTest, FamiliesHaveTheDecomposedShape) {
  CostRates rates;
  ChainMatmulShape chain;
  chain.numMatrices = 3;
  chain.partitions = 2;
  // Two products of 2x2 blocks: 8 block products + 4 aggregations each.
  auto chainGraph = generateChainMatmul(chain, rates);
  ASSERT_TRUE(chainGraph);
  EXPECT_EQ(chainGraph->graph.numNodes(), 24);
  // The second product's block products wait for the first's aggregations.
  EXPECT_GT(computeOnlyCriticalPathLength(chainGraph->graph), 0);

  TransformerShape transformer;
  auto block = generateTransformer(transformer, rates);
  ASSERT_TRUE(block);
  EXPECT_GT(block->graph.numNodes(), 100);
  transformer.layers = 2;
  auto twoLayers = generateTransformer(transformer, rates);
  ASSERT_TRUE(twoLayers);
  EXPECT_EQ(twoLayers->graph.numNodes(), 2 * block->graph.numNodes());

  // Costs: whole nanoseconds, at least the launch overhead; matmul blocks
  // dominate elementwise ones.
  std::set<double> computeCosts;
  for (NodeId v = 0; v < block->graph.numNodes(); ++v) {
    double c = block->graph.computeCost(v);
    EXPECT_EQ(c, std::round(c));
    EXPECT_GE(c, rates.launchSeconds * 1e9);
    EXPECT_GT(block->graph.transferCost(v), 0);
    computeCosts.insert(c);
  }
  EXPECT_GT(*computeCosts.rbegin() / *computeCosts.begin(), 5);

  std::string error;
  chain.partitions = 0;
  EXPECT_FALSE(generateChainMatmul(chain, rates, &error));
  EXPECT_EQ(error, "partitions must be at least 1, got 0");
}

TEST(GeneratorTest, TrainingSetIsSeededAndSurvivesTheTextFormat) {
  TrainingSetOptions options;
  options.count = 12;
  options.seed = 7;
  std::vector<GeneratedGraph> first = generateTrainingSet(options);
  std::vector<GeneratedGraph> again = generateTrainingSet(options);
  ASSERT_EQ(first.size(), 12u);
  ASSERT_EQ(again.size(), 12u);
  std::set<std::string> families;
  for (size_t i = 0; i < first.size(); ++i) {
    EXPECT_EQ(first[i].name, again[i].name);
    EXPECT_TRUE(sameGraph(first[i].graph, again[i].graph));
    EXPECT_GE(first[i].graph.numNodes(), options.minNodes);
    EXPECT_LE(first[i].graph.numNodes(), options.maxNodes);
    families.insert(first[i].name.substr(first[i].name.find('-') + 1, 4));
    // Reference text format round trip.
    std::string error;
    std::optional<Graph> parsed = parseReferenceGraph(
        formatReferenceGraph(first[i].graph), first[i].name, &error);
    ASSERT_TRUE(parsed) << error;
    EXPECT_TRUE(sameGraph(first[i].graph, *parsed)) << first[i].name;
  }
  EXPECT_GE(families.size(), 3u);
  options.seed = 8;
  std::vector<GeneratedGraph> other = generateTrainingSet(options);
  EXPECT_FALSE(sameGraph(first[0].graph, other[0].graph) &&
               sameGraph(first[1].graph, other[1].graph));
}

TEST(GeneratorTest, ReferenceFormatKeepsDialectOpTypes) {
  // Graphs read from .mlir carry the dialect's op names; the text written
  // for them must read back with the same types.
  GraphBuilder builder;
  builder.addNode(10, 1, "doppler.input");
  builder.addNode(20, 2, "doppler.einsum");
  builder.addNode(30, 3, "doppler.gather_v2");
  builder.addNode(40, 4, "");
  builder.addEdge(0, 1);
  builder.addEdge(1, 2);
  builder.addEdge(2, 3);
  std::optional<Graph> graph = builder.build();
  ASSERT_TRUE(graph);
  std::string error;
  std::optional<Graph> parsed =
      parseReferenceGraph(formatReferenceGraph(*graph), "typed.txt", &error);
  ASSERT_TRUE(parsed) << error;
  EXPECT_TRUE(sameGraph(*graph, *parsed));
  for (NodeId v = 0; v < graph->numNodes(); ++v)
    EXPECT_EQ(parsed->opType(v), graph->opType(v)) << v;
}

TEST(GeneratorTest, FamilySubsetsAreDisjointAndKeepTheirDraws) {
  TrainingSetOptions options;
  options.count = 40;
  options.seed = 3;
  options.families = kRandomLayeredFamily;
  std::vector<GeneratedGraph> held = generateTrainingSet(options);
  ASSERT_EQ(held.size(), 40u);
  for (const GeneratedGraph &g : held)
    EXPECT_NE(g.name.find("-random-layered-"), std::string::npos) << g.name;
  options.families = kChainMatmulFamily | kFeedForwardFamily |
                     kTransformerFamily;
  std::vector<GeneratedGraph> trained = generateTrainingSet(options);
  ASSERT_EQ(trained.size(), 40u);
  for (const GeneratedGraph &g : trained)
    EXPECT_EQ(g.name.find("-random-layered-"), std::string::npos) << g.name;
  // The full mix's first random graph is the subset's first graph.
  options.families = kAllFamilies;
  for (const GeneratedGraph &g : generateTrainingSet(options))
    if (g.name.find("-random-layered-") != std::string::npos) {
      EXPECT_TRUE(sameGraph(g.graph, held[0].graph));
      break;
    }
  options.families = 0;
  EXPECT_TRUE(generateTrainingSet(options).empty());

  std::string error;
  EXPECT_EQ(parseGraphFamilies("chain,random", &error),
            kChainMatmulFamily | kRandomLayeredFamily);
  EXPECT_EQ(parseGraphFamilies("all", &error), kAllFamilies);
  EXPECT_FALSE(parseGraphFamilies("chain,moe", &error));
  EXPECT_EQ(error, "unknown graph family 'moe' (valid: chain, ffnn, "
                   "transformer, random, all)");
  EXPECT_FALSE(parseGraphFamilies("", &error));
}
