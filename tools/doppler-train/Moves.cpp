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
//                  --moves-anneal-ms of annealing (--moves-estimate: the
//                  learned moves screened by the estimate).
// --moves bar:     issue 32's time bar: the policy's CPU time against the
//                  better heuristic's, its makespan and what its climb did.
// --moves agree:   the estimate against the simulator on every candidate
//                  move of the better heuristic's placement.
// --moves temperature: annealing for --moves-budgets runs from the better
//                  heuristic at the former fixed 2% starting temperature
//                  and at the automatic one (the default; Search.h).
// --devices pairs with the graphs one to one when it lists as many counts as
// there are graphs (the real-program files are made for one count each),
// else every graph is placed on every count.
//
//===----------------------------------------------------------------------===//

#include "Doppler/Placement/Learning/LearnedMoves.h"
#include "Doppler/Placement/Search.h"
#include "Doppler/Support/ParseNumber.h"
#include "Doppler/Support/Stopwatch.h"

#include "TrainTool.h"

#include "llvm/Support/CommandLine.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>

using namespace doppler::placement;
namespace cl = llvm::cl;

namespace doppler_train {

cl::OptionCategory movesCategory(
    "Doppler train options: learned improvement moves (--moves)");

namespace {

cl::opt<std::string> movesMode(
    "moves",
    cl::desc("train | analyse | compare | bar | agree | temperature: the "
             "learned improvement moves "
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
cl::opt<bool> movesEstimate(
    "moves-estimate",
    cl::desc("compare: the learned moves screened by the heads-and-tails "
             "estimate, confirmed by the simulator (LearnedMovesOptions::"
             "estimate); bar: the same"),
    cl::init(false), cl::cat(movesCategory));
cl::opt<std::string> movesBatch(
    "moves-batch",
    cl::desc("with the estimate: moves confirmed together (default 8)"),
    cl::value_desc("N"), cl::init("8"), cl::cat(movesCategory));
cl::opt<std::string> movesBatches(
    "moves-batches",
    cl::desc("with the estimate: batches per estimate (default 1)"),
    cl::value_desc("N"), cl::init("1"), cl::cat(movesCategory));
cl::opt<std::string> movesSingleTries(
    "moves-single-tries",
    cl::desc("with the estimate: single moves tried when a batch fails "
             "(default 4)"),
    cl::value_desc("N"), cl::init("4"), cl::cat(movesCategory));
cl::opt<std::string> movesRepeat(
    "moves-repeat",
    cl::desc("bar: timed repetitions, medians reported (default 5)"),
    cl::value_desc("N"), cl::init("5"), cl::cat(movesCategory));
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

/// --moves-budgets: a list of simulator run counts.
std::vector<int64_t> readBudgets() {
  std::vector<int64_t> budgets;
  for (const std::string &part : splitList(movesBudgets)) {
    std::optional<int64_t> value = doppler::parseInt64(part);
    if (!value || *value < 1)
      fail("--moves-budgets: '" + part + "' is not an integer >= 1");
    budgets.push_back(*value);
  }
  return budgets;
}

void setEstimateOptions(LearnedMovesOptions &options) {
  options.estimate = movesEstimate;
  options.batch = static_cast<int32_t>(readCount(movesBatch, 1));
  options.batchesPerRound = static_cast<int32_t>(readCount(movesBatches, 1));
  options.singleTries = static_cast<int32_t>(readCount(movesSingleTries, 0));
}

/// --moves bar: issue 32's time bar. Per pair, the median over
/// --moves-repeat runs of critical path's, join-aware's and the policy's
/// (placeWithLearnedMoves: both heuristics, then the moves, within the
/// policy's default budget of work, or --moves-budgets N runs) CPU time in
/// this process, the policy's makespan and what its climb did; then where
/// the policy's time went (LearnedMovesProfile), in units of the better
/// heuristic's time.
int barMoves(const Arguments &args, const std::vector<GraphPair> &pairs) {
  MoveModel model = MoveModel::embedded();
  const int64_t repeat = readCount(movesRepeat, 1);
  std::printf("| graph | D | nodes | better (ms) | moves (ms) | moves / better "
              "| time / better's | runs | accepted | batches kept/tried | "
              "estimated kept/tried | model kept/tried | estimates |\n"
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  std::vector<double> ratios, times;
  std::string phases =
      "\n| graph | D | critical path alone | join-aware alone | both (the "
      "policy's) | their runs | schedule read | heads and tails | ranking | "
      "confirming runs | rest | schedules read | work / (n + e) |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const GraphPair &p : pairs) {
    const Graph &graph = p.graph->graph;
    Simulator judge(graph, p.devices);
    const char *which = nullptr;
    const double better =
        judge.run(betterHeuristic(judge, &which));
    LearnedMovesOptions options;
    // The policy's default budget (runs and work), or --moves-budgets N
    // runs and no bound on work.
    options.maxEvaluations = defaultMoveEvaluations(graph, p.devices);
    options.seed = static_cast<uint64_t>(args.seed);
    setEstimateOptions(options);
    if (options.estimate)
      options.maxWork = defaultMoveWork(graph, p.devices);
    if (movesBudgets.getNumOccurrences() > 0) {
      options.maxEvaluations = readCount(movesBudgets, 0);
      options.maxWork = 0;
    }
    std::vector<double> cp, ja, moves;
    // Per repetition, each phase's share of the policy's steady-clock time.
    std::vector<std::array<double, 7>> shares;
    std::optional<LearnedMovesResult> result;
    for (int64_t r = 0; r < repeat; ++r) {
      double begin = threadCpuSeconds();
      std::vector<DeviceId> a = placeCriticalPath(graph, p.devices);
      cp.push_back(threadCpuSeconds() - begin);
      begin = threadCpuSeconds();
      std::vector<DeviceId> b = placeJoinAware(graph, p.devices);
      ja.push_back(threadCpuSeconds() - begin);
      std::string error;
      begin = threadCpuSeconds();
      Simulator own(graph, p.devices);
      result = placeWithLearnedMoves(own, {}, model, options, &error);
      moves.push_back(threadCpuSeconds() - begin);
      if (!result)
        fail(error);
      const LearnedMovesProfile &f = result->profile;
      const double total = std::max(result->seconds, 1e-12);
      const double known = f.heuristics + f.startRuns + f.keep +
                           f.estimateSetup + f.ranking + f.confirmRuns;
      shares.push_back({f.heuristics / total, f.startRuns / total,
                        f.keep / total, f.estimateSetup / total,
                        f.ranking / total, f.confirmRuns / total,
                        (total - known) / total});
    }
    const double heuristic = medianOf(*which == 'C' ? cp : ja);
    const double ratio = result->makespan / better;
    const double time = medianOf(moves) / heuristic;
    ratios.push_back(ratio);
    times.push_back(time);
    // In units of the better heuristic's own CPU time: the two heuristics
    // timed alone, then the policy's phases (each one's median share of
    // the policy's steady-clock time, times the policy's ratio).
    char cell[64];
    std::snprintf(cell, sizeof cell, " %.3f | %.3f |", medianOf(cp) / heuristic,
                  medianOf(ja) / heuristic);
    phases += "| " + p.graph->name + " | " + std::to_string(p.devices) + " |" +
              cell;
    for (size_t k = 0; k < 7; ++k) {
      std::vector<double> share;
      for (const auto &s : shares)
        share.push_back(s[k]);
      std::snprintf(cell, sizeof cell, " %.3f |", medianOf(share) * time);
      phases += cell;
    }
    std::snprintf(cell, sizeof cell, " %lld | %.2f |\n",
                  static_cast<long long>(result->profile.rounds),
                  static_cast<double>(result->work) /
                      (graph.numNodes() + graph.numEdges()));
    phases += cell;
    std::printf("| %s | %d | %d | %.2f %s (%.3f) | %.2f (%.3f) | %.4f | %.2f "
                "| %lld | %lld | %lld/%lld | %lld/%lld | %lld/%lld | %lld |\n",
                p.graph->name.c_str(), p.devices, graph.numNodes(), better,
                which, 1e3 * heuristic, result->makespan, 1e3 * medianOf(moves),
                ratio, time, static_cast<long long>(result->evaluations),
                static_cast<long long>(result->accepted),
                static_cast<long long>(result->batchesKept),
                static_cast<long long>(result->batchesTried),
                static_cast<long long>(result->estimatedKept),
                static_cast<long long>(result->estimatedTried),
                static_cast<long long>(result->modelKept),
                static_cast<long long>(result->modelTried),
                static_cast<long long>(result->estimates));
    std::fflush(stdout);
  }
  std::printf("%s", phases.c_str());
  double logSum = 0;
  for (double r : ratios)
    logSum += std::log(r);
  std::printf("\nmoves / better: geometric mean %.4f over %zu pairs; time / "
              "better heuristic's: median %.2fx, max %.2fx\n",
              std::exp(logSum / std::max<size_t>(1, ratios.size())),
              ratios.size(), medianOf(times),
              times.empty() ? 0.0 : *std::max_element(times.begin(), times.end()));
  return 0;
}

/// --moves temperature: annealing from the better heuristic for each of
/// --moves-budgets simulator runs, at the former fixed temperature (2% of
/// the makespan falling to 0.02%) and at the library's automatic one (the
/// default: a tenth of the typical single move's change, typicalMoveDelta,
/// measured within the budget, falling 100-fold).
int temperatureMoves(const Arguments &args, const std::vector<GraphPair> &pairs) {
  const std::vector<int64_t> budgets = readBudgets();
  std::printf("| graph | D | nodes | better | typical move | runs | 2%% start "
              "| automatic |\n|---|---|---|---|---|---|---|---|\n");
  for (const GraphPair &p : pairs) {
    Simulator judge(p.graph->graph, p.devices);
    const char *which = nullptr;
    std::vector<DeviceId> start =
        betterHeuristic(judge, &which);
    const double better = judge.run(start);
    const double typical =
        typicalMoveDelta(judge, start, static_cast<uint64_t>(args.seed));
    for (int64_t budget : budgets) {
      double ratios[2];
      for (int k = 0; k < 2; ++k) {
        SearchOptions options;
        options.seed = static_cast<uint64_t>(args.seed);
        options.maxEvaluations = budget;
        if (k == 0) {
          options.initialTemperature = 0.02;
          options.finalTemperature = 0.0002;
        }
        std::string error;
        std::optional<SearchResult> result =
            refinePlacement(judge, start, options, &error);
        if (!result)
          fail(error);
        ratios[k] = result->makespan / better;
      }
      std::printf("| %s | %d | %d | %.1f (%s) | %.5f | %lld | %.4f | %.4f |\n",
                  p.graph->name.c_str(), p.devices, p.graph->graph.numNodes(),
                  better, which, typical, static_cast<long long>(budget),
                  ratios[0], ratios[1]);
      std::fflush(stdout);
    }
  }
  return 0;
}

/// --moves agree: the estimate against the simulator on every candidate
/// move of the better heuristic's placement.
int agreeMoves(const std::vector<GraphPair> &pairs) {
  std::printf("| graph | D | nodes | candidates | estimated better | simulated "
              "better | both | exact | spearman | best estimated improves | "
              "its makespan / best single move's |\n"
              "|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const GraphPair &p : pairs) {
    Simulator judge(p.graph->graph, p.devices);
    const char *which = nullptr;
    std::vector<DeviceId> start =
        betterHeuristic(judge, &which);
    MoveEstimateAgreement a = checkMoveEstimates(judge, start);
    std::printf("| %s | %d | %d | %lld | %lld | %lld | %lld | %lld | %.3f | "
                "%s | %.4f |\n",
                p.graph->name.c_str(), p.devices, p.graph->graph.numNodes(),
                static_cast<long long>(a.candidates),
                static_cast<long long>(a.estimatedBetter),
                static_cast<long long>(a.simulatedBetter),
                static_cast<long long>(a.bothBetter),
                static_cast<long long>(a.exact), a.spearman,
                a.bestEstimatedImproves ? "yes" : "no",
                a.bestSimulated > 0 ? a.bestEstimated / a.bestSimulated : 1.0);
    std::fflush(stdout);
  }
  return 0;
}

int trainMoves(const Arguments &args, const std::vector<GraphPair> &pairs) {
  if (args.output.empty())
    fail("--moves train needs -o FILE");
  const int64_t rounds = readCount(movesRounds, 1);
  const int64_t perRound = readCount(movesPerRound, 1);
  std::vector<MoveExample> examples;
  std::string names;
  std::printf("| graph | D | nodes | examples | improving |\n|---|---|---|---|---|\n");
  for (size_t i = 0; i < pairs.size(); ++i) {
    const GraphPair &p = pairs[i];
    Simulator judge(p.graph->graph, p.devices);
    const char *which = nullptr;
    std::vector<DeviceId> start =
        betterHeuristic(judge, &which);
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

int analyseMoves(const Arguments &args, const std::vector<GraphPair> &pairs) {
  const double seconds = readCount(movesAnnealMs, 1) / 1000.0;
  std::printf(
      "| graph | D | nodes | better | annealed | gain | moved | on chain | "
      "near chain | chain moves only | other moves only | chain c/q/t/w "
      "before | chain c/q/t/w after | cross comm before, after | max / mean "
      "busy before, after |\n|---|---|---|---|---|---|---|---|---|---|---|"
      "---|---|---|---|\n");
  for (const GraphPair &p : pairs) {
    Simulator judge(p.graph->graph, p.devices);
    const char *which = nullptr;
    std::vector<DeviceId> start =
        betterHeuristic(judge, &which);
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

int compareMoves(const Arguments &args, const std::vector<GraphPair> &pairs) {
  MoveModel model = MoveModel::embedded();
  if (!movesModel.empty()) {
    std::string error;
    std::optional<MoveModel> read = readMoveModel(movesModel, &error);
    if (!read)
      fail(error);
    model = *read;
  }
  const std::vector<int64_t> budgets = readBudgets();
  std::optional<int64_t> longMs = doppler::parseInt64(movesAnnealMs);
  if (!longMs || *longMs < 0)
    fail("--moves-anneal-ms: '" + movesAnnealMs.getValue() +
         "' is not an integer >= 0");
  std::printf("| graph | D | nodes | better | runs | learned moves (s) | "
              "random order | annealing | annealing, learned's time | long "
              "annealing | learned / better | captured |\n"
              "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const GraphPair &p : pairs) {
    Simulator judge(p.graph->graph, p.devices);
    const char *which = nullptr;
    std::vector<DeviceId> start =
        betterHeuristic(judge, &which);
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
      setEstimateOptions(options);
      std::string error;
      std::optional<LearnedMovesResult> learned =
          improveWithLearnedMoves(judge, start, model, options, &error);
      options.randomOrder = true;
      options.explore = 0;
      options.estimate = false;
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

std::vector<GraphPair>
graphPairs(const std::vector<TrainingGraph> &graphs,
           const std::string &devicesText) {
  std::vector<GraphPair> pairs;
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

std::vector<DeviceId> betterHeuristic(Simulator &judge, const char **name,
                                      double *makespan) {
  std::string_view policy;
  std::string error;
  std::optional<std::vector<DeviceId>> placed =
      placeBetterHeuristic(judge, {}, &policy, makespan, &error);
  if (!placed)
    fail(error);
  *name = policy == "join-aware" ? "JA" : "CP";
  return std::move(*placed);
}

double threadCpuSeconds() {
  timespec now;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return now.tv_sec + 1e-9 * now.tv_nsec;
}

double medianOf(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0 : values[values.size() / 2];
}

bool movesRequested() { return movesMode.getNumOccurrences() > 0; }

int moves(const Arguments &args) {
  std::vector<TrainingGraph> graphs = loadGraphs(args);
  if (graphs.empty())
    fail("--moves needs graph files");
  std::vector<GraphPair> pairs =
      graphPairs(graphs, args.devices.empty() ? "4" : args.devices);
  if (movesMode == "train")
    return trainMoves(args, pairs);
  if (movesMode == "analyse")
    return analyseMoves(args, pairs);
  if (movesMode == "compare")
    return compareMoves(args, pairs);
  if (movesMode == "bar")
    return barMoves(args, pairs);
  if (movesMode == "agree")
    return agreeMoves(pairs);
  if (movesMode == "temperature")
    return temperatureMoves(args, pairs);
  fail("--moves must be train, analyse, compare, bar, agree or temperature, "
       "not '" +
       movesMode.getValue() + "'");
}

} // namespace doppler_train
