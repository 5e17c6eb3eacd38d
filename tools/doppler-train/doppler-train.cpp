//===- doppler-train.cpp - Train and compare learned placement policies ---===//
//
// Trains the dual policy (SEL + PLC) on graph files and/or generated graphs,
// in the stages of METHOD section 6, and compares a model with the
// critical-path heuristic. See --help. The real-rl stage measures each
// episode's placement on the runtime (DopplerRuntimeOracle's
// RuntimeCostOracle). A thin layer: options (llvm::cl), calls, exit codes.
//
// Built with LLVM's flags (no exceptions): everything it calls from the
// learning library is noexcept and reports errors as strings.
//
//===----------------------------------------------------------------------===//

#include "Doppler/Support/Limits.h"
#include "Doppler/Analysis/GraphLoader.h"
#include "Doppler/Placement/AssignmentFile.h"
#include "Doppler/Placement/Graph.h"
#include "Doppler/Placement/Heuristics.h"
#include "Doppler/Placement/Learning/Baselines.h"
#include "Doppler/Placement/Learning/DualPolicy.h"
#include "Doppler/Placement/Learning/GraphGenerator.h"
#include "Doppler/Placement/Learning/Trainer.h"
#include "Doppler/Placement/MemoryFit.h"
#include "Doppler/Placement/Simulator.h"
#include "Doppler/RuntimeOracle/RuntimeCostOracle.h"
#include "Doppler/Support/ParseNumber.h"

#include "TrainTool.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

using namespace doppler::placement;
using namespace doppler_train;
namespace cl = llvm::cl;

namespace doppler_train {

[[noreturn]] void fail(const std::string &message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  std::exit(1);
}
std::vector<std::string> splitList(const std::string &text) {
  std::vector<std::string> parts;
  size_t begin = 0;
  while (true) {
    size_t comma = text.find(',', begin);
    parts.push_back(text.substr(begin, comma - begin));
    if (comma == std::string::npos)
      break;
    begin = comma + 1;
  }
  return parts;
}
std::vector<int32_t> parseDevices(const std::string &text) {
  std::vector<int32_t> devices;
  for (const std::string &part : splitList(text)) {
    size_t dash = part.find('-');
    std::optional<int64_t> lo, hi;
    if (dash != std::string::npos && dash > 0) {
      lo = doppler::parseInt64(part.substr(0, dash));
      hi = doppler::parseInt64(part.substr(dash + 1));
      if (!lo || !hi || *lo > *hi)
        fail("--devices: '" + part + "' is not a range like 2-8");
    } else if (!(lo = doppler::parseInt64(part))) {
      fail("--devices: '" + part + "' is not a device count");
    } else {
      hi = lo;
    }
    if (*lo < 1 || *hi > doppler::kMaxDevices)
      fail("--devices: counts must be in [1, " +
           std::to_string(doppler::kMaxDevices) + "], got '" + part + "'");
    for (int64_t d = *lo; d <= *hi; ++d)
      if (std::find(devices.begin(), devices.end(), d) == devices.end())
        devices.push_back(static_cast<int32_t>(d));
  }
  return devices;
}
doppler::GraphLoadOptions graphLoadOptions(const Arguments &args) {
  doppler::GraphLoadOptions load;
  load.function = args.function;
  load.system = args.system;
  return load;
}
bool isMLIRFile(const std::string &path) {
  return path.size() > 5 && path.compare(path.size() - 5, 5, ".mlir") == 0;
}
/// The GRAPH files, then the generated graphs. `files`, when given,
/// receives per graph the file it came from ("" for generated ones).
std::vector<TrainingGraph>
loadGraphs(const Arguments &args, std::vector<std::string> *files) {
  std::vector<TrainingGraph> graphs;
  for (const std::string &path : args.graphs) {
    std::string error;
    std::optional<Graph> graph =
        doppler::loadPlacementGraph(path, graphLoadOptions(args), &error);
    if (!graph)
      fail(error);
    if (graph->numNodes() == 0)
      fail(path + ": the graph has no nodes");
    size_t slash = path.rfind('/');
    graphs.push_back({slash == std::string::npos ? path : path.substr(slash + 1),
                      std::move(*graph)});
    if (files)
      files->push_back(path);
  }
  if (!args.generateFamilies.empty() && args.generate <= 0)
    fail("--generate-families needs --generate N");
  if (args.generate > 0) {
    TrainingSetOptions options;
    options.count = static_cast<int32_t>(args.generate);
    options.seed = static_cast<uint64_t>(args.generateSeed);
    options.maxNodes = static_cast<int32_t>(args.generateMaxNodes);
    options.minNodes = std::min(options.minNodes, options.maxNodes);
    if (!args.generateFamilies.empty()) {
      std::string error;
      std::optional<uint32_t> families =
          parseGraphFamilies(args.generateFamilies, &error);
      if (!families)
        fail("--generate-families: " + error);
      options.families = *families;
    }
    for (GeneratedGraph &g : generateTrainingSet(options)) {
      graphs.push_back({g.name, std::move(g.graph)});
      if (files)
        files->push_back("");
    }
  }
  return graphs;
}

} // namespace doppler_train

