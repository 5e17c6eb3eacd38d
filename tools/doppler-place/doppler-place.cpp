//===- doppler-place.cpp - Place or evaluate a graph on D devices --------===//
//
// Places a graph in the reference text format with one of the heuristic
// policies (optionally refined by simulator-judged search), or evaluates a
// placement read from a file; reports the simulated makespan against the
// lower bound. Errors are one "error: ..." line on stderr and exit code 1.
//
//===----------------------------------------------------------------------===//

#include "Doppler/Placement/Analysis.h"
#include "Doppler/Placement/Graph.h"
#include "Doppler/Placement/Heuristics.h"
#include "Doppler/Placement/Learning/LearnedPolicy.h"
#include "Doppler/Placement/Search.h"
#include "Doppler/Placement/Simulator.h"
#include "Doppler/Target/GraphLoader.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

using namespace doppler::placement;

namespace {

constexpr const char *kUsage = R"(usage:
  doppler-place GRAPH --devices D [--policy NAME] [--seed S]
                [--samples K] [--model FILE] [--refine-seconds T] [--refine-evaluations N]
                [--estimate earliest|load] [--json] [-o FILE]
  doppler-place GRAPH --devices D --assignment FILE [--repeat N] [--json]
                [-o FILE]

Places GRAPH on D devices, or evaluates the placement in FILE, and reports
the simulated makespan (reference semantics) against the lower bound
max(compute-only critical path, total compute / D). GRAPH is a reference
text-format file, or an .mlir file: one node per op of a function (ops
without costs are costed first; doppler.transfer ops are the edges they
implement), node ids in op order.

options:
  --devices D              number of devices (>= 1); required
  --policy NAME            critical-path (default), doppler (the learned
                           dual policy; loads LibTorch), join-aware, heft,
                           round-robin, random, single,
                           critical-path-reference
  --seed S                 seed of random, critical-path-reference, the
                           learned policy's sampling and the refinement
                           (default 0)
  --samples K              doppler: keep the best of K rollouts (the greedy
                           one and K-1 sampled) by the simulator (default 0:
                           greedy only)
  --model FILE             doppler: a model from doppler-train (default: the
                           model embedded in libDopplerLearning.so)
  --refine-seconds T       improve the placement by simulated annealing for
                           T seconds
  --refine-evaluations N   ... or for N simulator runs (deterministic for a
                           seed); with both, whichever ends first
  --estimate E             start estimate of critical-path: earliest
                           (default) or load (the reference's)
  --assignment FILE        evaluate FILE: one device id per node, in node-id
                           order, separated by commas and/or whitespace
  --repeat N               with --assignment: evaluate N times and report
                           seconds_per_eval
  --json                   print a JSON object instead of text
  -o FILE                  write the assignment to FILE (the --assignment
                           format)
  --function NAME          .mlir: the function to place (default: the first
                           one with a body)
  --system S               .mlir: system preset or JSON file used to cost
                           ops that have no costs (default h100x4)
  --help                   print this text
)";

// Far beyond any real system; keeps per-device tables (devices x nodes in
// the simulator) from exhausting memory on a typo.
constexpr int64_t kMaxDevices = 4096;

struct Options {
  std::string graphPath;
  int64_t devices = 0;
  bool devicesGiven = false;
  std::string policy = "critical-path";
  bool policyGiven = false;
  int64_t samples = 0;
  bool samplesGiven = false;
  std::string modelPath;
  uint64_t seed = 0;
  double refineSeconds = 0;
  int64_t refineEvaluations = 0;
  StartEstimate estimate = StartEstimate::EarliestStart;
  bool estimateGiven = false;
  std::string assignmentPath;
  int64_t repeat = 0;
  bool json = false;
  std::string outputPath;
  bool help = false;
  doppler::GraphLoadOptions load;
};

int fail(const std::string &message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  return 1;
}

/// A whole decimal integer in [minimum, maximum].
bool parseInteger(const std::string &flag, const std::string &text,
                  int64_t minimum, int64_t maximum, int64_t *value,
                  std::string *error) {
  const char *begin = text.c_str();
  char *end = nullptr;
  errno = 0;
  long long parsed = std::strtoll(begin, &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE ||
      std::isspace(static_cast<unsigned char>(text[0]))) {
    *error = flag + " expects an integer, got '" + text + "'";
    return false;
  }
  if (parsed < minimum || parsed > maximum) {
    *error = flag + " must be at least " + std::to_string(minimum) +
             (maximum < std::numeric_limits<int64_t>::max()
                  ? " and at most " + std::to_string(maximum)
                  : std::string()) +
             ", got " + text;
    return false;
  }
  *value = parsed;
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

bool parseSeconds(const std::string &text, double *value,
                  std::string *error) {
  char *end = nullptr;
  errno = 0;
  double parsed = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno == ERANGE ||
      !std::isfinite(parsed) || parsed < 0 ||
      std::isspace(static_cast<unsigned char>(text[0]))) {
    *error = "--refine-seconds expects a non-negative number of seconds, "
             "got '" +
             text + "'";
    return false;
  }
  *value = parsed;
  return true;
}

bool parseArguments(int argc, char **argv, Options &options,
                    std::string *error) {
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      options.help = true;
      continue;
    }
    if (arg == "--json") {
      options.json = true;
      continue;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      positional.push_back(arg);
      continue;
    }
    // Flags with a value: "--flag value" or "--flag=value".
    std::string flag = arg, value;
    bool inlineValue = false;
    if (size_t eq = arg.find('='); eq != std::string::npos &&
                                   arg.compare(0, 2, "--") == 0) {
      flag = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      inlineValue = true;
    }
    static const char *const kValueFlags[] = {
        "--devices",    "--policy",   "--seed",
        "--refine-seconds", "--refine-evaluations", "--estimate",
        "--assignment", "--repeat",   "-o", "--function", "--system",
        "--samples",    "--model"};
    bool known = false;
    for (const char *name : kValueFlags)
      known |= flag == name;
    if (!known) {
      *error = "unknown option '" + arg + "' (see --help)";
      return false;
    }
    if (!inlineValue) {
      if (i + 1 >= argc) {
        *error = "option '" + flag + "' needs a value";
        return false;
      }
      value = argv[++i];
    }
    if (flag == "--devices") {
      if (!parseInteger(flag, value, 1, kMaxDevices, &options.devices, error))
        return false;
      options.devicesGiven = true;
    } else if (flag == "--policy") {
      options.policy = value;
      options.policyGiven = true;
    } else if (flag == "--samples") {
      if (!parseInteger(flag, value, 0, std::numeric_limits<int32_t>::max(),
                        &options.samples, error))
        return false;
      options.samplesGiven = true;
    } else if (flag == "--model") {
      if (value.empty()) {
        *error = "--model expects a file name";
        return false;
      }
      options.modelPath = value;
    } else if (flag == "--seed") {
      if (!parseSeed(value, &options.seed, error))
        return false;
    } else if (flag == "--refine-seconds") {
      if (!parseSeconds(value, &options.refineSeconds, error))
        return false;
    } else if (flag == "--refine-evaluations") {
      if (!parseInteger(flag, value, 1, std::numeric_limits<int64_t>::max(),
                        &options.refineEvaluations, error))
        return false;
    } else if (flag == "--estimate") {
      if (value == "earliest") {
        options.estimate = StartEstimate::EarliestStart;
      } else if (value == "load") {
        options.estimate = StartEstimate::DeviceLoad;
      } else {
        *error = "--estimate must be 'earliest' or 'load', got '" + value +
                 "'";
        return false;
      }
      options.estimateGiven = true;
    } else if (flag == "--assignment") {
      options.assignmentPath = value;
    } else if (flag == "--repeat") {
      if (!parseInteger(flag, value, 1, std::numeric_limits<int32_t>::max(),
                        &options.repeat, error))
        return false;
    } else if (flag == "-o") {
      options.outputPath = value;
    } else if (flag == "--function") {
      options.load.function = value;
    } else if (flag == "--system") {
      options.load.system = value;
    }
  }
  if (options.help)
    return true;
  if (positional.empty()) {
    *error = "no graph file given (see --help)";
    return false;
  }
  if (positional.size() > 1) {
    *error = "more than one graph file given: '" + positional[0] + "', '" +
             positional[1] + "'";
    return false;
  }
  options.graphPath = positional[0];
  if (!options.devicesGiven) {
    *error = "--devices is required";
    return false;
  }
  const bool evaluating = !options.assignmentPath.empty();
  if (evaluating && (options.policyGiven || options.refineSeconds > 0 ||
                     options.refineEvaluations > 0 || options.estimateGiven)) {
    *error = "--assignment evaluates a given placement: it cannot be combined "
             "with --policy, --estimate or --refine-*";
    return false;
  }
  const bool learned = options.policy == kLearnedPolicyName;
  if ((options.samplesGiven || !options.modelPath.empty()) && !learned) {
    *error = "--samples and --model apply to --policy doppler only";
    return false;
  }
  if (learned && options.estimateGiven) {
    *error = "--estimate applies to the heuristics, not to --policy doppler";
    return false;
  }
  if (!evaluating && options.repeat > 0) {
    *error = "--repeat needs --assignment";
    return false;
  }
  return true;
}

