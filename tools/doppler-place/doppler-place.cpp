//===- doppler-place.cpp - Place or evaluate a graph on D devices --------===//
//
// Places a graph in the reference text format (or an .mlir function) with
// one of the policies within a budget (Budget.h: the policy's placement,
// the learned policy's heuristic priors, simulator-judged refinement), or
// evaluates a placement read from a file; reports the simulated makespan
// against the lower bound. A thin layer over lib/Placement (policies,
// search, the simulator, assignment files, the report) and the graph loader:
// options, calls, exit codes. Errors are one "error: ..." line on stderr and
// exit code 1.
//
//===----------------------------------------------------------------------===//

#include "Doppler/Support/Limits.h"
#include "Doppler/Analysis/GraphLoader.h"
#include "Doppler/Placement/Analysis.h"
#include "Doppler/Placement/AssignmentFile.h"
#include "Doppler/Placement/Graph.h"
#include "Doppler/Placement/Heuristics.h"
#include "Doppler/Placement/Learning/Budget.h"
#include "Doppler/Placement/Learning/LearnedPolicy.h"
#include "Doppler/Placement/Learning/LearnedMoves.h"
#include "Doppler/Placement/MemoryFit.h"
#include "Doppler/Placement/PlacementReport.h"
#include "Doppler/Placement/Search.h"
#include "Doppler/Placement/Simulator.h"
#include "Doppler/Placement/SystemDescription.h"
#include "Doppler/Support/NumberFormat.h"
#include "Doppler/Support/ParseNumber.h"
#include "Doppler/Support/Stopwatch.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>
#include <vector>

using namespace doppler::placement;
using doppler::secondsSince;
namespace cl = llvm::cl;

namespace {

//===----------------------------------------------------------------------===//
// Options. Values are read as text and checked after parsing, so that every
// mistake is one "error: ..." line naming the option.
//===----------------------------------------------------------------------===//

constexpr const char *kOverview = R"(Doppler placement on graph files

Places GRAPH on D devices, or evaluates the placement in an --assignment
file, and reports the simulated makespan (reference semantics) against the
lower bound max(compute-only critical path, total compute / D). GRAPH is a
reference text-format file, or an .mlir file: one node per op of a function
(ops without costs are costed first; doppler.transfer ops are the edges they
implement), node ids in op order.

The learned policy (the default) spends a budget by default: it starts from
its greedy placement and its two heuristic priors (critical-path,
join-aware), and refines the best by simulated annealing for a number of
simulator runs that takes about a second on a few hundred nodes (the same
placement on every machine). --budget-evaluations 0 places greedily only;
--budget-ms T spends T milliseconds of wall-clock time instead (results
then depend on the machine). A heuristic places alone unless given a
budget. learned-moves: the better of critical-path and join-aware, then
moves of critical-chain nodes that an estimate (and a learned model) rank
first, several at a time, each kept if the simulator says it improves,
within a budget of work near 3x the better heuristic's own time, or for
--move-evaluations simulator runs (docs/Method.md section 12).

  doppler-place GRAPH --devices D [--policy NAME] [--seed S] [--samples K]
                [--model FILE] [--move-evaluations N]
                [--budget-evaluations N] [--budget-ms T]
                [--estimate earliest|load] [--memory-limit B]
                [--fit-evaluations N] [--json] [-o FILE]
  doppler-place GRAPH --devices D --assignment FILE [--repeat N] [--json]
                [-o FILE]
)";

// Shown first in --help (Generic Options sort after it); libLLVM's own
// options are hidden.
cl::OptionCategory category("Doppler place options");

cl::list<std::string> graphPaths(cl::Positional, cl::desc("<graph>"),
                                 cl::cat(category));
cl::opt<std::string> devicesText("devices",
                                 cl::desc("Number of devices (>= 1); required"),
                                 cl::value_desc("D"), cl::cat(category));
cl::opt<std::string> policyName(
    "policy",
    cl::desc("doppler (default: the learned dual policy; loads LibTorch), "
             "learned-moves, critical-path, join-aware, rollout, heft, "
             "round-robin, random, single, critical-path-reference"),
    cl::value_desc("name"), cl::init("doppler"), cl::cat(category));
cl::opt<std::string> seedText(
    "seed",
    cl::desc("Seed of random, critical-path-reference, the learned policy's "
             "sampling and the refinement (default 0)"),
    cl::value_desc("S"), cl::cat(category));
