//===- SimulatorBench.cpp - Simulator evaluations per second --------------===//
//
// For each shared reference graph (and a synthetic 300-node graph shaped
// like the reference's 8-GPU transformer block), simulates seeded random
// assignments with
//   * Simulator        the library's reference-mode engine,
//   * ExtendedEngine   the same class with a neutral extension switched on
//                      (unit speeds), i.e. its general event loop,
//   * NaivePort        the obvious port of METHOD section 2 (one
//                      priority_queue, per-run allocation), measured in the
//                      same run as the baseline,
// and prints the median time per evaluation (wall and CPU) and the speed-up
// of Simulator over the baseline. Ratios, not absolute times, are what to
// compare across machines.
//
//   doppler-bench-simulator [--benchmark_filter=...]
//
//===----------------------------------------------------------------------===//

#include "Doppler/Placement/Simulator.h"

#include "../unittests/Placement/NaiveSimulator.h"

#include "MedianCollector.h"

#include <benchmark/benchmark.h>
#include <cstdio>
#include <map>
#include <random>

using namespace doppler::placement;

namespace {

struct Workload {
  std::string name;
  Graph graph;
  int32_t numDevices;
  std::vector<std::vector<DeviceId>> assignments;
};

constexpr int kAssignmentsPerGraph = 64;

void addRandomAssignments(Workload &workload, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<DeviceId> device(0, workload.numDevices - 1);
  for (int i = 0; i < kAssignmentsPerGraph; ++i) {
    std::vector<DeviceId> assignment(workload.graph.numNodes());
    for (DeviceId &d : assignment)
      d = device(rng);
    workload.assignments.push_back(std::move(assignment));
  }
}

/// A seeded random DAG of 300 nodes and about 400 edges, with few distinct
/// costs (so ties happen, as in the reference graphs), on 8 devices.
Graph syntheticGraph() {
  std::mt19937_64 rng(300);
  const int numNodes = 300;
  const double computeChoices[] = {16777216, 67108864, 184683593728,
                                   738734374912};
  GraphBuilder builder;
  std::uniform_int_distribution<int> pick(0, 3);
  for (int v = 0; v < numNodes; ++v) {
    double c = computeChoices[pick(rng)];
    builder.addNode(c, 4 * c);
  }
  // Sources are the first 30 nodes; every later node reads 1-2 earlier
  // ones, mostly recent (a deep, moderately wide graph).
  for (int v = 30; v < numNodes; ++v) {
    int fanIn = 1 + (v % 3 == 0);
    for (int k = 0; k < fanIn; ++k) {
      std::uniform_int_distribution<int> back(1, std::min(v, 40));
      builder.addEdge(v - back(rng), v);
    }
  }
  return *builder.build();
}

std::vector<Workload> loadWorkloads(std::string *error) {
  std::vector<Workload> workloads;
  const char *names[] = {"chain_mm_112nodes", "ffnn_192nodes",
                         "transformer_block_215nodes"};
  uint64_t seed = 1;
  for (const char *name : names) {
    std::string path =
        std::string(DOPPLER_SHARED_DATA_DIR) + "/graphs/" + name + ".txt";
    std::optional<Graph> graph = readReferenceGraph(path, error);
    if (!graph)
      return {};
    workloads.push_back({name, std::move(*graph), 4, {}});
    addRandomAssignments(workloads.back(), seed++);
  }
  workloads.push_back({"synthetic_300nodes", syntheticGraph(), 8, {}});
  addRandomAssignments(workloads.back(), seed++);
  return workloads;
}

void reportRate(benchmark::State &state, const Workload &workload) {
  state.counters["evals/s"] = benchmark::Counter(
      static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.SetLabel(std::to_string(workload.graph.numNodes()) + " nodes, " +
                 std::to_string(workload.graph.numEdges()) + " edges");
}

void benchSimulator(benchmark::State &state, const Workload *workload) {
  Simulator simulator(workload->graph, workload->numDevices);
  size_t i = 0;
  for (auto _ : state)
    benchmark::DoNotOptimize(
        simulator.run(workload->assignments[i++ % kAssignmentsPerGraph]));
  reportRate(state, *workload);
}

void benchExtended(benchmark::State &state, const Workload *workload) {
  SimulatorOptions neutral;
  neutral.deviceSpeeds = true; // unit speeds: same answers, general loop
  Simulator simulator(workload->graph, System::uniform(workload->numDevices),
                      neutral);
  size_t i = 0;
  for (auto _ : state)
    benchmark::DoNotOptimize(
        simulator.run(workload->assignments[i++ % kAssignmentsPerGraph]));
  reportRate(state, *workload);
}

void benchNaive(benchmark::State &state, const Workload *workload) {
  size_t i = 0;
  for (auto _ : state)
    benchmark::DoNotOptimize(doppler::placement::testing::naiveSimulate(
        workload->graph, workload->numDevices,
        workload->assignments[i++ % kAssignmentsPerGraph]));
  reportRate(state, *workload);
}


} // namespace

int main(int argc, char **argv) {
  std::string error;
  static std::vector<Workload> workloads = loadWorkloads(&error);
  if (workloads.empty()) {
    std::fprintf(stderr, "doppler-bench-simulator: %s\n", error.c_str());
    return 1;
  }
  using BenchFn = void (*)(benchmark::State &, const Workload *);
  const std::pair<const char *, BenchFn> engines[] = {
      {"Simulator", benchSimulator},
      {"ExtendedEngine", benchExtended},
      {"NaivePort", benchNaive}};
  doppler::bench::registerPerWorkload(engines, workloads, 0.2, 10);

  doppler::bench::MedianCollector reporter;
  if (!doppler::bench::runBenchmarks(argc, argv, reporter))
    return 1;

  // Wall time is what the brief asks for; CPU time is printed beside it
  // because shared machines inflate wall time.
  std::printf("\nMedian microseconds per evaluation over 10 repetitions, "
              "wall (cpu):\n");
  std::printf("%-28s %17s %17s %17s %14s\n", "graph", "Simulator",
              "ExtendedEngine", "NaivePort", "speed-up");
  for (const Workload &workload : workloads) {
    auto median = [&](const char *engine) {
      return reporter.get(std::string(engine) + "/" + workload.name);
    };
    auto fast = median("Simulator"), extended = median("ExtendedEngine"),
         naive = median("NaivePort");
    auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
    std::printf("%-28s %8.2f (%6.2f) %8.2f (%6.2f) %8.2f (%6.2f) %5.1fx "
                "(%4.1fx)\n",
                workload.name.c_str(), fast.real, fast.cpu, extended.real,
                extended.cpu, naive.real, naive.cpu,
                ratio(naive.real, fast.real),
                ratio(naive.cpu, fast.cpu));
  }
  return 0;
}
