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

} // namespace

int main(int argc, char **argv) {
  std::string planPath, tracePath, outputsPath, order = "fifo";
  tools::BackendChoice backend;
  int64_t devices = 0, repeat = 3, seed = 0, idleSpin = -1;
  bool json = false;

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
      json = true;
    } else if (arg == "--devices" || arg == "--seed" || arg == "--repeat" ||
               arg == "--idle-spin-us") {
      int64_t number;
      if (!next(text) || !parseInt(text, number))
        return fail(arg + " needs an integer");
      (arg == "--devices"  ? devices
       : arg == "--seed"   ? seed
       : arg == "--repeat" ? repeat
                           : idleSpin) = number;
    } else if (arg == "--link-bandwidth" || arg == "--link-latency") {
      double number;
      if (!next(text) || !parseDouble(text, number) || number < 0)
        return fail(arg + " needs a non-negative number");
      (arg == "--link-bandwidth" ? backend.linkBandwidth
                                 : backend.linkLatency) = number;
    } else if (arg == "--backend") {
      if (!next(backend.name))
        return fail("--backend needs cpu or cuda");
    } else if (arg == "--order") {
      if (!next(order) || (order != "fifo" && order != "priority"))
        return fail("--order needs fifo or priority");
    } else if (arg == "--trace") {
      if (!next(tracePath))
        return fail("--trace needs a file name");
    } else if (arg == "--write-outputs") {
      if (!next(outputsPath))
        return fail("--write-outputs needs a file name");
    } else if (!arg.empty() && arg[0] == '-') {
      return fail("unknown option '" + arg + "'\n" + kUsage);
    } else if (planPath.empty()) {
      planPath = arg;
    } else {
      return fail("more than one plan file given ('" + planPath + "', '" + arg +
                  "')");
    }
  }
  if (planPath.empty())
    return fail(std::string("no plan file given\n") + kUsage);
  if (repeat < 1)
    return fail("--repeat must be >= 1");
  if (seed < 0)
    return fail("--seed must be >= 0");

  Result<Plan> plan = loadPlan(planPath);
  if (!plan)
    return fail(plan.message());
  int used = plan->graph.numDevicesUsed();
  if (devices == 0)
    devices = std::max(used, 1);
  if (devices < used)
    return fail("--devices " + std::to_string(devices) +
                " is too few: the plan uses device " +
                std::to_string(used - 1) +
                " (needs --devices >= " + std::to_string(used) + ")");
  backend.devices = static_cast<int>(devices);

  Result<std::unique_ptr<Backend>> created = tools::createBackend(backend);
  if (!created)
    return fail(created.message());
  ExecutorOptions options;
  options.order = order == "priority" ? ReadyOrder::Priority : ReadyOrder::Fifo;
  options.idleSpinMicroseconds = static_cast<int>(
      std::max<int64_t>(-1, std::min<int64_t>(idleSpin, 1000000)));
  Executor executor(std::move(*created), options);

  HostArguments arguments =
      makeSeededArguments(plan->arguments, static_cast<uint64_t>(seed));
  Result<Measurement> measured =
      measure(executor, plan->graph, bindArguments(*plan, arguments),
              static_cast<int>(repeat));
  if (!measured)
    return fail(measured.message());

  RunReport report;
  report.file = planPath;
  report.function = plan->function;
  report.backend = backend.name;
  report.devices = backend.devices;
  report.seed = static_cast<uint64_t>(seed);
  report.repeat = static_cast<int>(repeat);
  report.graph = &plan->graph;
  report.predicted = plan->predictedMakespan;
  report.measurement = std::move(*measured);
  Result<std::vector<HostTensor>> outputs =
      collectResults(*plan, report.measurement.median);
  if (!outputs)
    return fail(outputs.message());
  report.outputs = std::move(*outputs);
  if (!tracePath.empty()) {
    if (Status status =
            report.measurement.median.writeChromeTrace(plan->graph, tracePath);
        !status)
      return fail(status.message());
    report.trace = tracePath;
  }
  if (!outputsPath.empty())
    if (Status status = saveOutputs(report.outputs, outputsPath); !status)
      return fail(status.message());
  std::cout << (json ? report.json() : report.text());
  return 0;
}