namespace {

//===----------------------------------------------------------------------===//
// Options. Values are read as text and checked after parsing, so that every
// mistake is one "error: ..." line naming the option.
//===----------------------------------------------------------------------===//

constexpr const char *kOverview = R"(Doppler policy training

Trains the learned dual placement policy (SEL picks the next node, PLC its
device) on GRAPH files: the reference text format, or .mlir (one node per op
of a function, as doppler-place loads it). With one graph this is per-graph
training, as in the paper; with several (or --generate) one policy learns to
place all of them and, usually, unseen ones.

Stages: il imitates the critical-path heuristic, sim-rl is REINFORCE on the
simulator's makespan, real-rl on the makespan measured by running each
episode's placement on the runtime (so it needs .mlir graphs: a program to
run). Measured makespans are in microseconds, the unit of the cost
attributes of .mlir graphs; the log's "cost_source" says where each episode's
cost came from ("simulator", "runtime-cpu", ...).

  doppler-train GRAPH... --devices D --stages il,sim-rl,real-rl
                --episodes N1,N2,N3 -o MODEL [options]
  doppler-train --compare MODEL GRAPH... --devices D [--samples K] [--seed S]
                [--capacity-factor X] [--horizon N]
  doppler-train --write-generated DIR --generate N [--generate-seed S]
  doppler-train --baseline gdp|placeto GRAPH... --devices D --episodes N
                [--seed S] [--log CURVE.jsonl]
)";

// Shown before the Generic Options in --help; libLLVM's are hidden.
cl::OptionCategory trainingCategory("Doppler train options");
cl::OptionCategory realCategory(
    "Doppler train options: real-rl (the measured makespan of running the "
    "placement)");
cl::OptionCategory generatedCategory(
    "Doppler train options: generated graphs (added to the training set)");
cl::OptionCategory compareCategory(
    "Doppler train options: comparing (--compare MODEL, or 'default' for "
    "the embedded model)");

/// A value option of the training category, read as text.
struct TextOption : cl::opt<std::string> {
  TextOption(const char *name, const char *valueName, const char *help,
             cl::OptionCategory &category = trainingCategory,
             const char *initial = "")
      : cl::opt<std::string>(llvm::StringRef(name), cl::desc(help),
                             cl::value_desc(valueName), cl::init(initial),
                             cl::cat(category)) {}
};

/// A flag (no value).
struct FlagOption : cl::opt<bool> {
  FlagOption(const char *name, const char *help,
             cl::OptionCategory &category = trainingCategory)
      : cl::opt<bool>(llvm::StringRef(name), cl::desc(help),
                      cl::cat(category)) {}
};

cl::list<std::string> graphFiles(cl::Positional, cl::desc("<graph>..."),
                                 cl::cat(trainingCategory));
TextOption devicesOption("devices", "list",
                         "Device counts: 4, 2,4,8 or 2-8 (each episode draws "
                         "a graph and a count)");
