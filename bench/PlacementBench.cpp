//===- PlacementBench.cpp - Cost of placement episodes and heuristics -----===//
//
// For each shared reference graph on 4 devices, measures
//   * Episode          a whole PlacementEnvironment episode with the
//                      cheapest decisions (first candidate, device of
//                      smallest est): the environment's own cost,
//   * EpisodeFeatures  the same, also computing the 5 device features of
//                      every picked node (what a learned PLC reads),
//   * CriticalPath     placeCriticalPath (b-levels included),
//   * Heft             placeHeft,
//   * Simulate         one reference-mode simulator run of the result,
//   * BottomLevels     one b-level sweep of the graph: the baseline, a
//                      plain topological pass measured in the same run,
// and prints median microseconds over repetitions and each median as a
// multiple of the baseline. Ratios, not absolute times, are what to compare
// across machines.
//
//   doppler-bench-placement [--benchmark_filter=...]
//
//===----------------------------------------------------------------------===//

#include "Doppler/Placement/Analysis.h"
#include "Doppler/Placement/Environment.h"
#include "Doppler/Placement/Heuristics.h"
#include "Doppler/Placement/Simulator.h"

#include "MedianCollector.h"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

using namespace doppler::placement;

namespace {

constexpr int32_t kDevices = 4;
constexpr int kRepetitions = 10;

struct Workload {
  std::string name;
  Graph graph;
};

std::vector<Workload> loadWorkloads(std::string *error) {
  std::vector<Workload> workloads;
  for (const char *name : {"chain_mm_112nodes", "ffnn_192nodes",
                           "transformer_block_215nodes"}) {
    std::optional<Graph> graph = readReferenceGraph(
        std::string(DOPPLER_SHARED_DATA_DIR) + "/graphs/" + name + ".txt",
        error);
    if (!graph)
      return {};
    workloads.push_back({name, std::move(*graph)});
  }
  return workloads;
}

void label(benchmark::State &state, const Workload &workload) {
  state.SetLabel(std::to_string(workload.graph.numNodes()) + " nodes");
}

void benchEpisode(benchmark::State &state, const Workload *workload) {
  PlacementEnvironment env;
  for (auto _ : state) {
    env.reset(workload->graph, kDevices);
    while (!env.done()) {
      NodeId v = env.candidates()[0];
      env.step(v, env.earliestDevice(v));
    }
    benchmark::DoNotOptimize(env.estimatedMakespan());
  }
  label(state, *workload);
}

void benchEpisodeFeatures(benchmark::State &state, const Workload *workload) {
  PlacementEnvironment env;
  std::vector<double> features(kDevices * kNumDeviceFeatures);
  for (auto _ : state) {
    env.reset(workload->graph, kDevices);
    while (!env.done()) {
      NodeId v = env.candidates()[0];
      env.deviceFeatures(v, features.data());
      DeviceId best = 0;
      for (DeviceId d = 1; d < kDevices; ++d)
        if (features[d * kNumDeviceFeatures + kEarliestStartFeature] <
            features[best * kNumDeviceFeatures + kEarliestStartFeature])
          best = d;
      env.step(v, best);
    }
    benchmark::DoNotOptimize(env.estimatedMakespan());
  }
  label(state, *workload);
}

void benchCriticalPath(benchmark::State &state, const Workload *workload) {
  for (auto _ : state)
    benchmark::DoNotOptimize(placeCriticalPath(workload->graph, kDevices));
  label(state, *workload);
}

void benchHeft(benchmark::State &state, const Workload *workload) {
  for (auto _ : state)
    benchmark::DoNotOptimize(placeHeft(workload->graph, kDevices));
  label(state, *workload);
}

void benchSimulate(benchmark::State &state, const Workload *workload) {
  std::vector<DeviceId> placed = placeCriticalPath(workload->graph, kDevices);
  Simulator simulator(workload->graph, kDevices);
  for (auto _ : state)
    benchmark::DoNotOptimize(simulator.run(placed));
  label(state, *workload);
}

void benchBottomLevels(benchmark::State &state, const Workload *workload) {
  for (auto _ : state)
    benchmark::DoNotOptimize(computeBottomLevels(workload->graph));
  label(state, *workload);
}


} // namespace

int main(int argc, char **argv) {
  std::string error;
  static std::vector<Workload> workloads = loadWorkloads(&error);
  if (workloads.empty()) {
    std::fprintf(stderr, "doppler-bench-placement: %s\n", error.c_str());
    return 1;
  }
  using BenchFn = void (*)(benchmark::State &, const Workload *);
  const std::pair<const char *, BenchFn> kinds[] = {
      {"Episode", benchEpisode},
      {"EpisodeFeatures", benchEpisodeFeatures},
      {"CriticalPath", benchCriticalPath},
      {"Heft", benchHeft},
      {"Simulate", benchSimulate},
      {"BottomLevels", benchBottomLevels}};
  doppler::bench::registerPerWorkload(kinds, workloads, 0.1, kRepetitions);

  doppler::bench::MedianCollector reporter;
  if (!doppler::bench::runBenchmarks(argc, argv, reporter))
    return 1;

  std::printf("\nMedian microseconds (%d repetitions, %d devices) and, in "
              "brackets, multiples of the BottomLevels baseline:\n",
              kRepetitions, kDevices);
  doppler::bench::printRatioTable(reporter, kinds, workloads, "BottomLevels",
                                  8, 2, 1);
  return 0;
}