bool readFile(const std::string &path, std::string *text) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  std::ostringstream buffer;
  buffer << in.rdbuf();
  *text = buffer.str();
  return !in.bad();
}

/// Device ids separated by commas and/or whitespace (a trailing comma is
/// fine; an empty entry between two commas is not).
std::optional<std::vector<DeviceId>>
parseAssignmentText(const std::string &text, const std::string &name,
                    std::string *error) {
  std::vector<DeviceId> ids;
  int line = 1;
  bool entryOpen = false; // a comma has been seen since the last id
  bool sawId = false;
  size_t i = 0;
  auto where = [&] { return name + ":" + std::to_string(line) + ": "; };
  while (i < text.size()) {
    char ch = text[i];
    if (ch == '\n') {
      ++line;
      ++i;
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(ch))) {
      ++i;
      continue;
    }
    if (ch == ',') {
      if (!sawId || entryOpen) {
        *error = where() + "empty entry before ','";
        return std::nullopt;
      }
      entryOpen = true;
      ++i;
      continue;
    }
    size_t tokenEnd = i;
    while (tokenEnd < text.size() && text[tokenEnd] != ',' &&
           !std::isspace(static_cast<unsigned char>(text[tokenEnd])))
      ++tokenEnd;
    std::string token = text.substr(i, tokenEnd - i);
    bool digits = true;
    for (char c : token)
      digits &= std::isdigit(static_cast<unsigned char>(c)) != 0;
    if (!digits) {
      *error = where() + "expected a device id (a non-negative integer), "
                         "found '" +
               token + "'";
      return std::nullopt;
    }
    if (token.size() > 9) {
      *error = where() + "device id " + token + " is out of range";
      return std::nullopt;
    }
    ids.push_back(static_cast<DeviceId>(std::strtol(token.c_str(), nullptr,
                                                    10)));
    sawId = true;
    entryOpen = false;
    i = tokenEnd;
  }
  return ids;
}