TextOption stagesOption("stages", "list",
                        "il, sim-rl, real-rl, comma separated, in order");
TextOption episodesOption("episodes", "list",
                          "Episodes per stage (same length as --stages)");
TextOption outputOption("o", "model",
                        "Where the trained model goes (written atomically)");
cl::alias outputAlias("output", cl::desc("Alias for -o"),
                      cl::aliasopt(outputOption), cl::cat(trainingCategory));
TextOption initOption("init", "model",
                      "Start from this model (default: a fresh one)");
FlagOption resumeOption("resume", "Continue from the checkpoint (MODEL.ckpt)");
TextOption checkpointOption("checkpoint", "file",
                            "Checkpoint file (default: MODEL.ckpt)");
TextOption checkpointEveryOption("checkpoint-every", "N",
                                 "Episodes between checkpoints (default 500)");
TextOption seedOption("seed", "S", "Seed of everything random (default 0)");
TextOption logOption("log", "file", "JSON lines, one per episode");
TextOption architectureOption(
    "architecture", "spec",
    "reference | slim[,key=value...] (default slim: shared low-rank "
    "encoder, 4 rounds, heuristic prior, projected sums); keys: hidden, "
    "head, rounds, edge, rank, shared, estimate, prior, join, project (see "
    "DualPolicy.h; join=1 adds the join-split device feature and a prior "
    "for the join-aware device, for per-graph runs)",
    trainingCategory, "slim");
TextOption lrOption("lr", "list",
                    "Learning rate per stage (default 1e-3 for il, 1e-4 for "
                    "rl), decayed linearly to 0");
TextOption epsilonOption("epsilon", "list",
                         "Exploration per stage (default 1.0 il, 0.2 rl), "
                         "decayed linearly to 0");
TextOption entropyOption("entropy", "list",
                         "Entropy bonus weight per stage (1e-3 il, 0 rl)");
TextOption gammaOption("gamma", "G",
                       "Discount of the final reward (default 0.99)");
FlagOption
    sampleActionsOption("sample-actions",
                        "Explore by sampling the policy, not its argmax");
TextOption episodesPerUpdateOption(
    "episodes-per-update", "list",
    "Per stage: average K episodes' gradients per optimiser step (default "
    "1)");
FlagOption criticalPathBaselineOption(
    "critical-path-baseline",
    "Count the critical-path heuristic's cost as one earlier cost of each "
    "graph (rewards from the first episode on; useful with many graphs)");
FlagOption imitateBetterOption(
    "imitate-better-heuristic",
    "Imitation targets, per (graph, device count), the better of the "
    "critical-path and join-aware heuristics there, with the join prior "
    "trained alongside (needs --architecture with join=1)");
TextOption evaluateEveryOption(
    "evaluate-every", "N",
    "Evaluate the greedy policy every N episodes (default 100; 0: never) "
    "and keep the best; on the simulator, and once real-rl has run on the "
    "cost oracle (then only those evaluations count)");
TextOption
    evaluationPairsOption("evaluation-pairs", "N",
                          "(graph, devices) pairs evaluated (default 64)");
TextOption regressionWeightOption(
    "regression-weight", "W",
    "The best evaluation minimises the mean log ratio to critical path (for "
    "a model with join=1: to the better of critical path and join-aware on "
    "each pair) with losses counted W times (default 1: the geometric mean)");
TextOption priorLrScaleOption(
    "prior-lr-scale", "X",
    "The heuristic priors learn X times faster than the rest (default 1; > "
    "1 lets RL move off an imitated heuristic within a per-graph run)");
TextOption memoryTightOption(
    "memory-tight", "F",
    "Give this share (in [0, 1], default 0) of the (graph, devices) pairs "
    "memory capacities just above the smallest busiest-device peak of the "
    "heuristics, and penalise overflow in their costs (for models with "
    "memory=1 in --architecture)");
TextOption memoryOverflowWeightOption(
    "memory-overflow-weight", "W",
    "On memory-tight pairs the cost is makespan x (1 + W x relative "
    "overflow) (default 2)");
