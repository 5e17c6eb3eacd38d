//===- LearningBench.cpp - Cost of training episodes and placement --------===//
//
// Medians over repetitions; each learned-policy figure has a baseline from
// the same run to divide by (the environment episode alone, the
// critical-path heuristic), since absolute times vary on shared machines.
//
//   doppler-bench-learning --benchmark_repetitions=5
//       --benchmark_report_aggregates_only=true (one line)
//
// Graphs: "g200" is a generated transformer layer (204 nodes, the size the
// targets name), "g10k" a generated stack of 11 layers (10,560 nodes).
// x_baseline: time per iteration over the environment episode alone
// (BM_EnvironmentEpisode), or for the 10k placement over the critical-path
// heuristic on the same graph.
// The torch work is single-threaded (see DualPolicy.h). The heap keeps freed
// memory, as in doppler-train (keepFreedMemoryForTraining).
//
//===----------------------------------------------------------------------===//

#include "Doppler/Placement/Environment.h"
#include "Doppler/Placement/Heuristics.h"
#include "Doppler/Placement/Learning/DualPolicy.h"
#include "Doppler/Placement/Learning/GraphGenerator.h"
#include "Doppler/Placement/Learning/Trainer.h"
#include "Doppler/Placement/Simulator.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

using namespace doppler::placement;