/// Integral values print as JSON integers (exact up to 2^53, which covers
/// every makespan of integer costs up to ~1e14 and beyond); others with the
/// shortest representation that round-trips.
nlohmann::ordered_json exactNumber(double value) {
  if (!std::isfinite(value))
    return nullptr;
  if (value == std::floor(value) && std::fabs(value) < 0x1.0p53)
    return static_cast<int64_t>(value);
  return value;
}

std::string formatNumber(double value) {
  if (value == std::floor(value) && std::fabs(value) < 0x1.0p53) {
    char buffer[32];
    std::snprintf(buffer, sizeof(buffer), "%lld",
                  static_cast<long long>(value));
    return buffer;
  }
  char buffer[40];
  std::snprintf(buffer, sizeof(buffer), "%.17g", value);
  return buffer;
}

bool writeAssignment(const std::string &path,
                     const std::vector<DeviceId> &assignment) {
  std::ofstream out(path);
  if (!out)
    return false;
  for (size_t i = 0; i < assignment.size(); ++i)
    out << (i ? ", " : "") << assignment[i];
  out << "\n";
  out.flush();
  return static_cast<bool>(out);
}

double secondsSince(std::chrono::steady_clock::time_point begin) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                       begin)
      .count();
}

/// What both modes report.
struct Report {
  std::string policy; // empty when evaluating a file
  std::vector<DeviceId> assignment;
  double makespan = 0;
  double lowerBound = 0;
  double seconds = 0;
  std::optional<double> secondsPerEval;
  int64_t repeat = 0;
  std::optional<SearchResult> refinement;
  std::vector<double> deviceBusy;
  std::vector<int32_t> deviceNodes;
};