FlagOption noKeepBestOption("no-keep-best",
                            "Output the final parameters, not the best");
TextOption functionOption(
    "function", "name",
    ".mlir: the function to train on (default: the first with a body)");
TextOption systemOption(
    "system", "S",
    ".mlir: system preset or JSON file that costs ops without costs "
    "(default h100x4; see doppler-opt --doppler-annotate-costs)",
    trainingCategory, "h100x4");
FlagOption noProgressOption("no-progress",
                            "No progress bar (drawn only on a terminal)");
TextOption bestPlacementOption(
    "best-placement", "file",
    "Write the cheapest placement any episode found (one device id per "
    "node, as doppler-place --assignment reads); with several graphs or "
    "device counts, FILE.<graph>.<D>.txt each. After a real-rl stage, the "
    "cheapest measured one");

TextOption oracleOption(
    "oracle", "name",
    "runtime (default) | simulator | simulator-contention (the simulator "
    "stands in for the runtime, e.g. on reference graphs)",
    realCategory, "runtime");
TextOption backendOption(
    "backend", "name",
    "Runtime backend: cpu (default) or cuda (when built with it and a GPU "
    "is present); devices are the largest --devices count",
    realCategory, "cpu");
TextOption repeatOption(
    "repeat", "N",
    "Timed runs per episode; the median is the cost (default 1). The "
    "program's inputs are seeded with --seed, generated once and reused by "
    "every episode",
    realCategory);
TextOption warmupOption("warmup", "N", "Untimed runs before them (default 1)",
                        realCategory);

TextOption
    generateOption("generate", "N",
                   "N graphs of all families (chain matmul, FFNN, transformer "
                   "blocks/layers, random layered DAGs)",
                   generatedCategory);
TextOption generateSeedOption("generate-seed", "S", "Their seed (default 0)",
                              generatedCategory);
TextOption generateFamiliesOption(
    "generate-families", "F",
    "Only these families: a comma-separated list of chain, ffnn, "
    "transformer, random (default: all); the draws are the full mix's with "
    "the others skipped, so complementary lists give disjoint families",
    generatedCategory);
TextOption generateMaxNodesOption("generate-max-nodes", "M",
                                  "Size limit (default 320)",
                                  generatedCategory);
TextOption writeGeneratedOption(
    "write-generated", "dir",
    "Write the generated graphs to DIR (reference format) and exit",
    generatedCategory);

TextOption compareOption(
    "compare", "model",
    "Print each graph's critical-path and learned makespans; exit 0",
    compareCategory);
TextOption samplesOption("samples", "K",
                         "Also K rollouts, best by the simulator",
                         compareCategory);
TextOption horizonOption(
    "horizon", "N",
    "Where the completions do not fit the budget: N nodes of bounded-horizon "
    "completions that may overrule the better rule's device (an experiment; "
    "default 0: the lookahead prior follows the rule's device)",
    compareCategory);
TextOption capacityFactorOption(
    "capacity-factor", "X",
    "Compare under memory: each device holds X times the least "
    "busiest-device peak of the round-robin, critical-path, join-aware and "
    "HEFT placements (graphs with output bytes; X > 0). Prints each "
    "placement's overflow before and makespan after fitting (MemoryFit)",
    compareCategory);
cl::OptionCategory baselineCategory(
    "Doppler train options: the paper's learned baselines (trained per "
    "graph on the simulator; --episodes N, --seed, --log for the curve)");
TextOption baselineOption(
    "baseline", "name",
    "Train GDP (gdp) or Placeto (placeto) on each (GRAPH, D) pair and print "
    "its best makespan beside critical-path's; exit 0",
    baselineCategory);
cl::opt<bool> shortHelp("h", cl::desc("Alias for --help"), cl::Hidden,
                        cl::cat(trainingCategory));




std::vector<double> parseDoubles(const std::string &flag,
                                 const std::string &text) {
  std::vector<double> values;
  for (const std::string &part : splitList(text)) {
    std::optional<double> value = doppler::parseFiniteDouble(part);
    if (!value || *value < 0)
      fail(flag + ": '" + part + "' is not a non-negative number");
    values.push_back(*value);
  }
  return values;
}