cl::opt<std::string> samplesText(
    "samples",
    cl::desc("doppler: keep the best of K rollouts (the greedy one and K-1 "
             "sampled) by the simulator (default 0: greedy only)"),
    cl::value_desc("K"), cl::cat(category));
cl::opt<std::string> modelPath(
    "model",
    cl::desc("doppler: a model from doppler-train (default: the model "
             "embedded in libDopplerLearning.so); learned-moves: a move "
             "model from doppler-train --moves train"),
    cl::value_desc("file"), cl::cat(category));
cl::opt<std::string> moveEvaluationsText(
    "move-evaluations",
    cl::desc("learned-moves: simulator runs for the learned moves (default: "
             "those a budget of work allows, about 3x the heuristic's time)"),
    cl::value_desc("N"), cl::cat(category));
cl::opt<std::string> budgetEvaluationsText(
    "budget-evaluations",
    cl::desc("Refine the best start by simulated annealing for N simulator "
             "runs (deterministic for a seed; 0: none; default for doppler: "
             "about a second's worth, 0 for a heuristic)"),
    cl::value_desc("N"), cl::cat(category));
cl::opt<std::string> budgetMillisecondsText(
    "budget-ms",
    cl::desc("... or for T milliseconds of wall-clock time, starts included "
             "(machine-dependent); with both, whichever ends first"),
    cl::value_desc("T"), cl::cat(category));
cl::opt<std::string> estimateName(
    "estimate",
    cl::desc("Start estimate of critical-path: earliest (default) or load "
             "(the reference's)"),
    cl::value_desc("E"), cl::cat(category));
cl::opt<std::string> assignmentPath(
    "assignment",
    cl::desc("Evaluate FILE: one device id per node, in node-id order, "
             "separated by commas and/or whitespace"),
    cl::value_desc("file"), cl::cat(category));
cl::opt<std::string>
    repeatText("repeat",
               cl::desc("With --assignment: evaluate N times and report "
                        "seconds_per_eval"),
               cl::value_desc("N"), cl::cat(category));
cl::opt<bool> jsonOutput("json",
                         cl::desc("Print a JSON object instead of text"),
                         cl::cat(category));
cl::opt<std::string> outputPath(
    "o", cl::desc("Write the assignment to FILE (the --assignment format)"),
    cl::value_desc("file"), cl::cat(category));
cl::opt<std::string> functionName(
    "function",
    cl::desc(".mlir: the function to place (default: the first one with a "
             "body)"),
    cl::value_desc("name"), cl::cat(category));
cl::opt<std::string> systemName(
    "system",
    cl::desc(".mlir: system preset or JSON file used to cost ops that have "
             "no costs (default h100x4)"),
    cl::value_desc("S"), cl::init("h100x4"), cl::cat(category));
cl::opt<std::string> memoryLimitText(
    "memory-limit",
    cl::desc(".mlir: bytes of memory per device, instead of the --system's "
             "capacities; a placement that exceeds a device's is made to fit "
             "(graphs with byte sizes only)"),
    cl::value_desc("B"), cl::cat(category));
cl::opt<std::string> fitEvaluationsText(
    "fit-evaluations",
    cl::desc("Simulator runs spent making a placement fit the devices' "
             "memory (default 20000; deterministic for a seed)"),
    cl::value_desc("N"), cl::cat(category));
cl::opt<bool> networkOutput(
    "network",
    cl::desc(".mlir: also simulate the placement on the --system's links "
             "and network (link and NIC contention, transfers of the "
             "tensors' bytes; --devices must be the system's) and report "
             "network_makespan; a placement budget is then judged by it, "
             "and on a system with nodes the heuristics weigh each device "
             "pair's link"),
    cl::cat(category));
cl::opt<bool> shortHelp("h", cl::desc("Alias for --help"), cl::Hidden,
                        cl::cat(category));

// Far beyond any real system; keeps per-device tables (devices x nodes in
// the simulator) from exhausting memory on a typo. Shared with the passes.
using ::doppler::kMaxDevices;

