//===- PlacementTestGraphs.h - Graphs the placement tests share -*- C++ -*-===//
//
// The reference graphs (data/reference/graphs, through the
// DOPPLER_SHARED_DATA_DIR definition) and a small diamond, for the
// GoogleTest suites of lib/Placement.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_UNITTESTS_PLACEMENT_PLACEMENTTESTGRAPHS_H
#define DOPPLER_UNITTESTS_PLACEMENT_PLACEMENTTESTGRAPHS_H

#include "Doppler/Placement/Graph.h"
#include "Doppler/Placement/Heuristics.h"
#include "Doppler/Placement/System.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace doppler::placement::testing {

inline const char *const kSharedGraphs[] = {
    "chain_mm_112nodes", "ffnn_192nodes", "transformer_block_215nodes"};

/// data/reference/graphs/NAME.txt; a test failure when it cannot be read.
inline std::optional<Graph> sharedGraph(const std::string &name) {
  std::string error;
  std::optional<Graph> graph = readReferenceGraph(
      std::string(DOPPLER_SHARED_DATA_DIR) + "/graphs/" + name + ".txt",
      &error);
  EXPECT_TRUE(graph) << error;
  return graph;
}

/// 0 -> {1, 2} -> 3 with c = 1, 2, 3, 4 and m = 10, 20, 30, 40.
inline Graph diamond() {
  GraphBuilder builder;
  builder.addNode(1, 10);
  builder.addNode(2, 20);
  builder.addNode(3, 30);
  builder.addNode(4, 40);
  builder.addEdge(0, 1);
  builder.addEdge(0, 2);
  builder.addEdge(1, 3);
  builder.addEdge(2, 3);
  std::string error;
  std::optional<Graph> graph = builder.build(&error);
  EXPECT_TRUE(graph) << error;
  return *graph;
}

/// Shape of randomLayeredGraph's graphs.
struct LayeredGraphShape {
  int32_t minLayers = 3, maxLayers = 8;
  int32_t minWidth = 1, maxWidth = 6;
  /// Inputs per node beyond the first layer: 1..maxInputs, from the layer
  /// just before (mostly) or any earlier one.
  int32_t maxInputs = 3;
  /// Integer costs and output bytes drawn uniformly from these ranges.
  int32_t maxCompute = 10, maxTransfer = 5;
  int32_t minBytes = 10, maxBytes = 100;
  /// Output bytes of the sinks (graph outputs), which stay live to the end;
  /// a negative value draws them like the others.
  double sinkBytes = -1;
};

/// A random layered DAG with output bytes; node ids follow the layers (a
/// topological order, as IR bodies are). Same seed, same graph.
inline Graph randomLayeredGraph(uint64_t seed,
                                const LayeredGraphShape &shape = {}) {
  SeededRandom random(seed);
  auto between = [&](int32_t low, int32_t high) {
    return low + static_cast<int32_t>(
                     random.below(static_cast<uint32_t>(high - low + 1)));
  };
  GraphBuilder builder;
  std::vector<std::vector<NodeId>> layers(
      between(shape.minLayers, shape.maxLayers));
  std::vector<double> bytes;
  std::vector<int32_t> outDegree;
  for (size_t layer = 0; layer < layers.size(); ++layer) {
    const int32_t width = between(shape.minWidth, shape.maxWidth);
    for (int32_t i = 0; i < width; ++i) {
      NodeId v = builder.addNode(between(1, shape.maxCompute),
                                 between(1, shape.maxTransfer));
      layers[layer].push_back(v);
      bytes.push_back(between(shape.minBytes, shape.maxBytes));
      outDegree.push_back(0);
      if (layer == 0)
        continue;
      const int32_t inputs = between(1, shape.maxInputs);
      for (int32_t k = 0; k < inputs; ++k) {
        // Mostly the previous layer; sometimes any earlier one.
        size_t from = random.below(4) == 0
                          ? random.below(static_cast<uint32_t>(layer))
                          : layer - 1;
        const std::vector<NodeId> &pool = layers[from];
        NodeId u = pool[random.below(static_cast<uint32_t>(pool.size()))];
        builder.addEdge(u, v);
        ++outDegree[u];
      }
    }
  }
  for (NodeId v = 0; v < builder.numNodes(); ++v)
    builder.setOutputBytes(v, outDegree[v] == 0 && shape.sinkBytes >= 0
                                  ? shape.sinkBytes
                                  : bytes[v]);
  std::string error;
  std::optional<Graph> graph = builder.build(&error);
  EXPECT_TRUE(graph) << error;
  return graph ? *graph : Graph();
}

/// A memory capacity meaning "no limit".
constexpr double kUnlimited = std::numeric_limits<double>::infinity();

/// One node of a hand-made graph with output sizes: compute and transfer
/// cost, output bytes.
struct NodeSpec {
  double compute, transfer, bytes;
};

/// A graph of `nodes` (ids in order) and `edges` (edge cost = the
/// producer's transfer cost); a test failure when it does not build.
inline Graph makeGraph(const std::vector<NodeSpec> &nodes,
                       const std::vector<std::pair<NodeId, NodeId>> &edges) {
  GraphBuilder builder;
  for (const NodeSpec &node : nodes)
    builder.setOutputBytes(builder.addNode(node.compute, node.transfer),
                           node.bytes);
  for (auto [u, v] : edges)
    builder.addEdge(u, v);
  std::string error;
  std::optional<Graph> graph = builder.build(&error);
  EXPECT_TRUE(graph) << error;
  return graph ? *graph : Graph();
}

/// Identical devices with these memory capacities (one per device).
inline System systemWith(std::vector<double> capacities) {
  std::optional<System> system =
      SystemBuilder(static_cast<int32_t>(capacities.size()))
          .setMemoryCapacities(capacities)
          .build();
  EXPECT_TRUE(system);
  return *system;
}

} // namespace doppler::placement::testing

#endif // DOPPLER_UNITTESTS_PLACEMENT_PLACEMENTTESTGRAPHS_H