/// An integer option's value, at least `lo`; `value` stays when not given.
void readInt(const cl::opt<std::string> &option, int64_t lo, int64_t &value) {
  if (option.getNumOccurrences() == 0)
    return;
  const std::string &text = option;
  std::optional<int64_t> parsed = doppler::parseInt64(text);
  if (!parsed || *parsed < lo)
    fail("--" + option.ArgStr.str() + ": '" + text +
         "' is not an integer >= " + std::to_string(lo));
  value = *parsed;
}

/// A number option's value, accepted by `accept`; `value` stays when not
/// given. The error reads BEFORE'TEXT'AFTER.
void readDouble(const cl::opt<std::string> &option, double &value,
                bool (*accept)(double), const char *before,
                const char *after = "") {
  if (option.getNumOccurrences() == 0)
    return;
  const std::string &text = option;
  std::optional<double> parsed = doppler::parseFiniteDouble(text);
  if (!parsed || !accept(*parsed))
    fail(before + ("'" + text + "'") + after);
  value = *parsed;
}

/// The options, checked one by one.
Arguments readArguments() {
  Arguments args;
  args.graphs.assign(graphFiles.begin(), graphFiles.end());
  args.devices = devicesOption;
  args.stages = stagesOption;
  args.episodes = episodesOption;
  args.output = outputOption;
  args.init = initOption;
  args.resume = resumeOption;
  args.checkpoint = checkpointOption;
  readInt(checkpointEveryOption, 0, args.checkpointEvery);
  readInt(seedOption, 0, args.seed);
  args.log = logOption;
  args.architecture = architectureOption;
  args.architectureGiven = architectureOption.getNumOccurrences() > 0;
  args.lr = lrOption;
  args.epsilon = epsilonOption;
  args.entropy = entropyOption;
  readDouble(
      gammaOption, args.gamma, [](double g) { return g >= 0 && g <= 1; },
      "--gamma: ", " is not in [0, 1]");
  args.sampleActions = sampleActionsOption;
  args.criticalPathBaseline = criticalPathBaselineOption;
  args.imitateBetterHeuristic = imitateBetterOption;
  args.episodesPerUpdate = episodesPerUpdateOption;
  readInt(evaluateEveryOption, 0, args.evaluateEvery);
  readInt(evaluationPairsOption, 1, args.evaluationPairs);
  readDouble(
      regressionWeightOption, args.regressionWeight,
      [](double w) { return w >= 1; },
      "--regression-weight needs a number >= 1, got ");
  readDouble(
      priorLrScaleOption, args.priorLearningRateScale,
      [](double x) { return x > 0 && std::isfinite(x); },
      "--prior-lr-scale needs a positive number, got ");
  readDouble(
      memoryTightOption, args.memoryTight,
      [](double f) { return f >= 0 && f <= 1; }, "--memory-tight: ",
      " is not in [0, 1]");
  readDouble(
      memoryOverflowWeightOption, args.memoryOverflowWeight,
      [](double w) { return w >= 0; },
      "--memory-overflow-weight needs a number >= 0, got ");
  args.keepBest = !noKeepBestOption;
  args.oracle = oracleOption;
  args.function = functionOption;
  args.system = systemOption;
  args.backend = backendOption;
  if (args.backend != "cpu" && args.backend != "cuda")
    fail("--backend must be cpu or cuda, not '" + args.backend + "'");
  readInt(repeatOption, 1, args.repeat);
  readInt(warmupOption, 0, args.warmup);
  args.bestPlacement = bestPlacementOption;
  args.progress = !noProgressOption;
  readInt(generateOption, 0, args.generate);
  readInt(generateSeedOption, 0, args.generateSeed);
  readInt(generateMaxNodesOption, 1, args.generateMaxNodes);
  if (generateFamiliesOption.getNumOccurrences())
    args.generateFamilies = generateFamiliesOption;
  args.compare = compareOption;
  readInt(samplesOption, 0, args.samples);
  readInt(horizonOption, 0, args.horizon);
  readDouble(
      capacityFactorOption, args.capacityFactor,
      [](double x) { return x > 0; },
      "--capacity-factor needs a positive number, got ");
  args.writeGenerated = writeGeneratedOption;
  args.baseline = baselineOption;
  return args;
}