/// The options, checked.
struct Options {
  std::string graphPath;
  int64_t devices = 0;
  std::string policy;
  int64_t samples = 0;
  std::string modelPath;
  int64_t moveEvaluations = -1;
  uint64_t seed = 0;
  /// The budget: -1 = the default (defaultBudgetEvaluations for doppler,
  /// none for a heuristic).
  int64_t budgetEvaluations = -1;
  double budgetSeconds = 0;
  StartEstimate estimate = StartEstimate::EarliestStart;
  std::string assignmentPath;
  int64_t repeat = 0;
  bool json = false;
  std::string outputPath;
  double memoryLimit = 0;
  int64_t fitEvaluations = 20000;
  bool network = false;
  doppler::GraphLoadOptions load;
};

int fail(const std::string &message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  return 1;
}

bool startsWithSpace(const std::string &text) {
  return !text.empty() && std::isspace(static_cast<unsigned char>(text[0]));
}

/// A whole decimal integer in [minimum, maximum].
bool parseInteger(const std::string &flag, const std::string &text,
                  int64_t minimum, int64_t maximum, int64_t *value,
                  std::string *error) {
  std::optional<int64_t> parsed = doppler::parseInt64(text);
  if (!parsed || startsWithSpace(text)) {
    *error = flag + " expects an integer, got '" + text + "'";
    return false;
  }
  if (*parsed < minimum || *parsed > maximum) {
    *error = flag + " must be at least " + std::to_string(minimum) +
             (maximum < std::numeric_limits<int64_t>::max()
                  ? " and at most " + std::to_string(maximum)
                  : std::string()) +
             ", got " + text;
    return false;
  }
  *value = *parsed;
  return true;
}

bool parseSeed(const std::string &text, uint64_t *value, std::string *error) {
  char *end = nullptr;
  errno = 0;
  unsigned long long parsed = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE ||
      !std::isdigit(static_cast<unsigned char>(text[0]))) {
    *error = "--seed expects a non-negative integer, got '" + text + "'";
    return false;
  }
  *value = parsed;
  return true;
}

bool parseMilliseconds(const std::string &text, double *seconds,
                       std::string *error) {
  std::optional<double> parsed = doppler::parseFiniteDouble(text);
  if (!parsed || *parsed < 0 || startsWithSpace(text)) {
    *error = "--budget-ms expects a non-negative number of milliseconds, "
             "got '" +
             text + "'";
    return false;
  }
  *seconds = *parsed / 1000;
  return true;
}

bool given(const cl::Option &option) { return option.getNumOccurrences() > 0; }

/// The numbers and names of the options, each checked.
bool readValues(Options &options, std::string *error) {
  if (given(devicesText) && !parseInteger("--devices", devicesText, 1,
                                          kMaxDevices, &options.devices, error))
    return false;
  options.policy = policyName;
  if (given(samplesText) && !parseInteger("--samples", samplesText, 0,
                                          std::numeric_limits<int32_t>::max(),
                                          &options.samples, error))
    return false;
  if (given(modelPath) && modelPath.empty()) {
    *error = "--model expects a file name";
    return false;
  }
  options.modelPath = modelPath;
  if (given(moveEvaluationsText) &&
      !parseInteger("--move-evaluations", moveEvaluationsText, 0,
                    std::numeric_limits<int64_t>::max(),
                    &options.moveEvaluations, error))
    return false;
  if (given(seedText) && !parseSeed(seedText, &options.seed, error))
    return false;
  if (given(budgetMillisecondsText) &&
      !parseMilliseconds(budgetMillisecondsText, &options.budgetSeconds,
                         error))
    return false;
  if (given(budgetEvaluationsText) &&
      !parseInteger("--budget-evaluations", budgetEvaluationsText, 0,
                    std::numeric_limits<int64_t>::max(),
                    &options.budgetEvaluations, error))
    return false;
  if (given(estimateName)) {
    if (estimateName == "earliest") {
      options.estimate = StartEstimate::EarliestStart;
    } else if (estimateName == "load") {
      options.estimate = StartEstimate::DeviceLoad;
    } else {
      *error =
          "--estimate must be 'earliest' or 'load', got '" + estimateName + "'";
      return false;
    }
  }
  options.assignmentPath = assignmentPath;
  if (given(repeatText) && !parseInteger("--repeat", repeatText, 1,
                                         std::numeric_limits<int32_t>::max(),
                                         &options.repeat, error))
    return false;
  if (given(memoryLimitText)) {
    std::optional<double> parsed = doppler::parseFiniteDouble(memoryLimitText);
    if (!parsed || *parsed <= 0 || startsWithSpace(memoryLimitText)) {
      *error = "--memory-limit expects a positive number of bytes, got '" +
               memoryLimitText + "'";
      return false;
    }
    options.memoryLimit = *parsed;
  }
  if (given(fitEvaluationsText) &&
      !parseInteger("--fit-evaluations", fitEvaluationsText, 1,
                    std::numeric_limits<int64_t>::max(),
                    &options.fitEvaluations, error))
    return false;
  options.json = jsonOutput;
  options.network = networkOutput;
  options.outputPath = outputPath;
  options.load.function = functionName;
  options.load.system = systemName;
  options.load.devices = static_cast<int32_t>(options.devices);
  return true;
}

