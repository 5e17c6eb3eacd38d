//===- GraphFuzzer.cpp - Fuzz target: the reference graph reader ----------===//
//
// doppler-fuzz-graph: the input is a reference graph file (the text format
// of shared/data/graphs that doppler-place reads). A graph that parses is
// then used as doppler-place uses it: placed on two devices by the
// critical-path and HEFT heuristics and simulated; the simulated makespan
// must be a number (not NaN) and not negative.
//
//===----------------------------------------------------------------------===//

#include "Doppler/Placement/Graph.h"
#include "Doppler/Placement/Heuristics.h"
#include "Doppler/Placement/Simulator.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace doppler::placement;

namespace {

/// Larger graphs are only parsed: placing and simulating them would make
/// one execution slow without exercising anything new.
constexpr int32_t kMaxNodesToPlace = 2048;

void checkMakespan(double makespan, const char *policy) {
  if (std::isnan(makespan) || makespan < 0) {
    std::fprintf(stderr, "doppler-fuzz-graph: %s placement simulated to "
                         "makespan %g\n", policy, makespan);
    std::abort();
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  std::string error;
  std::optional<Graph> graph = parseReferenceGraph(text, "fuzz.txt", &error);
  if (!graph) {
    if (error.empty()) {
      std::fprintf(stderr, "doppler-fuzz-graph: rejected without an error\n");
      std::abort();
    }
    return 0;
  }
  if (graph->numNodes() > kMaxNodesToPlace)
    return 0;
  Simulator simulator(*graph, 2);
  std::vector<DeviceId> criticalPath = placeCriticalPath(*graph, 2);
  if (!validateAssignment(*graph, 2, criticalPath, &error)) {
    std::fprintf(stderr, "doppler-fuzz-graph: critical-path: %s\n",
                 error.c_str());
    std::abort();
  }
  checkMakespan(simulator.run(criticalPath), "critical-path");
  std::vector<DeviceId> heft = placeHeft(*graph, 2);
  if (!validateAssignment(*graph, 2, heft, &error)) {
    std::fprintf(stderr, "doppler-fuzz-graph: heft: %s\n", error.c_str());
    std::abort();
  }
  checkMakespan(simulator.run(heft), "heft");
  return 0;
}
