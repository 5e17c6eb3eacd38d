//===- Construct.cpp - doppler-train --construct: annealing distilled -----===//
//
// The experiment of LearnedConstruct.h (issue 32; docs/Method.md section
// 12, "Distilling annealing into a construction").
//
// --construct labels: per (GRAPH, device count) pair, annealing from the
//                     better heuristic for --construct-runs simulator runs
//                     (the automatic starting temperature, --seed): the
//                     best placement, written to --construct-dir as
//                     NAME.dD.txt (one device per line, '#' comments).
// --construct train:  behaviour cloning on those placements (roll-in along
//                     them), then --construct-dagger rounds rolling in with
//                     the learned rule (labels renamed by the best device
//                     permutation); the model of the round with the best
//                     geometric-mean makespan on the training pairs is
//                     written to -o.
// --construct eval:   per pair, CPU time and makespan of the better
//                     heuristic, the construction (--construct-model), the
//                     construction floored by critical path, and that
//                     followed by the learned moves' climb at its default
//                     budget of work; medians of --construct-repeat.
//
//===----------------------------------------------------------------------===//

#include "Doppler/Placement/Learning/LearnedConstruct.h"
#include "Doppler/Placement/Learning/LearnedMoves.h"
#include "Doppler/Placement/Search.h"
#include "Doppler/Support/ParseNumber.h"

#include "TrainTool.h"

#include "llvm/Support/CommandLine.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>

using namespace doppler::placement;
namespace cl = llvm::cl;