namespace {

const bool kKeepFreedMemory = (keepFreedMemoryForTraining(), true);

const Graph &graph200() {
  static const Graph graph = [] {
    TransformerShape shape;
    shape.sequence = 2048;
    shape.model = 2048;
    shape.ffn = 5504;
    shape.sequenceParts = 2;
    shape.headGroups = 5;
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
    shape.layers = 11;
    auto generated = generateTransformer(shape, CostRates());
    return generated->graph;
  }();
  return graph;
}

void reportGraph(benchmark::State &state, const Graph &graph) {
  state.counters["nodes"] = graph.numNodes();
  state.counters["edges"] = graph.numEdges();
}

/// Median seconds of `work` over `runs` runs (measured once per baseline).
template <typename Work> double medianSeconds(int runs, Work work) {
  std::vector<double> seconds;
  for (int i = 0; i < runs; ++i) {
    auto start = std::chrono::steady_clock::now();
    work();
    seconds.push_back(std::chrono::duration<double>(
                          std::chrono::steady_clock::now() - start)
                          .count());
  }
  std::nth_element(seconds.begin(), seconds.begin() + runs / 2, seconds.end());
  return seconds[runs / 2];
}

/// Adds "x_baseline": time per iteration divided by `baselineSeconds`.
void reportRatio(benchmark::State &state, double baselineSeconds) {
  state.counters["x_baseline"] = benchmark::Counter(
      baselineSeconds, benchmark::Counter::kIsIterationInvariantRate |
                           benchmark::Counter::kInvert);
}

/// The environment episode alone: the critical-path rule on the 200-node
/// graph (environment steps and device estimates, no network).
double environmentEpisodeSeconds() {
  static const double seconds = medianSeconds(201, [] {
    benchmark::DoNotOptimize(placeCriticalPath(graph200(), 4).data());
  });
  return seconds;
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
  reportRatio(state, environmentEpisodeSeconds());
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

/// The default architecture without the heuristic prior: what it costs.
ModelConfig slimWithoutPrior() {
  ModelConfig config = ModelConfig::slim();
  config.heuristicPrior = false;
  return config;
}

void BM_ImitationEpisodeNoPrior(benchmark::State &state) {
  trainingEpisode(state, TrainingStage::Imitation, slimWithoutPrior());
}
BENCHMARK(BM_ImitationEpisodeNoPrior)->Unit(benchmark::kMillisecond);

void BM_SimulationRLEpisodeNoPrior(benchmark::State &state) {
  trainingEpisode(state, TrainingStage::SimulationRL, slimWithoutPrior());
}
BENCHMARK(BM_SimulationRLEpisodeNoPrior)->Unit(benchmark::kMillisecond);

/// The per-graph recipe's architecture (scripts/train_per_graph.sh): the
/// default plus the join-split feature and the join-aware prior.
ModelConfig slimWithJoin() {
  ModelConfig config = ModelConfig::slim();
  config.joinFeature = true;
  return config;
}

void BM_ImitationEpisodeJoin(benchmark::State &state) {
  trainingEpisode(state, TrainingStage::Imitation, slimWithJoin());
}
BENCHMARK(BM_ImitationEpisodeJoin)->Unit(benchmark::kMillisecond);

void BM_SimulationRLEpisodeJoin(benchmark::State &state) {
  trainingEpisode(state, TrainingStage::SimulationRL, slimWithJoin());
}
BENCHMARK(BM_SimulationRLEpisodeJoin)->Unit(benchmark::kMillisecond);

/// The default model's architecture (scripts/train_default_model.sh): the
/// join split and the completions (lookahead=1), which RL episodes run
/// and imitation episodes leave out.
ModelConfig slimWithJoinAndLookahead() {
  ModelConfig config = slimWithJoin();
  config.lookahead = true;
  return config;
}

void BM_SimulationRLEpisodeLookahead(benchmark::State &state) {
  trainingEpisode(state, TrainingStage::SimulationRL,
                  slimWithJoinAndLookahead());
}
BENCHMARK(BM_SimulationRLEpisodeLookahead)->Unit(benchmark::kMillisecond);

/// The default architecture before projected sums and 4 rounds: METHOD's
/// head (sums standardised at width H, then Linear blocks per row) and 6
/// rounds. What those two changes saved.
ModelConfig slimWithMethodHeadAndSixRounds() {
  ModelConfig config = ModelConfig::slim();
  config.projectSums = false;
  config.messagePassingRounds = 6;
  return config;
}

void BM_ImitationEpisodeMethodHead6Rounds(benchmark::State &state) {
  trainingEpisode(state, TrainingStage::Imitation,
                  slimWithMethodHeadAndSixRounds());
}
BENCHMARK(BM_ImitationEpisodeMethodHead6Rounds)->Unit(benchmark::kMillisecond);

void BM_SimulationRLEpisodeMethodHead6Rounds(benchmark::State &state) {
  trainingEpisode(state, TrainingStage::SimulationRL,
                  slimWithMethodHeadAndSixRounds());
}
BENCHMARK(BM_SimulationRLEpisodeMethodHead6Rounds)
    ->Unit(benchmark::kMillisecond);

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

/// The default model's greedy pass on `graph` at `devices`, against the same
/// model placing with `baseline` options, timed in the same run (median of
/// `runs`).
void placeAgainst(benchmark::State &state, const Graph &graph,
                  int32_t devices, const PlaceOptions &baseline, int runs) {
  LearnedPolicy &policy = defaultPolicy();
  const double seconds = medianSeconds(runs, [&] {
    benchmark::DoNotOptimize(policy.place(graph, devices, baseline));
  });
  for (auto _ : state) {
    auto result = policy.place(graph, devices);
    benchmark::DoNotOptimize(result);
  }
  reportGraph(state, graph);
  reportRatio(state, seconds);
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
  const double criticalPath = medianSeconds(21, [&] {
    benchmark::DoNotOptimize(placeCriticalPath(graph, 8).data());
  });
  for (auto _ : state) {
    auto result = policy.place(graph, 8);
    benchmark::DoNotOptimize(result);
  }
  reportGraph(state, graph);
  reportRatio(state, criticalPath);
}
BENCHMARK(BM_PlaceDefault10k)->Unit(benchmark::kMillisecond);

/// What following the better rule past the completions' budget costs the
/// greedy pass on the 10k-node graph at D = 8 (Lookahead::followRule: a
/// pass of each heuristic and two simulator runs choose the rule). The
/// baseline is the same model with a budget too small even for those runs
/// (lookaheadVisits 1: the network and the other priors alone, as before).
void BM_PlaceDefault10kFollowRule(benchmark::State &state) {
  PlaceOptions alone;
  alone.lookaheadVisits = 1;
  placeAgainst(state, graph10k(), 8, alone, 5);
}
BENCHMARK(BM_PlaceDefault10kFollowRule)->Unit(benchmark::kMillisecond);

/// The candidate window's gain: the default placement against SEL scoring
/// every ready node (candidateWindow 0, the baseline), on a graph whose ready
/// sets reach hundreds of nodes (a layered random DAG, 5,000 nodes).
void BM_PlaceDefaultWideWindow(benchmark::State &state) {
  static const Graph graph = [] {
    SeededRandom random(5);
    GraphBuilder builder;
    const int32_t nodes = 5000, width = 16;
    for (int32_t v = 0; v < nodes; ++v)
      builder.addNode(1000 + random.below(99000), 100 + random.below(49900));
    for (NodeId v = width; v < nodes; ++v) {
      int32_t layer = v / width;
      for (uint32_t k = 0, n = 1 + random.below(3); k < n; ++k) {
        int32_t lo = std::max(0, (layer - 2) * width), hi = layer * width - 1;
        builder.addEdge(lo + static_cast<NodeId>(random.below(hi - lo + 1)),
                        v);
      }
    }
    return *builder.build();
  }();
  PlaceOptions everyCandidate;
  everyCandidate.candidateWindow = 0;
  placeAgainst(state, graph, 4, everyCandidate, 3);
}
BENCHMARK(BM_PlaceDefaultWideWindow)->Unit(benchmark::kMillisecond);

void BM_PlaceDefault200(benchmark::State &state) {
  const Graph &graph = graph200();
  LearnedPolicy &policy = defaultPolicy();
  for (auto _ : state) {
    auto result = policy.place(graph, 4);
    benchmark::DoNotOptimize(result);
  }
  reportGraph(state, graph);
  reportRatio(state, environmentEpisodeSeconds());
}
BENCHMARK(BM_PlaceDefault200)->Unit(benchmark::kMillisecond);

/// What the default model's completions cost a greedy placement: the same
/// model without them (lookaheadVisits 0: no completion, no lookahead
/// prior) is the baseline, at D = 4 and D = 8.
void BM_PlaceDefault200Completions(benchmark::State &state) {
  PlaceOptions none;
  none.lookaheadVisits = 0;
  placeAgainst(state, graph200(), static_cast<int32_t>(state.range(0)), none,
               11);
}
BENCHMARK(BM_PlaceDefault200Completions)
    ->Arg(4)
    ->Arg(8)
    ->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
