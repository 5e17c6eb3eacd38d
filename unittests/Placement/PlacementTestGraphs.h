//===- PlacementTestGraphs.h - Graphs the placement tests share -*- C++ -*-===//
//
// The shared reference graphs (shared/data/graphs, through the
// DOPPLER_SHARED_DATA_DIR definition) and a small diamond, for the
// GoogleTest suites of lib/Placement.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_UNITTESTS_PLACEMENT_PLACEMENTTESTGRAPHS_H
#define DOPPLER_UNITTESTS_PLACEMENT_PLACEMENTTESTGRAPHS_H

#include "Doppler/Placement/Graph.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

namespace doppler::placement::testing {

inline const char *const kSharedGraphs[] = {
    "chain_mm_112nodes", "ffnn_192nodes", "transformer_block_215nodes"};

/// shared/data/graphs/NAME.txt; a test failure when it cannot be read.
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

} // namespace doppler::placement::testing

#endif // DOPPLER_UNITTESTS_PLACEMENT_PLACEMENTTESTGRAPHS_H