namespace doppler_train {

cl::OptionCategory constructCategory(
    "Doppler train options: annealing distilled into a construction "
    "(--construct)");

namespace {

cl::opt<std::string> constructMode(
    "construct",
    cl::desc("labels | train | eval (tools/doppler-train/Construct.cpp; its "
             "options are listed by --help-hidden)"),
    cl::value_desc("mode"), cl::cat(constructCategory));
cl::opt<std::string> constructDir(
    "construct-dir", cl::Hidden,
    cl::desc("labels, train: the annealed placements' folder"),
    cl::value_desc("dir"), cl::init("build/construct-labels"),
    cl::cat(constructCategory));
cl::opt<int64_t> constructRuns(
    "construct-runs", cl::Hidden,
    cl::desc("labels: annealing's simulator runs per pair (default 20000)"),
    cl::init(20000), cl::cat(constructCategory));
cl::opt<int64_t> constructDagger(
    "construct-dagger", cl::Hidden,
    cl::desc("train: rounds rolling in with the learned rule (default 3)"),
    cl::init(3), cl::cat(constructCategory));
cl::opt<double> constructFollow(
    "construct-follow", cl::Hidden,
    cl::desc("train: in the DAgger rounds, the share of steps that follow "
             "the teacher (default 0)"),
    cl::init(0.0), cl::cat(constructCategory));
cl::opt<bool> constructProducers(
    "construct-producers", cl::Hidden,
    cl::desc("train: label a node the teacher puts with a producer by that "
             "producer's device (ConstructRollIn::followProducers)"),
    cl::init(false), cl::cat(constructCategory));
cl::opt<double> constructWindow(
    "construct-window", cl::Hidden,
    cl::desc("train: PLC chooses among the devices within this est_gap of "
             "the earliest (ConstructModel::window; default 0: all)"),
    cl::init(0.0), cl::cat(constructCategory));
cl::opt<bool> constructCompletions(
    "construct-completions", cl::Hidden,
    cl::desc("train: label the DAgger rounds by critical path's completions "
             "of each device, judged by the simulator "
             "(ConstructRollIn::judge), not by the teacher"),
    cl::init(false), cl::cat(constructCategory));
cl::opt<int64_t> constructIterations(
    "construct-iterations", cl::Hidden,
    cl::desc("train: Newton steps at most (default 30)"),
    cl::init(30), cl::cat(constructCategory));
cl::opt<std::string> constructModel(
    "construct-model", cl::Hidden,
    cl::desc("eval: the model (from --construct train)"),
    cl::value_desc("file"), cl::cat(constructCategory));
cl::opt<int64_t> constructRepeat(
    "construct-repeat", cl::Hidden,
    cl::desc("eval: timed repetitions (default 3)"),
    cl::init(3), cl::cat(constructCategory));

std::string labelPath(const GraphPair &p) {
  std::string base = p.graph->name;
  const size_t slash = base.find_last_of('/');
  if (slash != std::string::npos)
    base = base.substr(slash + 1);
  return constructDir + "/" + base + ".d" + std::to_string(p.devices) + ".txt";
}

double constructGeomean(const std::vector<double> &values) {
  double sum = 0;
  for (double v : values)
    sum += std::log(v);
  return values.empty() ? 1 : std::exp(sum / values.size());
}

int constructLabels(const Arguments &args,
                    const std::vector<GraphPair> &pairs) {
  std::printf("| graph | D | nodes | better | annealed | runs | seconds |\n"
              "|---|---|---|---|---|---|---|\n");
  for (const GraphPair &p : pairs) {
    Simulator judge(p.graph->graph, p.devices);
    double better = 0;
    const char *which = nullptr;
    std::vector<DeviceId> start = betterHeuristic(judge, &which, &better);
    SearchOptions options;
    options.seed = static_cast<uint64_t>(args.seed);
    options.maxEvaluations = constructRuns;
    std::string error;
    std::optional<SearchResult> annealed =
        refinePlacement(judge, start, options, &error);
    if (!annealed)
      fail(error);
    std::ofstream file(labelPath(p));
    if (!file)
      fail("cannot write '" + labelPath(p) + "' (does --construct-dir exist?)");
    file << "# annealed from the better heuristic (" << which << ", "
         << better << ") for " << constructRuns.getValue() << " runs, seed "
         << args.seed << ": " << annealed->makespan << "\n";
    for (DeviceId d : annealed->assignment)
      file << d << "\n";
    std::printf("| %s | %d | %d | %.2f (%s) | %.2f (%.4f) | %lld | %.1f |\n",
                p.graph->name.c_str(), p.devices, p.graph->graph.numNodes(),
                better, which, annealed->makespan, annealed->makespan / better,
                static_cast<long long>(constructRuns.getValue()),
                annealed->seconds);
    std::fflush(stdout);
  }
  return 0;
}

std::vector<DeviceId> readLabels(const GraphPair &p) {
  std::ifstream file(labelPath(p));
  if (!file)
    fail("cannot read '" + labelPath(p) + "' (run --construct labels first)");
  std::vector<DeviceId> devices;
  std::string line;
  while (std::getline(file, line)) {
    if (line.empty() || line[0] == '#')
      continue;
    std::optional<int64_t> d = doppler::parseInt64(line);
    if (!d || *d < 0 || *d >= p.devices)
      fail("'" + labelPath(p) + "': '" + line + "' is not a device");
    devices.push_back(static_cast<DeviceId>(*d));
  }
  if (static_cast<int32_t>(devices.size()) != p.graph->graph.numNodes())
    fail("'" + labelPath(p) + "' has " + std::to_string(devices.size()) +
         " devices for " + std::to_string(p.graph->graph.numNodes()) +
         " nodes");
  return devices;
}

/// Geometric mean over the pairs of the construction's makespan over the
/// better heuristic's, and prints each.
double trainingRatio(const std::vector<GraphPair> &pairs,
                     const ConstructModel &model, bool print) {
  std::vector<double> ratios;
  for (const GraphPair &p : pairs) {
    Simulator judge(p.graph->graph, p.devices);
    double better = 0;
    const char *which = nullptr;
    betterHeuristic(judge, &which, &better);
    const double made =
        judge.run(placeLearnedConstruct(p.graph->graph, p.devices, model));
    ratios.push_back(made / better);
    if (print)
      std::printf("  %s D=%d: %.4f\n", p.graph->name.c_str(), p.devices,
                  made / better);
  }
  return constructGeomean(ratios);
}

/// The share of `examples` whose label is critical path's (feature is_cp)
/// or join-aware's (is_ja) device.
double ruleAgreement(const std::vector<ConstructExample> &examples,
                     int feature) {
  ConstructModel rule;
  rule.weight[feature] = 1;
  return constructAgreement(rule, examples);
}

ConstructModel constructFit(const std::vector<ConstructExample> &examples,
                            const char *what) {
  double loss = 0;
  ConstructModel model = fitConstructModel(
      examples, static_cast<int32_t>(constructIterations), 1e-3, &loss);
  model.window = constructWindow;
  std::printf("%s: %zu examples, loss %.4f, agreement %.3f (critical path's "
              "device %.3f, join-aware's %.3f)\n",
              what, examples.size(), loss, constructAgreement(model, examples),
              ruleAgreement(examples, 2), ruleAgreement(examples, 3));
  return model;
}

int constructTrain(const Arguments &args,
                   const std::vector<GraphPair> &pairs) {
  if (args.output.empty())
    fail("--construct train needs -o FILE");
  std::vector<std::vector<DeviceId>> teachers;
  std::vector<ConstructExample> examples;
  ConstructRollIn rollIn;
  rollIn.followProducers = constructProducers;
  rollIn.window = constructWindow;
  for (const GraphPair &p : pairs) {
    teachers.push_back(readLabels(p));
    collectConstructExamples(p.graph->graph, p.devices, teachers.back(),
                             nullptr, rollIn, examples);
  }
  ConstructModel model = constructFit(examples, "behaviour cloning");
  ConstructModel best = model;
  double bestRatio = trainingRatio(pairs, model, true);
  std::printf("behaviour cloning: construction / better %.4f\n", bestRatio);
  int64_t bestRound = 0;
  rollIn.follow = constructFollow;
  for (int64_t round = 1; round <= constructDagger; ++round) {
    for (size_t i = 0; i < pairs.size(); ++i) {
      rollIn.seed =
          static_cast<uint64_t>(args.seed) * 1000003 + round * 101 + i;
      Simulator judge(pairs[i].graph->graph, pairs[i].devices);
      rollIn.judge = constructCompletions ? &judge : nullptr;
      collectConstructExamples(pairs[i].graph->graph, pairs[i].devices,
                               teachers[i], &model, rollIn, examples);
      rollIn.judge = nullptr;
    }
    model = constructFit(examples, "DAgger");
    const double ratio = trainingRatio(pairs, model, true);
    std::printf("DAgger round %lld: construction / better %.4f\n",
                static_cast<long long>(round), ratio);
    if (ratio < bestRatio) {
      bestRatio = ratio;
      best = model;
      bestRound = round;
    }
  }
  std::printf("weights (standardised):");
  for (int i = 0; i < kConstructFeatureCount; ++i)
    std::printf(" %s %.3f", kConstructFeatureNames[i], best.weight[i]);
  std::printf("\nkept round %lld (%.4f)\n", static_cast<long long>(bestRound),
              bestRatio);
  std::string error;
  std::ostringstream comment;
  comment << "trained by doppler-train --construct train (" << pairs.size()
          << " pairs, labels " << constructDir.getValue() << ", DAgger round "
          << bestRound << " of " << constructDagger.getValue() << ", follow "
          << constructFollow.getValue() << ", producers "
          << constructProducers.getValue() << ", completions "
          << constructCompletions.getValue() << ", window "
          << constructWindow.getValue() << ", seed " << args.seed << ")";
  if (!writeConstructModel(best, args.output, comment.str(), &error))
    fail(error);
  std::printf("wrote %s\n", args.output.c_str());
  return 0;
}

/// One eval variant's outcome over the repetitions.
struct Timed {
  std::vector<double> seconds;
  double makespan = 0;
};

int constructEval(const Arguments &args,
                  const std::vector<GraphPair> &pairs) {
  if (constructModel.empty())
    fail("--construct eval needs --construct-model FILE");
  std::string error;
  std::optional<ConstructModel> model =
      readConstructModel(constructModel, &error);
  if (!model)
    fail(error);
  const MoveModel &moves = MoveModel::embedded();
  std::printf("| graph | D | nodes | better (CPU ms) | construct / better | "
              "time | floored by CP / better | time | + climb / better | time "
              "| learned-moves / better | time |\n"
              "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  std::vector<double> r[4], t[4];
  for (const GraphPair &p : pairs) {
    const Graph &graph = p.graph->graph;
    Simulator judge(graph, p.devices);
    double better = 0;
    const char *which = nullptr;
    betterHeuristic(judge, &which, &better);
    std::vector<double> heuristic;
    Timed v[4];
    for (int64_t k = 0; k < constructRepeat; ++k) {
      double begin = threadCpuSeconds();
      if (*which == 'C')
        placeCriticalPath(graph, p.devices);
      else
        placeJoinAware(graph, p.devices);
      heuristic.push_back(threadCpuSeconds() - begin);
      // The construction and its run.
      begin = threadCpuSeconds();
      Simulator own(graph, p.devices);
      std::vector<DeviceId> made =
          placeLearnedConstruct(graph, p.devices, *model);
      v[0].makespan = own.run(made);
      v[0].seconds.push_back(threadCpuSeconds() - begin);
      // Floored by critical path (one heuristic, one more run).
      std::vector<DeviceId> cp = placeCriticalPath(graph, p.devices);
      const double cpMakespan = own.run(cp);
      if (cpMakespan < v[0].makespan)
        made.swap(cp);
      v[1].makespan = std::min(cpMakespan, v[0].makespan);
      v[1].seconds.push_back(threadCpuSeconds() - begin);
      // Then the learned moves' climb at the policy's default work budget.
      LearnedMovesOptions options;
      options.maxEvaluations = defaultMoveEvaluations(graph, p.devices);
      options.seed = static_cast<uint64_t>(args.seed);
      options.estimate = true;
      options.maxWork = defaultMoveWork(graph, p.devices);
      std::optional<LearnedMovesResult> climbed =
          improveWithLearnedMoves(own, made, moves, options, &error);
      if (!climbed)
        fail(error);
      v[2].makespan = climbed->makespan;
      v[2].seconds.push_back(threadCpuSeconds() - begin);
      // The learned-moves policy as it is (both heuristics, the climb).
      begin = threadCpuSeconds();
      Simulator policy(graph, p.devices);
      std::optional<LearnedMovesResult> plain =
          placeWithLearnedMoves(policy, {}, moves, options, &error);
      if (!plain)
        fail(error);
      v[3].makespan = plain->makespan;
      v[3].seconds.push_back(threadCpuSeconds() - begin);
    }
    const double h = medianOf(heuristic);
    std::printf("| %s | %d | %d | %.2f %s (%.3f) |", p.graph->name.c_str(),
                p.devices, graph.numNodes(), better, which, 1e3 * h);
    for (int i = 0; i < 4; ++i) {
      r[i].push_back(v[i].makespan / better);
      t[i].push_back(medianOf(v[i].seconds) / h);
      std::printf(" %.4f (%.2f) | %.2f |", r[i].back(), v[i].makespan,
                  t[i].back());
    }
    std::printf("\n");
    std::fflush(stdout);
  }
  const char *names[4] = {"construct", "floored by CP", "+ climb",
                          "learned-moves"};
  for (int i = 0; i < 4; ++i) {
    int above = 0;
    for (double x : r[i])
      above += x > 1 + 1e-9;
    std::printf("%s: geometric mean %.4f, above the better heuristic on %d of "
                "%zu, time / better's median %.2fx, max %.2fx\n",
                names[i], constructGeomean(r[i]), above, r[i].size(),
                medianOf(t[i]),
                *std::max_element(t[i].begin(), t[i].end()));
  }
  return 0;
}

} // namespace

bool constructRequested() { return constructMode.getNumOccurrences() > 0; }

namespace {
void checkConstructOptions() {
  if (constructRuns < 1)
    fail("--construct-runs must be >= 1");
  if (constructDagger < 0)
    fail("--construct-dagger must be >= 0");
  if (constructRepeat < 1)
    fail("--construct-repeat must be >= 1");
  if (constructIterations < 1)
    fail("--construct-iterations must be >= 1");
  if (!(constructFollow >= 0 && constructFollow <= 1))
    fail("--construct-follow must be in [0, 1]");
  if (!(constructWindow >= 0))
    fail("--construct-window must be >= 0");
}
} // namespace

int construct(const Arguments &args) {
  checkConstructOptions();
  std::vector<TrainingGraph> graphs = loadGraphs(args);
  if (graphs.empty())
    fail("--construct needs graph files");
  std::vector<GraphPair> pairs =
      graphPairs(graphs, args.devices.empty() ? "4" : args.devices);
  if (constructMode == "labels")
    return constructLabels(args, pairs);
  if (constructMode == "train")
    return constructTrain(args, pairs);
  if (constructMode == "eval")
    return constructEval(args, pairs);
  fail("--construct must be labels, train or eval, not '" +
       constructMode.getValue() + "'");
}

} // namespace doppler_train
