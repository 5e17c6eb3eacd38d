//===- MemoryBench.cpp - Cost of memory fitting and offload planning ------===//
//
// For each shared reference graph on 4 devices, with output bytes derived
// from its transfer costs (bytes = 1000 x m(v): the reference graphs carry
// no sizes), measures
//   * FitToMemory   fitToMemory of the critical-path placement, capacities
//                   set to the round-robin placement's simulated peaks (so
//                   a feasible placement exists), 2000 evaluations at most;
//   * PlanOffload   planOffload of the critical-path placement, capacities
//                   at 80% of its own simulated peaks (the plan's order and
//                   evictions);
//   * Simulate      one memory-tracking simulator run of that placement:
//                   the baseline, measured in the same run;
// and prints median microseconds over repetitions, each median as a
// multiple of the baseline, and what the two algorithms achieved.
//
//   doppler-bench-memory [--benchmark_filter=...]
//
//===----------------------------------------------------------------------===//

#include "Doppler/Placement/Heuristics.h"
#include "Doppler/Placement/MemoryFit.h"
#include "Doppler/Placement/Offload.h"
#include "Doppler/Placement/Simulator.h"

#include "MedianCollector.h"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>
#include <vector>

using namespace doppler::placement;

namespace {

constexpr int32_t kDevices = 4;
constexpr int kRepetitions = 5;
constexpr int64_t kFitEvaluations = 2000;

struct Workload {
  std::string name;
  Graph graph;
  std::vector<DeviceId> placed; // critical path
  System fitSystem, offloadSystem;
  OffloadOptions offload;
};

SimulatorOptions tracking() {
  SimulatorOptions options;
  options.trackMemory = true;
  return options;
}

std::vector<double> peaksOf(const Graph &graph,
                            const std::vector<DeviceId> &assignment) {
  Simulator simulator(graph, System::uniform(kDevices), tracking());
  simulator.run(assignment);
  return simulator.schedule().peakMemory;
}

std::vector<Workload> loadWorkloads(std::string *error) {
  std::vector<Workload> workloads;
  for (const char *name : {"chain_mm_112nodes", "ffnn_192nodes",
                           "transformer_block_215nodes"}) {
    std::optional<Graph> reference = readReferenceGraph(
        std::string(DOPPLER_SHARED_DATA_DIR) + "/graphs/" + name + ".txt",
        error);
    if (!reference)
      return {};
    GraphBuilder builder;
    for (NodeId v = 0; v < reference->numNodes(); ++v) {
      builder.addNode(reference->computeCost(v), reference->transferCost(v));
      builder.setOutputBytes(v, 1000 * reference->transferCost(v));
    }
    for (int32_t e = 0; e < reference->numEdges(); ++e)
      builder.addEdge(reference->edgeSource(e), reference->edgeTarget(e),
                      reference->edgeCost(e));
    std::optional<Graph> graph = builder.build(error);
    if (!graph)
      return {};
    Workload workload{name, std::move(*graph), {}, {}, {}, {}};
    workload.placed = placeCriticalPath(workload.graph, kDevices);
    std::vector<double> fit =
        peaksOf(workload.graph, placeRoundRobin(workload.graph, kDevices));
    std::vector<double> tight = peaksOf(workload.graph, workload.placed);
    double bytes = 0;
    for (double &capacity : tight) {
      capacity *= 0.8;
      bytes += capacity;
    }
    std::optional<System> fitSystem =
        SystemBuilder(kDevices).setMemoryCapacities(fit).build(error);
    std::optional<System> offloadSystem =
        SystemBuilder(kDevices).setMemoryCapacities(tight).build(error);
    if (!fitSystem || !offloadSystem)
      return {};
    workload.fitSystem = *fitSystem;
    workload.offloadSystem = *offloadSystem;
    // A host link that moves a tenth of a device's capacity per unit.
    workload.offload.hostLinks.assign(
        kDevices, HostLink{bytes / kDevices / 10, 1});
    workloads.push_back(std::move(workload));
  }
  return workloads;
}

void label(benchmark::State &state, const Workload &workload) {
  state.SetLabel(std::to_string(workload.graph.numNodes()) + " nodes");
}

void benchFitToMemory(benchmark::State &state, const Workload *workload) {
  MemoryFitOptions options;
  options.maxEvaluations = kFitEvaluations;
  for (auto _ : state)
    benchmark::DoNotOptimize(fitToMemory(workload->graph, workload->fitSystem,
                                         workload->placed, options));
  label(state, *workload);
}

void benchPlanOffload(benchmark::State &state, const Workload *workload) {
  for (auto _ : state)
    benchmark::DoNotOptimize(planOffload(workload->graph,
                                         workload->offloadSystem,
                                         workload->placed, workload->offload));
  label(state, *workload);
}

void benchSimulate(benchmark::State &state, const Workload *workload) {
  Simulator simulator(workload->graph, workload->offloadSystem, tracking());
  for (auto _ : state)
    benchmark::DoNotOptimize(simulator.run(workload->placed));
  label(state, *workload);
}

} // namespace

int main(int argc, char **argv) {
  std::string error;
  static std::vector<Workload> workloads = loadWorkloads(&error);
  if (workloads.empty()) {
    std::fprintf(stderr, "doppler-bench-memory: %s\n", error.c_str());
    return 1;
  }
  using BenchFn = void (*)(benchmark::State &, const Workload *);
  const std::pair<const char *, BenchFn> kinds[] = {
      {"FitToMemory", benchFitToMemory},
      {"PlanOffload", benchPlanOffload},
      {"Simulate", benchSimulate}};
  doppler::bench::registerPerWorkload(kinds, workloads, 0.1, kRepetitions);

  doppler::bench::MedianCollector reporter;
  if (!doppler::bench::runBenchmarks(argc, argv, reporter))
    return 1;

  std::printf("\nMedian microseconds (%d repetitions, %d devices) and, in "
              "brackets, multiples of the Simulate baseline:\n",
              kRepetitions, kDevices);
  doppler::bench::printRatioTable(reporter, kinds, workloads, "Simulate", 12,
                                  1, 0);

  std::printf("\nWhat they achieved:\n");
  for (const Workload &workload : workloads) {
    MemoryFitOptions options;
    options.maxEvaluations = kFitEvaluations;
    std::optional<MemoryFitResult> fit = fitToMemory(
        workload.graph, workload.fitSystem, workload.placed, options);
    std::optional<OffloadPlan> plan =
        planOffload(workload.graph, workload.offloadSystem, workload.placed,
                    workload.offload);
    if (!fit || !plan)
      continue;
    std::printf("%-28s fit: %s, makespan %g -> %g, %lld evaluations%s%s; "
                "offload: %s, %s, %zu evictions, makespan %g -> %g, %lld "
                "evaluations\n",
                workload.name.c_str(), fit->feasible ? "feasible" : "no fit",
                fit->initialMakespan, fit->makespan,
                static_cast<long long>(fit->evaluations),
                fit->restartPolicy.empty() ? "" : ", restarted from ",
                fit->restartPolicy.c_str(), plan->fits ? "fits" : "no fit",
                plan->priority.empty() ? "readiness order" : "planned order",
                plan->evictions.size(), plan->unlimitedMakespan,
                plan->makespan, static_cast<long long>(plan->evaluations));
  }
  return 0;
}