void printJson(const Options &options, const Graph &graph,
               const Report &report) {
  // Insertion order: the headline numbers first.
  nlohmann::ordered_json out;
  out["graph"] = options.graphPath;
  out["nodes"] = graph.numNodes();
  out["edges"] = graph.numEdges();
  out["devices"] = options.devices;
  if (!report.policy.empty()) {
    out["policy"] = report.policy;
    out["seed"] = options.seed;
    if (report.policy == kLearnedPolicyName) {
      out["samples"] = options.samples;
      out["model"] = options.modelPath.empty() ? std::string("embedded")
                                               : options.modelPath;
    }
  } else {
    out["policy"] = nullptr;
    out["assignment_file"] = options.assignmentPath;
  }
  out["makespan"] = exactNumber(report.makespan);
  out["lower_bound"] = exactNumber(report.lowerBound);
  out["ratio_to_lower_bound"] =
      report.lowerBound > 0 ? report.makespan / report.lowerBound : 1.0;
  out["seconds"] = report.seconds;
  if (report.secondsPerEval) {
    out["repeat"] = report.repeat;
    out["seconds_per_eval"] = *report.secondsPerEval;
  }
  if (report.refinement) {
    const SearchResult &refined = *report.refinement;
    out["refine"] = {{"initial_makespan", exactNumber(refined.initialMakespan)},
                     {"evaluations", refined.evaluations},
                     {"accepted_moves", refined.acceptedMoves},
                     {"improvements", refined.improvements},
                     {"seconds", refined.seconds}};
  }
  nlohmann::ordered_json busy = nlohmann::ordered_json::array();
  for (double value : report.deviceBusy)
    busy.push_back(exactNumber(value));
  out["device_busy"] = busy;
  out["device_nodes"] = report.deviceNodes;
  out["assignment"] = report.assignment;
  // One line (assignments are long); replace: never throw (or abort, as
  // this target has no exceptions) on odd bytes in a file name.
  std::cout << out.dump(-1, ' ', false,
                        nlohmann::ordered_json::error_handler_t::replace)
            << "\n";
}

void printText(const Options &options, const Graph &graph,
               const Report &report) {
  std::printf("graph:       %s (%d nodes, %d edges)\n",
              options.graphPath.c_str(), graph.numNodes(), graph.numEdges());
  if (!report.policy.empty())
    std::printf("policy:      %s\n", report.policy.c_str());
  else
    std::printf("assignment:  %s\n", options.assignmentPath.c_str());
  if (report.refinement)
    std::printf("refined:     %s -> %s (%lld evaluations, %.3f s)\n",
                formatNumber(report.refinement->initialMakespan).c_str(),
                formatNumber(report.makespan).c_str(),
                static_cast<long long>(report.refinement->evaluations),
                report.refinement->seconds);
  std::printf("devices:     %lld\n", static_cast<long long>(options.devices));
  std::printf("makespan:    %s\n", formatNumber(report.makespan).c_str());
  std::printf("lower bound: %s (makespan / bound = %.4f)\n",
              formatNumber(report.lowerBound).c_str(),
              report.lowerBound > 0 ? report.makespan / report.lowerBound
                                    : 1.0);
  if (report.secondsPerEval)
    std::printf("evaluation:  %.3g s per run (%lld runs)\n",
                *report.secondsPerEval, static_cast<long long>(report.repeat));
  else
    std::printf("time:        %.3g s\n", report.seconds);
  std::printf("device  nodes  busy                  utilisation\n");
  for (size_t d = 0; d < report.deviceBusy.size(); ++d)
    std::printf("%6zu  %5d  %-20s  %5.1f%%\n", d, report.deviceNodes[d],
                formatNumber(report.deviceBusy[d]).c_str(),
                report.makespan > 0
                    ? 100.0 * report.deviceBusy[d] / report.makespan
                    : 0.0);
}