/// The graph file, the required options and the combinations that apply.
bool checkCombination(Options &options, std::string *error) {
  if (graphPaths.empty()) {
    *error = "no graph file given (see --help)";
    return false;
  }
  if (graphPaths.size() > 1) {
    *error = "more than one graph file given: '" + graphPaths[0] + "', '" +
             graphPaths[1] + "'";
    return false;
  }
  options.graphPath = graphPaths[0];
  if (!given(devicesText)) {
    *error = "--devices is required";
    return false;
  }
  const bool evaluating = !options.assignmentPath.empty();
  if (evaluating &&
      (given(policyName) || given(budgetMillisecondsText) ||
       given(budgetEvaluationsText) || given(estimateName))) {
    *error = "--assignment evaluates a given placement: it cannot be combined "
             "with --policy, --estimate or --budget-*";
    return false;
  }
  const bool learned = options.policy == kLearnedPolicyName;
  const bool moves = options.policy == kLearnedMovesPolicyName;
  if ((given(samplesText) && !learned) ||
      (!options.modelPath.empty() && !learned && !moves)) {
    *error = "--samples and --model apply to --policy doppler only (--model "
             "also to learned-moves)";
    return false;
  }
  if (given(moveEvaluationsText) && !moves) {
    *error = "--move-evaluations applies to --policy learned-moves only";
    return false;
  }
  if (learned && given(estimateName)) {
    *error = "--estimate applies to the heuristics, not to --policy doppler";
    return false;
  }
  if (!evaluating && options.repeat > 0) {
    *error = "--repeat needs --assignment";
    return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// The two modes.
//===----------------------------------------------------------------------===//

/// Evaluates the placement of --assignment (--repeat times).
bool evaluateAssignment(const Options &options, const Graph &graph,
                        Simulator &simulator, PlacementReport &report,
                        std::string *error) {
  std::optional<std::vector<DeviceId>> ids =
      readAssignmentFile(options.assignmentPath, graph.numNodes(),
                         static_cast<int32_t>(options.devices), error);
  if (!ids)
    return false;
  report.assignment = std::move(*ids);
  const int64_t runs = std::max<int64_t>(options.repeat, 1);
  auto begin = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < runs; ++i)
    report.makespan = simulator.run(report.assignment);
  report.seconds = secondsSince(begin);
  if (options.repeat > 0) {
    report.repeat = options.repeat;
    report.secondsPerEval = report.seconds / options.repeat;
  }
  return true;
}

/// Each device's memory capacity: --memory-limit, else the --system's
/// (devices beyond the system's take its devices' capacities in turn, as
/// they take their costs), else unknown (infinity).
std::vector<double> memoryCapacities(const Options &options) {
  const int32_t numDevices = static_cast<int32_t>(options.devices);
  std::vector<double> capacity(numDevices,
                               std::numeric_limits<double>::infinity());
  if (options.memoryLimit > 0) {
    capacity.assign(numDevices, options.memoryLimit);
    return capacity;
  }
  std::string error;
  if (std::optional<SystemDescription> system =
          SystemDescription::load(options.load.system, &error))
    for (DeviceId d = 0; d < numDevices; ++d)
      capacity[d] = system->device(d % system->numDevices()).memoryBytes;
  return capacity;
}

/// Makes the placement fit the devices' memory where the graph has byte
/// sizes (MemoryFit.h); a placement that fits is kept as it is.
bool fitMemory(const Options &options, const Graph &graph,
               PlacementReport &report, std::string *error) {
  if (!graph.hasOutputBytes())
    return true;
  SystemBuilder builder(static_cast<int32_t>(options.devices));
  builder.setMemoryCapacities(memoryCapacities(options));
  std::optional<System> system = builder.build(error);
  if (!system)
    return false;
  MemoryFitOptions fitOptions;
  fitOptions.seed = options.seed;
  fitOptions.maxEvaluations = options.fitEvaluations;
  std::optional<MemoryFitResult> fit =
      fitToMemory(graph, *system, report.assignment, fitOptions, error);
  if (!fit)
    return false;
  int64_t moved = 0;
  for (size_t v = 0; v < fit->assignment.size(); ++v)
    moved += fit->assignment[v] != report.assignment[v];
  report.movedToFit = moved;
  report.memoryFeasible = fit->feasible;
  report.memoryDiagnosis = fit->diagnosis;
  report.assignment = std::move(fit->assignment);
  return true;
}

/// Places with --policy within the budget (Budget.h), then makes the
/// placement fit the devices' memory.
bool placeWithPolicy(const Options &options, const Graph &graph,
                     Simulator &simulator, const System *pairSystem,
                     PlacementReport &report, std::string *error) {
  const int32_t numDevices = static_cast<int32_t>(options.devices);
  BudgetedPlaceOptions budget;
  budget.policy = options.policy;
  budget.heuristic.seed = options.seed;
  budget.heuristic.estimate = options.estimate;
  budget.heuristic.system = pairSystem;
  budget.learned.modelPath = options.modelPath;
  budget.learned.moveEvaluations = options.moveEvaluations;
  budget.learned.samples = static_cast<int32_t>(options.samples);
  // A memory-aware model reads the capacities (others ignore them); the
  // fit below still guarantees the result where a fitting one exists.
  if (graph.hasOutputBytes())
    budget.learned.memoryCapacities = memoryCapacities(options);
  budget.seconds = options.budgetSeconds;
  if (options.budgetEvaluations >= 0)
    budget.evaluations = options.budgetEvaluations;
  else if (options.budgetSeconds == 0 && options.policy == kLearnedPolicyName)
    budget.evaluations = defaultBudgetEvaluations(graph, numDevices);
  // No placement beats the bound: stop there.
  budget.targetMakespan = report.lowerBound;
  auto begin = std::chrono::steady_clock::now();
  std::optional<BudgetedPlacement> placed =
      placeWithinBudget(simulator, graph, numDevices, budget, error);
  if (!placed)
    return false;
  report.assignment = std::move(placed->assignment);
  if (placed->refinement) {
    for (const BudgetStart &start : placed->starts)
      report.starts.emplace_back(start.name, start.makespan);
    report.startChosen = placed->best;
    report.refinement = std::move(placed->refinement);
  }
  if (!fitMemory(options, graph, report, error))
    return false;
  report.seconds = secondsSince(begin);
  report.makespan = simulator.run(report.assignment);
  return true;
}

/// What the report says about the run before the mode's results.
PlacementReport startReport(const Options &options, const Graph &graph) {
  PlacementReport report;
  report.graphPath = options.graphPath;
  report.nodes = graph.numNodes();
  report.edges = graph.numEdges();
  report.devices = options.devices;
  if (options.assignmentPath.empty())
    report.policy = options.policy;
  report.seed = options.seed;
  report.samples = options.samples;
  report.modelPath = options.modelPath;
  report.assignmentPath = options.assignmentPath;
  report.lowerBound =
      makespanLowerBound(graph, static_cast<int32_t>(options.devices));
  return report;
}

/// The placement's peak memory per device (the simulator's accounting, on
/// the same reference transfer costs as the makespan) and each device's
/// capacity from --system. Only graphs that carry output sizes have these;
/// without a readable system the capacities are unknown (infinity). Devices
/// beyond the system's take its devices' capacities in turn, as they take
/// their costs.
void addMemoryFigures(const Options &options, const Graph &graph,
                      PlacementReport &report) {
  if (!graph.hasOutputBytes())
    return;
  const int32_t numDevices = static_cast<int32_t>(options.devices);
  report.memoryCapacity = memoryCapacities(options);
  SimulatorOptions memory;
  memory.trackMemory = true;
  Simulator simulator(graph, System::uniform(numDevices), memory);
  simulator.run(report.assignment);
  report.peakMemory = simulator.schedule().peakMemory;
}

/// --network: the --system as a System (its links and network), or nullopt
/// and `error`.
std::optional<System> networkSystem(const Options &options,
                                    std::string *error) {
  std::optional<SystemDescription> description =
      SystemDescription::load(options.load.system, error);
  if (!description)
    return std::nullopt;
  if (description->numDevices() != options.devices) {
    *error = "--network: --devices " + std::to_string(options.devices) +
             " differs from the " + std::to_string(description->numDevices()) +
             " devices of system '" + options.load.system + "'";
    return std::nullopt;
  }
  return description->toSystem();
}

/// --network: a simulator of `system`'s links and network
/// (docs/SystemDescription.md, "Nodes and networks"), or nullopt and
/// `error`.
std::optional<Simulator> networkSimulator(const System &system,
                                          const Graph &graph,
                                          std::string *error) {
  SimulatorOptions simulation;
  simulation.linkContention = true;
  simulation.transferModel = TransferModel::LinkBandwidth;
  std::optional<Simulator> simulator =
      Simulator::create(graph, system, simulation, error);
  if (!simulator)
    *error = "--network: " + *error;
  return simulator;
}

int runTool(const Options &options) {
  std::string error;
  std::optional<Graph> graph =
      doppler::loadPlacementGraph(options.graphPath, options.load, &error);
  if (!graph)
    return fail(error);
  if (options.memoryLimit > 0 &&
      (!graph->hasOutputBytes() ||
       std::none_of(graph->outputBytesList().begin(),
                    graph->outputBytesList().end(),
                    [](double bytes) { return bytes > 0; })))
    return fail("--memory-limit: " + options.graphPath +
                " carries no tensor sizes (a cost-only graph), so memory "
                "cannot be checked");
  const int32_t numDevices = static_cast<int32_t>(options.devices);
  PlacementReport report = startReport(options, *graph);
  Simulator simulator(*graph, numDevices);
  // --network: the placement's budget (its starts and refinement) is
  // judged by the network simulator, and on a system with nodes the
  // heuristics weigh each device pair's link (PolicyOptions::system); the
  // report gives both makespans.
  std::optional<System> system;
  std::optional<Simulator> network;
  if (options.network && (!(system = networkSystem(options, &error)) ||
                          !(network = networkSimulator(*system, *graph, &error))))
    return fail(error);
  const System *pairSystem = system && system->hasNetwork() ? &*system : nullptr;
  bool done =
      options.assignmentPath.empty()
          ? placeWithPolicy(options, *graph, network ? *network : simulator,
                            pairSystem, report, &error)
          : evaluateAssignment(options, *graph, simulator, report, &error);
  if (!done)
    return fail(error);
  std::optional<double> networkMakespan;
  if (network) {
    networkMakespan = network->run(report.assignment);
    report.makespan = simulator.run(report.assignment);
  }

  const Schedule &schedule = simulator.schedule();
  report.deviceBusy.assign(schedule.deviceBusy.begin(),
                           schedule.deviceBusy.end());
  report.deviceNodes.assign(numDevices, 0);
  for (DeviceId d : report.assignment)
    ++report.deviceNodes[d];
  addMemoryFigures(options, *graph, report);

  if (!options.outputPath.empty() &&
      !writeAssignmentFile(options.outputPath, report.assignment, ", ",
                           nullptr))
    return fail("cannot write '" + options.outputPath + "'");

  if (options.json) {
    std::string json = formatPlacementReportJson(report);
    // The report's last field is followed by its closing brace.
    if (networkMakespan)
      json.insert(json.rfind('}'), ", \"network_makespan\": " +
                                       doppler::formatShortest(*networkMakespan));
    std::printf("%s\n", json.c_str());
  } else {
    std::fputs(formatPlacementReportText(report).c_str(), stdout);
    if (networkMakespan)
      std::printf("network makespan: %s (system %s)\n",
                  doppler::formatShortest(*networkMakespan).c_str(),
                  options.load.system.c_str());
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv, kOverview);
  if (shortHelp) {
    cl::PrintHelpMessage(/*Hidden=*/false, /*Categorized=*/true);
    return 0;
  }
  Options options;
  std::string error;
  if (!readValues(options, &error) || !checkCombination(options, &error))
    return fail(error);
  return runTool(options);
}