int writeGenerated(const Arguments &args) {
  if (args.generate <= 0)
    fail("--write-generated needs --generate N");
  ::mkdir(args.writeGenerated.c_str(), 0755);
  std::vector<TrainingGraph> graphs = loadGraphs(args);
  for (const TrainingGraph &g : graphs) {
    std::string error;
    std::string path = args.writeGenerated + "/" + g.name + ".txt";
    if (!writeReferenceGraph(g.graph, path, &error))
      fail(error);
    std::printf("%s (%d nodes, %d edges)\n", path.c_str(), g.graph.numNodes(),
                g.graph.numEdges());
  }
  return 0;
}

/// The stages of --stages with their --episodes and per-stage settings.
std::vector<StageOptions> readStages(const Arguments &args) {
  if (args.stages.empty() || args.episodes.empty())
    fail("--stages and --episodes are required (e.g. --stages il,sim-rl "
         "--episodes 2000,2000)");
  std::vector<std::string> stageNames = splitList(args.stages);
  std::vector<std::string> episodeTexts = splitList(args.episodes);
  auto counted = [](size_t n, const char *noun) {
    return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
  };
  if (stageNames.size() != episodeTexts.size())
    fail("--stages names " + counted(stageNames.size(), "stage") +
         " but --episodes gives " + counted(episodeTexts.size(), "count"));
  std::vector<double> lr, epsilon, entropy, perUpdate;
  if (!args.lr.empty())
    lr = parseDoubles("--lr", args.lr);
  if (!args.epsilon.empty())
    epsilon = parseDoubles("--epsilon", args.epsilon);
  if (!args.entropy.empty())
    entropy = parseDoubles("--entropy", args.entropy);
  auto checkLength = [&](const std::vector<double> &values, const char *flag) {
    if (!values.empty() && values.size() != stageNames.size())
      fail(std::string(flag) + " needs one value per stage");
  };
  if (!args.episodesPerUpdate.empty())
    perUpdate = parseDoubles("--episodes-per-update", args.episodesPerUpdate);
  for (double k : perUpdate)
    if (k < 1 || k != std::floor(k) || k > 1e6)
      fail("--episodes-per-update values must be whole numbers >= 1");
  checkLength(perUpdate, "--episodes-per-update");
  checkLength(lr, "--lr");
  checkLength(epsilon, "--epsilon");
  checkLength(entropy, "--entropy");
  for (size_t i = 0; i < epsilon.size(); ++i)
    if (epsilon[i] > 1)
      fail("--epsilon values must be in [0, 1]");
  std::vector<StageOptions> stages;
  for (size_t i = 0; i < stageNames.size(); ++i) {
    std::optional<TrainingStage> stage = parseStage(stageNames[i]);
    if (!stage)
      fail("unknown stage '" + stageNames[i] + "' (valid: il, sim-rl, real-rl)");
    std::optional<int64_t> episodes = doppler::parseInt64(episodeTexts[i]);
    if (!episodes || *episodes < 0)
      fail("--episodes: '" + episodeTexts[i] + "' is not a count");
    if (*episodes == 0)
      fail("--episodes: stage " + std::to_string(i + 1) + " (" +
           stageNames[i] + ") has 0 episodes; a stage must train at least "
           "one (leave the stage out of --stages instead)");
    StageOptions s = StageOptions::defaults(*stage, *episodes);
    if (!lr.empty())
      s.learningRate = lr[i];
    if (!epsilon.empty())
      s.epsilon = epsilon[i];
    if (!entropy.empty())
      s.entropyWeight = entropy[i];
    if (!perUpdate.empty())
      s.episodesPerUpdate = static_cast<int32_t>(perUpdate[i]);
    stages.push_back(s);
  }
  return stages;
}