int runTool(int argc, char **argv) {
  Options options;
  std::string error;
  if (!parseArguments(argc, argv, options, &error))
    return fail(error);
  if (options.help) {
    std::fputs(kUsage, stdout);
    return 0;
  }

  std::optional<Graph> graph =
      doppler::loadPlacementGraph(options.graphPath, options.load, &error);
  if (!graph)
    return fail(error);
  const int32_t numDevices = static_cast<int32_t>(options.devices);

  Report report;
  report.lowerBound = makespanLowerBound(*graph, numDevices);
  Simulator simulator(*graph, numDevices);

  if (!options.assignmentPath.empty()) {
    std::string text;
    if (!readFile(options.assignmentPath, &text))
      return fail("cannot read assignment file '" + options.assignmentPath +
                  "'");
    std::optional<std::vector<DeviceId>> ids =
        parseAssignmentText(text, options.assignmentPath, &error);
    if (!ids)
      return fail(error);
    if (static_cast<int64_t>(ids->size()) != graph->numNodes())
      return fail(options.assignmentPath + ": " + std::to_string(ids->size()) +
                  " device ids for a graph of " +
                  std::to_string(graph->numNodes()) + " nodes");
    for (size_t v = 0; v < ids->size(); ++v)
      if ((*ids)[v] >= numDevices)
        return fail(options.assignmentPath + ": node " + std::to_string(v) +
                    ": device " + std::to_string((*ids)[v]) +
                    " is out of range [0, " + std::to_string(numDevices) +
                    ")");
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
  } else {
    PolicyOptions policyOptions;
    policyOptions.seed = options.seed;
    policyOptions.estimate = options.estimate;
    LearnedPolicyOptions learnedOptions;
    learnedOptions.modelPath = options.modelPath;
    learnedOptions.samples = static_cast<int32_t>(options.samples);
    report.policy = options.policy;
    auto begin = std::chrono::steady_clock::now();
    std::optional<std::vector<DeviceId>> placed =
        placeWithNamedPolicy(options.policy, *graph, numDevices, policyOptions,
                             learnedOptions, &error);
    if (!placed)
      return fail(error);
    report.assignment = std::move(*placed);
    if (options.refineSeconds > 0 || options.refineEvaluations > 0) {
      SearchOptions search;
      search.seed = options.seed;
      search.timeBudgetSeconds = options.refineSeconds;
      search.maxEvaluations = options.refineEvaluations;
      // No placement beats the bound: stop there.
      search.targetMakespan = report.lowerBound;
      std::optional<SearchResult> refined =
          refinePlacement(simulator, report.assignment, search, &error);
      if (!refined)
        return fail(error);
      report.assignment = refined->assignment;
      report.refinement = std::move(refined);
    }
    report.seconds = secondsSince(begin);
    report.makespan = simulator.run(report.assignment);
  }

  const Schedule &schedule = simulator.schedule();
  report.deviceBusy.assign(schedule.deviceBusy.begin(),
                           schedule.deviceBusy.end());
  report.deviceNodes.assign(numDevices, 0);
  for (DeviceId d : report.assignment)
    ++report.deviceNodes[d];

  if (!options.outputPath.empty() &&
      !writeAssignment(options.outputPath, report.assignment))
    return fail("cannot write '" + options.outputPath + "'");

  if (options.json)
    printJson(options, *graph, report);
  else
    printText(options, *graph, report);
  return 0;
}

} // namespace

int main(int argc, char **argv) { return runTool(argc, argv); }
