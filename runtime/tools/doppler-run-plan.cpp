//===- doppler-run-plan.cpp - Run an exported plan without MLIR -----------===//
//
// Runs a plan written by `doppler-run --export-plan` on seeded random inputs
// (the values doppler-run and doppler-interpret use for the same seed) and
// prints the measured makespan, per-device utilisation and a checksum of
// every output. Links only the runtime, so it runs where MLIR is not
// installed (e.g. a GPU box).
//
//   doppler-run-plan PLAN.json [--devices D] [--seed S] [--repeat N]
//                    [--backend cpu|cuda] [--link-bandwidth B]
//                    [--link-latency L] [--order fifo|priority]
//                    [--trace FILE] [--write-outputs FILE] [--json]
//                    [--idle-spin-us N]
//
// Exit status: 0 on success, 1 on any error (one line on stderr).
//
//===----------------------------------------------------------------------===//

#include "RunSupport.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>

using namespace doppler::runtime;

namespace {

constexpr const char *kUsage =
    "usage: doppler-run-plan PLAN.json [--devices D] [--seed S] [--repeat N]\n"
    "                        [--backend cpu|cuda] [--link-bandwidth B]\n"
    "                        [--link-latency L] [--order fifo|priority]\n"
    "                        [--trace FILE] [--write-outputs FILE] [--json]\n"
    "                        [--idle-spin-us N]\n";

int fail(const std::string &message) {
  std::cerr << "doppler-run-plan: error: " << message << "\n";
  return 1;
}

bool parseInt(const std::string &text, int64_t &value) {
  if (text.empty())
    return false;
  char *end = nullptr;
  long long parsed = std::strtoll(text.c_str(), &end, 10);
  if (*end != '\0')
    return false;
  value = parsed;
  return true;
}

bool parseDouble(const std::string &text, double &value) {
  if (text.empty())
    return false;
  char *end = nullptr;
  value = std::strtod(text.c_str(), &end);
  return *end == '\0' && std::isfinite(value);
}

struct Options {
  std::string planPath, tracePath, outputsPath, order = "fifo";
  tools::BackendChoice backend;
  int64_t devices = 0, repeat = 3, seed = 0, idleSpin = -1;
  bool json = false;
};

/// Reads the command line into `opts`; the exit status when main should
/// stop here (--help, or an error already reported).
std::optional<int> parseArguments(int argc, char **argv, Options &opts) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    // Accept both "--flag value" and "--flag=value".
    std::string value;
    bool hasValue = false;
    if (size_t eq = arg.find('=');
        arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      hasValue = true;
    }
    auto next = [&](std::string &out) {
      if (hasValue) {
        out = value;
        return true;
      }
      if (i + 1 >= argc)
        return false;
      out = argv[++i];
      return true;
    };
    std::string text;
    if (arg == "-h" || arg == "--help") {
      std::cout << kUsage;
      return 0;
    } else if (arg == "--json") {
      opts.json = true;
    } else if (arg == "--devices" || arg == "--seed" || arg == "--repeat" ||
               arg == "--idle-spin-us") {
      int64_t number;
      if (!next(text) || !parseInt(text, number))
        return fail(arg + " needs an integer");
      (arg == "--devices"  ? opts.devices
       : arg == "--seed"   ? opts.seed
       : arg == "--repeat" ? opts.repeat
                           : opts.idleSpin) = number;
    } else if (arg == "--link-bandwidth" || arg == "--link-latency") {
      double number;
      if (!next(text) || !parseDouble(text, number) || number < 0)
        return fail(arg + " needs a non-negative number");
      (arg == "--link-bandwidth" ? opts.backend.linkBandwidth
                                 : opts.backend.linkLatency) = number;
    } else if (arg == "--backend") {
      if (!next(opts.backend.name))
        return fail("--backend needs cpu or cuda");
    } else if (arg == "--order") {
      if (!next(opts.order) ||
          (opts.order != "fifo" && opts.order != "priority"))
        return fail("--order needs fifo or priority");
    } else if (arg == "--trace") {
      if (!next(opts.tracePath))
        return fail("--trace needs a file name");
    } else if (arg == "--write-outputs") {
      if (!next(opts.outputsPath))
        return fail("--write-outputs needs a file name");
    } else if (!arg.empty() && arg[0] == '-') {
      return fail("unknown option '" + arg + "'\n" + kUsage);
    } else if (opts.planPath.empty()) {
      opts.planPath = arg;
    } else {
      return fail("more than one plan file given ('" + opts.planPath + "', '" +
                  arg + "')");
    }
  }
  if (opts.planPath.empty())
    return fail(std::string("no plan file given\n") + kUsage);
  if (opts.repeat < 1)
    return fail("--repeat must be >= 1");
  if (opts.seed < 0)
    return fail("--seed must be >= 0");
  return std::nullopt;
}

/// Builds the run's report (outputs collected from the median run) and
/// writes the trace and outputs files when asked; 0, or 1 on an error.
int report(const Options &opts, const Plan &plan, Measurement measurement) {
  RunReport report;
  report.file = opts.planPath;
  report.function = plan.function;
  report.backend = opts.backend.name;
  report.devices = opts.backend.devices;
  report.seed = static_cast<uint64_t>(opts.seed);
  report.repeat = static_cast<int>(opts.repeat);
  report.graph = &plan.graph;
  report.predicted = plan.predictedMakespan;
  report.measurement = std::move(measurement);
  Result<std::vector<HostTensor>> outputs =
      collectResults(plan, report.measurement.median);
  if (!outputs)
    return fail(outputs.message());
  report.outputs = std::move(*outputs);
  if (!opts.tracePath.empty()) {
    if (Status status = report.measurement.median.writeChromeTrace(
            plan.graph, opts.tracePath);
        !status)
      return fail(status.message());
    report.trace = opts.tracePath;
  }
  if (!opts.outputsPath.empty())
    if (Status status = saveOutputs(report.outputs, opts.outputsPath); !status)
      return fail(status.message());
  std::cout << (opts.json ? report.json() : report.text());
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  Options opts;
  if (std::optional<int> status = parseArguments(argc, argv, opts))
    return *status;

  Result<Plan> plan = loadPlan(opts.planPath);
  if (!plan)
    return fail(plan.message());
  int used = plan->graph.numDevicesUsed();
  if (opts.devices == 0)
    opts.devices = std::max(used, 1);
  if (opts.devices < used)
    return fail("--devices " + std::to_string(opts.devices) +
                " is too few: the plan uses device " +
                std::to_string(used - 1) +
                " (needs --devices >= " + std::to_string(used) + ")");
  opts.backend.devices = static_cast<int>(opts.devices);

  Result<std::unique_ptr<Backend>> created = tools::createBackend(opts.backend);
  if (!created)
    return fail(created.message());
  ExecutorOptions options;
  options.order =
      opts.order == "priority" ? ReadyOrder::Priority : ReadyOrder::Fifo;
  options.idleSpinMicroseconds = static_cast<int>(
      std::max<int64_t>(-1, std::min<int64_t>(opts.idleSpin, 1000000)));
  Executor executor(std::move(*created), options);

  HostArguments arguments =
      makeSeededArguments(plan->arguments, static_cast<uint64_t>(opts.seed));
  Result<Measurement> measured =
      measure(executor, plan->graph, bindArguments(*plan, arguments),
              static_cast<int>(opts.repeat));
  if (!measured)
    return fail(measured.message());
  return report(opts, *plan, std::move(*measured));
}