/// The runtime oracle of real-rl, with every graph's program added: a graph
/// drawn late in training must not be the first to fail.
std::unique_ptr<doppler::train::RuntimeCostOracle>
createRuntimeOracle(const Arguments &args, const TrainerOptions &options,
                    const std::vector<std::string> &files, int32_t maxDevices) {
  for (size_t g = 0; g < options.graphs.size(); ++g)
    if (!isMLIRFile(files[g]))
      fail("real-rl measures the placement on the runtime, but '" +
           (files[g].empty() ? options.graphs[g].name : files[g]) + "' is " +
           (files[g].empty() ? "a generated graph" : "a reference graph") +
           ": it has no program to run (give .mlir files, or --oracle "
           "simulator)");
  doppler::train::RuntimeOracleOptions runtime;
  runtime.backend = args.backend;
  runtime.numDevices = maxDevices;
  runtime.repeat = static_cast<int32_t>(args.repeat);
  runtime.warmup = static_cast<int32_t>(args.warmup);
  runtime.seed = static_cast<uint64_t>(args.seed);
  std::string error;
  std::unique_ptr<doppler::train::RuntimeCostOracle> oracle =
      doppler::train::RuntimeCostOracle::create(runtime, &error);
  if (!oracle)
    fail("--backend " + args.backend + ": " + error);
  for (size_t g = 0; g < options.graphs.size(); ++g)
    if (!oracle->addProgram(files[g], graphLoadOptions(args),
                            options.graphs[g].graph, &error))
      fail(error);
  return oracle;
}

/// The simulator standing in for the runtime (--oracle simulator*).
std::unique_ptr<CostOracle> createSimulatorOracle(const Arguments &args,
                                                  int32_t maxDevices) {
  SimulatorOptions simulation;
  if (args.oracle == "simulator-contention")
    simulation.linkContention = true;
  else if (args.oracle != "simulator")
    fail("unknown oracle '" + args.oracle +
         "' (valid: runtime, simulator, simulator-contention)");
  return std::make_unique<SimulatorCostOracle>(maxDevices, simulation);
}

/// The trainer's settings that are copied from the options as they are.
void copySettings(const Arguments &args, TrainerOptions &options) {
  options.initModelPath = args.init;
  options.seed = static_cast<uint64_t>(args.seed);
  options.gamma = args.gamma;
  options.sampleActions = args.sampleActions;
  options.criticalPathBaseline = args.criticalPathBaseline;
  options.imitateBetterHeuristic = args.imitateBetterHeuristic;
  options.outputPath = args.output;
  options.checkpointPath = args.checkpoint;
  options.checkpointEvery = args.checkpointEvery;
  options.resume = args.resume;
  options.logPath = args.log;
  options.progress = args.progress;
  options.evaluateEvery = args.evaluateEvery;
  options.evaluationPairs = static_cast<int32_t>(args.evaluationPairs);
  options.regressionWeight = args.regressionWeight;
  options.priorLearningRateScale = args.priorLearningRateScale;
  options.memoryTightFraction = args.memoryTight;
  options.memoryOverflowWeight = args.memoryOverflowWeight;
  options.keepBest = args.keepBest;
}

/// --best-placement: one file, or one per (graph, device count).
void writeBestPlacements(const Arguments &args,
                         const TrainingSummary &summary) {
  for (const BestPlacement &best : summary.bestPlacements) {
    std::string path = summary.bestPlacements.size() == 1
                           ? args.bestPlacement
                           : args.bestPlacement + "." + best.graph + "." +
                                 std::to_string(best.devices) + ".txt";
    std::string error;
    if (!writeAssignmentFile(path, best.assignment, ",", &error))
      fail(error);
    std::printf("best placement seen: makespan %.6g (%s; %s, %d devices) "
                "in %s\n",
                best.makespan, best.costSource.c_str(), best.graph.c_str(),
                best.devices, path.c_str());
  }
}

