//===- ModelFuzzer.cpp - Fuzz target: the model archive loader ------------===//
//
// doppler-fuzz-model: the input is a model file of the learned policy (the
// LibTorch archive that doppler-train writes and --model loads; see
// lib/Placement/Learning/ModelArchive.cpp). A model that loads must place a
// small fixed graph on two devices with a valid assignment and a makespan
// that is a number.
//
// Only Doppler's code is instrumented: LibTorch's archive reader is
// Debian's prebuilt library, so libFuzzer gets no coverage from inside it.
//
//===----------------------------------------------------------------------===//

#include "Doppler/Placement/Graph.h"
#include "Doppler/Placement/Learning/DualPolicy.h"
#include "Doppler/Placement/Simulator.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

using namespace doppler::placement;

namespace {

[[noreturn]] void fail(const std::string &message) {
  std::fprintf(stderr, "doppler-fuzz-model: %s\n", message.c_str());
  std::abort();
}

/// Two chains that meet: 0 -> {1, 2} -> 3 -> {4, 5}.
const Graph &smallGraph() {
  static const Graph graph = [] {
    GraphBuilder builder;
    for (int i = 0; i < 6; ++i)
      builder.addNode(1.0 + i, 0.5 * (i % 3));
    builder.addEdge(0, 1);
    builder.addEdge(0, 2);
    builder.addEdge(1, 3);
    builder.addEdge(2, 3);
    builder.addEdge(3, 4);
    builder.addEdge(3, 5);
    std::string error;
    std::optional<Graph> built = builder.build(&error);
    if (!built)
      fail("cannot build the test graph: " + error);
    return *built;
  }();
  return graph;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string error;
  std::unique_ptr<LearnedPolicy> policy =
      LearnedPolicy::loadFromMemory(data, size, "fuzz.pt", &error);
  if (!policy) {
    if (error.empty())
      fail("rejected without an error");
    return 0;
  }
  const Graph &graph = smallGraph();
  std::optional<PlacementResult> placed = policy->place(graph, 2, {}, &error);
  if (!placed)
    fail("a model that loads cannot place: " + error);
  if (!validateAssignment(graph, 2, placed->assignment, &error))
    fail("invalid placement: " + error);
  if (std::isnan(placed->makespan) || placed->makespan < 0)
    fail("makespan " + std::to_string(placed->makespan));
  return 0;
}
