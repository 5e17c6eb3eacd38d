//===- LearningBench.cpp - Cost of training episodes and placement --------===//
//
// Medians over repetitions; each learned-policy figure has a baseline from
// the same run to divide by (the environment episode alone, the
// critical-path heuristic), since absolute times vary on shared machines.
//
//   doppler-bench-learning --benchmark_repetitions=5
//       --benchmark_report_aggregates_only=true (one line)
//
// Graphs: "g200" is a generated transformer layer of ~200 nodes (the size
// the targets name), "g10k" a generated stack of layers of ~10,000 nodes.
// The torch work is single-threaded (see DualPolicy.h).
//
//===----------------------------------------------------------------------===//

#include "Doppler/Placement/Environment.h"
#include "Doppler/Placement/Heuristics.h"
#include "Doppler/Placement/Learning/DualPolicy.h"
#include "Doppler/Placement/Learning/GraphGenerator.h"
#include "Doppler/Placement/Learning/Trainer.h"
#include "Doppler/Placement/Simulator.h"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>

using namespace doppler::placement;

namespace {

const Graph &graph200() {
  static const Graph graph = [] {
    TransformerShape shape;
    shape.sequence = 2048;
    shape.model = 2048;
    shape.ffn = 5504;
    shape.sequenceParts = 2;
    shape.headGroups = 4;
    shape.ffnParts = 2;
    std::string error;
    auto generated = generateTransformer(shape, CostRates(), &error);
    if (!generated) {
      std::fprintf(stderr, "error: %s\n", error.c_str());
      std::exit(1);
    }
    return generated->graph;
  }();
  return graph;
}

const Graph &graph10k() {
  static const Graph graph = [] {
    TransformerShape shape;
    shape.sequence = 8192;
    shape.model = 4096;
    shape.ffn = 11008;
    shape.sequenceParts = 4;
    shape.headGroups = 8;
    shape.ffnParts = 4;
    shape.layers = 17;
    auto generated = generateTransformer(shape, CostRates());
    return generated->graph;
  }();
  return graph;
}

void reportGraph(benchmark::State &state, const Graph &graph) {
  state.counters["nodes"] = graph.numNodes();
  state.counters["edges"] = graph.numEdges();
}

/// Baseline: one episode of the decision process with the critical-path
/// rule (environment steps and device estimates, no network).
void BM_EnvironmentEpisode(benchmark::State &state) {
  const Graph &graph = graph200();
  for (auto _ : state) {
    std::vector<DeviceId> placement = placeCriticalPath(graph, 4);
    benchmark::DoNotOptimize(placement.data());
  }
  reportGraph(state, graph);
}
BENCHMARK(BM_EnvironmentEpisode)->Unit(benchmark::kMillisecond);

void trainingEpisode(benchmark::State &state, TrainingStage stage,
                     const ModelConfig &model) {
  TrainerOptions options;
  options.graphs.push_back({"g200", graph200()});
  options.deviceCounts = {4};
  options.stages = {StageOptions::defaults(stage, 1000000000)};
  options.model = model;
  options.evaluateEvery = 0;
  options.progress = false;
  std::string error;
  auto session = TrainingSession::create(options, &error);
  if (!session) {
    state.SkipWithError(error.c_str());
    return;
  }
  session->runEpisode(); // warm-up (allocations, lazy simulator)
  for (auto _ : state)
    if (!session->runEpisode(&error)) {
      state.SkipWithError(error.c_str());
      return;
    }
  reportGraph(state, graph200());
}

void BM_ImitationEpisode(benchmark::State &state) {
  trainingEpisode(state, TrainingStage::Imitation, ModelConfig::slim());
}
BENCHMARK(BM_ImitationEpisode)->Unit(benchmark::kMillisecond);

void BM_SimulationRLEpisode(benchmark::State &state) {
  trainingEpisode(state, TrainingStage::SimulationRL, ModelConfig::slim());
}
BENCHMARK(BM_SimulationRLEpisode)->Unit(benchmark::kMillisecond);

void BM_ImitationEpisodeReference(benchmark::State &state) {
  trainingEpisode(state, TrainingStage::Imitation, ModelConfig::reference());
}
BENCHMARK(BM_ImitationEpisodeReference)->Unit(benchmark::kMillisecond);

void BM_SimulationRLEpisodeReference(benchmark::State &state) {
  trainingEpisode(state, TrainingStage::SimulationRL, ModelConfig::reference());
}
BENCHMARK(BM_SimulationRLEpisodeReference)->Unit(benchmark::kMillisecond);

/// The embedded default model (a fresh default-architecture model when the
/// library has none).
LearnedPolicy &defaultPolicy() {
  static std::unique_ptr<LearnedPolicy> policy = [] {
    std::unique_ptr<LearnedPolicy> loaded = LearnedPolicy::loadDefault();
    return loaded ? std::move(loaded)
                  : LearnedPolicy::create(ModelConfig::slim(), 0);
  }();
  return *policy;
}

/// Baseline for placement: the critical-path heuristic on the same graph.
void BM_CriticalPath10k(benchmark::State &state) {
  const Graph &graph = graph10k();
  for (auto _ : state) {
    std::vector<DeviceId> placement = placeCriticalPath(graph, 8);
    benchmark::DoNotOptimize(placement.data());
  }
  reportGraph(state, graph);
}
BENCHMARK(BM_CriticalPath10k)->Unit(benchmark::kMillisecond);

void BM_PlaceDefault10k(benchmark::State &state) {
  const Graph &graph = graph10k();
  LearnedPolicy &policy = defaultPolicy();
  for (auto _ : state) {
    auto result = policy.place(graph, 8);
    benchmark::DoNotOptimize(result);
  }
  reportGraph(state, graph);
}
BENCHMARK(BM_PlaceDefault10k)->Unit(benchmark::kMillisecond);

void BM_PlaceDefault200(benchmark::State &state) {
  const Graph &graph = graph200();
  LearnedPolicy &policy = defaultPolicy();
  for (auto _ : state) {
    auto result = policy.place(graph, 4);
    benchmark::DoNotOptimize(result);
  }
  reportGraph(state, graph);
}
BENCHMARK(BM_PlaceDefault200)->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