int train(const Arguments &args) {
  TrainerOptions options;
  if (args.output.empty())
    fail("no output model (-o MODEL)");
  if (args.devices.empty())
    fail("no device count (--devices D)");
  options.stages = readStages(args);
  bool needsOracle = false;
  for (const StageOptions &stage : options.stages)
    needsOracle |= stage.stage == TrainingStage::RealRL;
  // A model from --init keeps its own architecture: a different one given
  // alongside would be silently ignored.
  if (!args.init.empty() && args.architectureGiven)
    fail("--architecture does not apply with --init (the model in '" +
         args.init + "' keeps its own architecture); leave out one of them");
  std::string error;
  std::optional<ModelConfig> model = parseModelConfig(args.architecture, &error);
  if (!model)
    fail("--architecture: " + error);
  options.model = *model;
  if (args.imitateBetterHeuristic && args.init.empty() &&
      !model->joinFeature)
    fail("--imitate-better-heuristic needs a model with the join prior "
         "(--architecture slim,join=1)");
  options.deviceCounts = parseDevices(args.devices);
  std::vector<std::string> files;
  options.graphs = loadGraphs(args, &files);
  if (options.graphs.empty())
    fail("no training graphs (give GRAPH files or --generate N)");

  std::unique_ptr<CostOracle> oracle;
  doppler::train::RuntimeCostOracle *runtimeOracle = nullptr;
  int32_t maxDevices = *std::max_element(options.deviceCounts.begin(),
                                         options.deviceCounts.end());
  if (needsOracle && args.oracle == "runtime") {
    std::unique_ptr<doppler::train::RuntimeCostOracle> created =
        createRuntimeOracle(args, options, files, maxDevices);
    runtimeOracle = created.get();
    oracle = std::move(created);
  } else if (needsOracle) {
    oracle = createSimulatorOracle(args, maxDevices);
  }
  options.realOracle = oracle.get();
  copySettings(args, options);
  const size_t graphCount = options.graphs.size();
  const size_t deviceCount = options.deviceCounts.size();

  std::optional<TrainingSummary> summary = trainPolicy(std::move(options), &error);
  if (!summary)
    fail(error);
  std::printf("trained %lld episodes on %zu graph(s) x %zu device count(s) in "
              "%.1f s; wrote %s\n",
              static_cast<long long>(summary->episodes), graphCount,
              deviceCount, summary->seconds, args.output.c_str());
  if (runtimeOracle)
    std::printf("real-rl: %lld placements measured on the %s runtime (%d "
                "devices, median of %lld run(s) after %lld warm-up), %.1f s\n",
                static_cast<long long>(runtimeOracle->measurements()),
                args.backend.c_str(), maxDevices,
                static_cast<long long>(args.repeat),
                static_cast<long long>(args.warmup),
                runtimeOracle->measuringSeconds());
  if (!args.bestPlacement.empty())
    writeBestPlacements(args, *summary);
  if (summary->bestEvaluation)
    std::printf("best greedy evaluation (%s): %.4f x critical path "
                "(geometric mean over %d pairs), no worse on %.1f%%, at "
                "episode %lld%s\n",
                summary->bestEvaluation->costSource.c_str(),
                summary->bestEvaluation->ratioToCriticalPath,
                summary->bestEvaluation->pairs,
                100 * summary->bestEvaluation->noWorseFraction,
                static_cast<long long>(summary->bestEvaluation->episode),
                args.keepBest ? " (the model written)" : "");
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  keepFreedMemoryForTraining();
  cl::HideUnrelatedOptions(
      {&trainingCategory, &realCategory, &generatedCategory, &compareCategory,
       &baselineCategory, &movesCategory, &constructCategory});
  cl::ParseCommandLineOptions(argc, argv, kOverview);
  if (shortHelp) {
    cl::PrintHelpMessage(/*Hidden=*/false, /*Categorized=*/true);
    return 0;
  }
  Arguments args = readArguments();
  if (!args.writeGenerated.empty())
    return writeGenerated(args);
  if (!args.compare.empty())
    return compare(args);
  if (!args.baseline.empty())
    return trainBaselines(args);
  if (movesRequested())
    return moves(args);
  if (constructRequested())
    return construct(args);
  return train(args);
}
