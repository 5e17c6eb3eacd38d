//===- Moves.cpp - doppler-train --moves: the learned improvement moves ---===//
//
// --moves train:   collects move examples on the GRAPH files (a hill climb
//                  from the better heuristic, the simulator's verdict on a
//                  seeded sample of candidate moves per step) and fits the
//                  move model (LearnedMoves.h), written to -o.
// --moves analyse: where annealing's gain comes from: the better heuristic
//                  against --moves-anneal-ms of annealing from it.
// --moves compare: the learned moves against the same candidates in a
//                  random order and against annealing, each for the same
//                  number of simulator runs (--moves-budgets), and against
//                  --moves-anneal-ms of annealing.
// --devices pairs with the graphs one to one when it lists as many counts as
// there are graphs (the real-program files are made for one count each),
// else every graph is placed on every count.
//
//===----------------------------------------------------------------------===//

#include "Doppler/Placement/Learning/LearnedMoves.h"
#include "Doppler/Placement/Search.h"
#include "Doppler/Support/ParseNumber.h"

#include "TrainTool.h"

#include "llvm/Support/CommandLine.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

using namespace doppler::placement;
namespace cl = llvm::cl;

namespace doppler_train {

cl::OptionCategory movesCategory(
    "Doppler train options: learned improvement moves (--moves)");

namespace {

cl::opt<std::string> movesMode(
    "moves",
    cl::desc("train | analyse | compare: the learned improvement moves "
             "(see the file comment of tools/doppler-train/Moves.cpp)"),
    cl::value_desc("mode"), cl::cat(movesCategory));
cl::opt<std::string> movesModel(
    "moves-model",
    cl::desc("compare: the move model (default: the embedded one)"),
    cl::value_desc("file"), cl::cat(movesCategory));
cl::opt<std::string> movesBudgets(
    "moves-budgets",
    cl::desc("compare: simulator runs per method (default 32,128,512,2048)"),
    cl::value_desc("list"), cl::init("32,128,512,2048"),
    cl::cat(movesCategory));
cl::opt<std::string> movesAnnealMs(
    "moves-anneal-ms",
    cl::desc("analyse, compare: milliseconds of the long annealing (default "
             "60000; 0 in compare: none)"),
    cl::value_desc("T"), cl::init("60000"), cl::cat(movesCategory));
cl::opt<double> movesExplore(
    "moves-explore",
    cl::desc("compare: share of the learned moves' tries drawn at random "
             "(default 0)"),
    cl::value_desc("p"), cl::init(0.0), cl::cat(movesCategory));
cl::opt<std::string> movesRounds(
    "moves-rounds",
    cl::desc("train: hill-climb steps per graph (default 40)"),
    cl::value_desc("N"), cl::init("40"), cl::cat(movesCategory));
cl::opt<std::string> movesPerRound(
    "moves-per-round",
    cl::desc("train: candidates judged per step (default 64)"),
    cl::value_desc("N"), cl::init("64"), cl::cat(movesCategory));

int64_t readCount(const cl::opt<std::string> &option, int64_t lo) {
  std::optional<int64_t> value = doppler::parseInt64(option);
  if (!value || *value < lo)
    fail("--" + option.ArgStr.str() + ": '" + option.getValue() +
         "' is not an integer >= " + std::to_string(lo));
  return *value;
}

struct Pair {
  const TrainingGraph *graph;
  int32_t devices;
};

std::vector<Pair> pairsOf(const std::vector<TrainingGraph> &graphs,
                          const std::string &devicesText) {
  std::vector<Pair> pairs;
  const std::vector<std::string> counts = splitList(devicesText);
  if (counts.size() == graphs.size() && graphs.size() > 1) {
    for (size_t i = 0; i < graphs.size(); ++i)
      for (int32_t d : parseDevices(counts[i]))
        pairs.push_back({&graphs[i], d});
    return pairs;
  }
  for (const TrainingGraph &g : graphs)
    for (int32_t d : parseDevices(devicesText))
      pairs.push_back({&g, d});
  return pairs;
}

/// The better of critical path and join-aware (critical path on a tie).
std::vector<DeviceId> betterHeuristic(Simulator &judge, const Graph &graph,
                                      int32_t devices, const char **name) {
  std::vector<DeviceId> cp = placeCriticalPath(graph, devices);
  std::vector<DeviceId> ja = placeJoinAware(graph, devices);
  const bool joinBetter = judge.run(ja) < judge.run(cp);
  *name = joinBetter ? "JA" : "CP";
  return joinBetter ? ja : cp;
}

SearchResult anneal(Simulator &judge, const std::vector<DeviceId> &start,
                    uint64_t seed, double seconds, int64_t evaluations) {
  SearchOptions options;
  options.seed = seed;
  options.timeBudgetSeconds = seconds;
  options.maxEvaluations = evaluations;
  std::string error;
  std::optional<SearchResult> result =
      refinePlacement(judge, start, options, &error);
  if (!result)
    fail(error);
  return *result;
}

int trainMoves(const Arguments &args, const std::vector<Pair> &pairs) {
  if (args.output.empty())
    fail("--moves train needs -o FILE");
  const int64_t rounds = readCount(movesRounds, 1);
  const int64_t perRound = readCount(movesPerRound, 1);
  std::vector<MoveExample> examples;
  std::string names;
  std::printf("| graph | D | nodes | examples | improving |\n|---|---|---|---|---|\n");
  for (size_t i = 0; i < pairs.size(); ++i) {
    const Pair &p = pairs[i];
    Simulator judge(p.graph->graph, p.devices);
    const char *which = nullptr;
    std::vector<DeviceId> start =
        betterHeuristic(judge, p.graph->graph, p.devices, &which);
    const size_t before = examples.size();
    collectMoveExamples(judge, start, static_cast<int32_t>(rounds),
                        static_cast<int32_t>(perRound),
                        static_cast<uint64_t>(args.seed) + i, examples);
    size_t improving = 0;
    for (size_t k = before; k < examples.size(); ++k)
      improving += examples[k].improves;
    std::printf("| %s | %d | %d | %zu | %zu |\n", p.graph->name.c_str(),
                p.devices, p.graph->graph.numNodes(), examples.size() - before,
                improving);
    std::fflush(stdout);
    names += (i ? ", " : "") + p.graph->name + " D=" +
             std::to_string(p.devices);
  }
  MoveModel model = fitMoveModel(examples);
  std::printf("\nweights (standardised features):");
  for (int i = 0; i < kMoveFeatureCount; ++i)
    std::printf(" %s %.3f", kMoveFeatureNames[i], model.weight[i]);
  std::printf(", bias %.3f\n", model.bias);
  std::string error;
  std::string comment = "trained by doppler-train --moves train (seed " +
                        std::to_string(args.seed) + ", " +
                        std::to_string(rounds) + " rounds of " +
                        std::to_string(perRound) + " candidates) on " +
                        std::to_string(examples.size()) + " examples of:\n" +
                        names;
  if (!writeMoveModel(model, args.output, comment, &error))
    fail(error);
  std::printf("wrote %s\n", args.output.c_str());
  return 0;
}

int analyseMoves(const Arguments &args, const std::vector<Pair> &pairs) {
  const double seconds = readCount(movesAnnealMs, 1) / 1000.0;
  std::printf(
      "| graph | D | nodes | better | annealed | gain | moved | on chain | "
      "near chain | chain moves only | other moves only | chain c/q/t/w "
      "before | chain c/q/t/w after | cross comm before, after | max / mean "
      "busy before, after |\n|---|---|---|---|---|---|---|---|---|---|---|"
      "---|---|---|---|\n");
  for (const Pair &p : pairs) {
    Simulator judge(p.graph->graph, p.devices);
    const char *which = nullptr;
    std::vector<DeviceId> start =
        betterHeuristic(judge, p.graph->graph, p.devices, &which);
    SearchResult annealed =
        anneal(judge, start, static_cast<uint64_t>(args.seed), seconds, 0);
    PlacementGainAnalysis a =
        analysePlacementGain(judge, start, annealed.assignment);
    auto ctw = [](const PlacementGainAnalysis::Side &s) {
      char text[96];
      std::snprintf(text, sizeof text, "%.0f/%.0f/%.0f/%.0f (%d nodes)",
                    s.chainCompute, s.chainQueued, s.chainTransfer,
                    s.chainWait, s.chainNodes);
      return std::string(text);
    };
    std::printf("| %s | %d | %d | %.1f (%s) | %.1f | %.1f%% | %d | %d | %d | "
                "%.3f | %.3f | %s | %s | %.0f, %.0f | %.3f, %.3f |\n",
                p.graph->name.c_str(), p.devices, a.nodes, a.start.makespan,
                which, a.end.makespan,
                100 * (1 - a.end.makespan / a.start.makespan), a.moved,
                a.movedOnChain, a.movedNearChain,
                a.chainMovesOnly / a.start.makespan,
                a.otherMovesOnly / a.start.makespan, ctw(a.start).c_str(),
                ctw(a.end).c_str(), a.start.crossCommunication,
                a.end.crossCommunication, a.start.maxBusy / a.start.meanBusy,
                a.end.maxBusy / a.end.meanBusy);
    std::fflush(stdout);
  }
  return 0;
}

int compareMoves(const Arguments &args, const std::vector<Pair> &pairs) {
  MoveModel model = MoveModel::embedded();
  if (!movesModel.empty()) {
    std::string error;
    std::optional<MoveModel> read = readMoveModel(movesModel, &error);
    if (!read)
      fail(error);
    model = *read;
  }
  std::vector<int64_t> budgets;
  for (const std::string &part : splitList(movesBudgets)) {
    std::optional<int64_t> value = doppler::parseInt64(part);
    if (!value || *value < 1)
      fail("--moves-budgets: '" + part + "' is not an integer >= 1");
    budgets.push_back(*value);
  }
  std::optional<int64_t> longMs = doppler::parseInt64(movesAnnealMs);
  if (!longMs || *longMs < 0)
    fail("--moves-anneal-ms: '" + movesAnnealMs.getValue() +
         "' is not an integer >= 0");
  std::printf("| graph | D | nodes | better | runs | learned moves (s) | "
              "random order | annealing | annealing, learned's time | long "
              "annealing | learned / better | captured |\n"
              "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const Pair &p : pairs) {
    Simulator judge(p.graph->graph, p.devices);
    const char *which = nullptr;
    std::vector<DeviceId> start =
        betterHeuristic(judge, p.graph->graph, p.devices, &which);
    const double better = judge.run(start);
    const double longAnnealed =
        *longMs > 0 ? anneal(judge, start, static_cast<uint64_t>(args.seed),
                             *longMs / 1000.0, 0)
                          .makespan
                    : NAN;
    for (int64_t budget : budgets) {
      LearnedMovesOptions options;
      options.maxEvaluations = budget;
      options.seed = static_cast<uint64_t>(args.seed);
      options.explore = movesExplore;
      std::string error;
      std::optional<LearnedMovesResult> learned =
          improveWithLearnedMoves(judge, start, model, options, &error);
      options.randomOrder = true;
      options.explore = 0;
      std::optional<LearnedMovesResult> shuffled =
          improveWithLearnedMoves(judge, start, model, options, &error);
      if (!learned || !shuffled)
        fail(error);
      SearchResult annealed =
          anneal(judge, start, static_cast<uint64_t>(args.seed), 0, budget);
      SearchResult sameTime =
          anneal(judge, start, static_cast<uint64_t>(args.seed),
                 std::max(1e-4, learned->seconds), 0);
      const double gain = (better - longAnnealed) / better;
      char captured[48] = "-";
      if (gain >= 0.02)
        std::snprintf(captured, sizeof captured, "%.2f",
                      (better - learned->makespan) / (better - longAnnealed));
      else if (std::isfinite(gain))
        std::snprintf(captured, sizeof captured, "- (gain %.1f%%)",
                      100 * gain);
      std::printf("| %s | %d | %d | %.1f (%s) | %lld | %.1f (%.3f) | %.1f | "
                  "%.1f | %.1f | %.1f | %.3f | %s |\n",
                  p.graph->name.c_str(), p.devices,
                  p.graph->graph.numNodes(), better, which,
                  static_cast<long long>(budget), learned->makespan,
                  learned->seconds, shuffled->makespan, annealed.makespan,
                  sameTime.makespan, longAnnealed, learned->makespan / better, captured);
      std::fflush(stdout);
    }
  }
  return 0;
}

} // namespace

bool movesRequested() { return movesMode.getNumOccurrences() > 0; }

int moves(const Arguments &args) {
  std::vector<TrainingGraph> graphs = loadGraphs(args);
  if (graphs.empty())
    fail("--moves needs graph files");
  std::vector<Pair> pairs =
      pairsOf(graphs, args.devices.empty() ? "4" : args.devices);
  if (movesMode == "train")
    return trainMoves(args, pairs);
  if (movesMode == "analyse")
    return analyseMoves(args, pairs);
  if (movesMode == "compare")
    return compareMoves(args, pairs);
  fail("--moves must be train, analyse or compare, not '" +
       movesMode.getValue() + "'");
}

} // namespace doppler_train
