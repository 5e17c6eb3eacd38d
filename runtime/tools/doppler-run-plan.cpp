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
//                    [--link-latency L]
//                    [--order fifo|priority|program|planned]
//                    [--trace FILE] [--write-outputs FILE] [--json]
//                    [--idle-spin-us N] [--memory-limit BYTES]
//                    [--memory-policy fail|wait] [--inject-fault KIND:TASK]
//                    [--task-timeout SECONDS]
//
// Under mpirun (`mpirun -np R doppler-run-plan PLAN.json`) each rank runs
// the devices of its node and rank 0 reports (MpiRun.h; runtime/README.md,
// "Across processes (MPI)").
//
// Exit status: 0 on success, 1 on any error (one line on stderr).
//
//===----------------------------------------------------------------------===//

#include "ArgParser.h"
#include "MpiRun.h"
#include "RunSupport.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>

using namespace doppler::runtime;

namespace {

/// Runs across processes when started by mpirun.
tools::MpiRun mpi;

int fail(const std::string &message) {
  mpi.failIfActive("doppler-run-plan", message); // ends every rank
  std::cerr << "doppler-run-plan: error: " << message << "\n";
  return 1;
}

struct Options {
  std::string planPath, tracePath, outputsPath, order = "fifo", fault,
      memoryPolicy = "fail";
  tools::BackendChoice backend;
  int64_t devices = 0, repeat = 3, seed = 0, idleSpin = -1, memoryLimit = 0;
  double taskTimeout = -1;
  bool json = false;
};

/// Reads the command line into `opts`; the exit status when main should
/// stop here (--help, or an error already reported).
std::optional<int> parseArguments(int argc, char **argv, Options &opts) {
  using namespace tools;
  ArgParser parser(
      "doppler-run-plan",
      {
          integerOption({"--devices"}, &opts.devices, "D",
                        "devices to run on (default: the plan's \"devices\")",
                        "needs a positive integer", 1),
          integerOption({"--seed"}, &opts.seed, "S",
                        "seed of the random inputs (default 0)",
                        "needs an integer"),
          integerOption({"--repeat"}, &opts.repeat, "N",
                        "timed runs after a warm-up (default 3)",
                        "needs an integer"),
          textOption({"--backend"}, &opts.backend.name, "cpu|cuda",
                     "the backend (default cpu)", "needs cpu or cuda"),
          numberOption({"--link-bandwidth"}, &opts.backend.linkBandwidth, "B",
                       "CPU link model: bytes/s (default 0: off)",
                       "needs a non-negative number", 0),
          numberOption({"--link-latency"}, &opts.backend.linkLatency, "L",
                       "CPU link model: seconds (default 0: off)",
                       "needs a non-negative number", 0),
          textOption({"--order"}, &opts.order,
                     "fifo|priority|program|planned",
                     "ready-task order (default fifo; program: each "
                     "device runs its tasks in id order; planned: in "
                     "priority order, strictly)",
                     "needs fifo, priority, program or planned",
                     {"fifo", "priority", "program", "planned"}),
          textOption({"--large-copies"}, &opts.backend.largeCopies,
                     "auto|copy-worker|idle-producer|compute-workers",
                     "CPU: who makes copies over 64 KiB (default auto: the "
                     "producer when idle, where no core is spare)",
                     "needs auto, copy-worker, idle-producer or "
                     "compute-workers",
                     {"auto", "copy-worker", "idle-producer",
                      "compute-workers"}),
          textOption({"--trace"}, &opts.tracePath, "FILE",
                     "write a Chrome trace of the median run",
                     "needs a file name"),
          textOption({"--write-outputs"}, &opts.outputsPath, "FILE",
                     "write the outputs of the median run",
                     "needs a file name"),
          flagOption({"--json"}, &opts.json, "print the report as JSON"),
          integerOption({"--idle-spin-us"}, &opts.idleSpin, "N",
                        "microseconds idle workers poll (default -1: auto)",
                        "needs an integer"),
          integerOption({"--memory-limit"}, &opts.memoryLimit, "BYTES",
                        "bytes of live buffers allowed per device (default: "
                        "unlimited; 0 is refused, not read as unlimited)",
                        "needs a positive integer", 1),
          textOption({"--memory-policy"}, &opts.memoryPolicy, "fail|wait",
                     "a task whose output does not fit under the limit "
                     "fails the run, or waits for memory to be freed "
                     "(default fail)",
                     "needs fail or wait", {"fail", "wait"}),
          textOption({"--inject-fault"}, &opts.fault, "KIND:TASK",
                     "testing: make one task fail (KIND kernel, alloc, "
                     "transfer or hang; TASK a task id or #N, the Nth of "
                     "that kind)",
                     "needs KIND:TASK"),
          numberOption({"--task-timeout"}, &opts.taskTimeout, "SECONDS",
                       "watchdog: a task running longer ends the run with "
                       "an error naming it (default: 30 s plus its work at "
                       "a pessimistic rate; 0: off)",
                       "needs a non-negative number", 0),
      });
  parser.positionalName = "PLAN.json";
  parser.positionalWhat = "plan file";
  parser.positional = &opts.planPath;
  parser.acceptEqualsForm = true;
  if (std::optional<int> exitCode = parser.parse(argc, argv))
    return exitCode;
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
  report.memoryLimits.assign(static_cast<size_t>(opts.backend.devices),
                             static_cast<uint64_t>(opts.memoryLimit));
  report.measurement = std::move(measurement);
  if (mpi.rank() != 0)
    return 0; // Rank 0 has every rank's figures and outputs.
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

int runPlan(int argc, char **argv) {
  Options opts;
  if (std::optional<int> status = parseArguments(argc, argv, opts))
    return *status;

  Result<Plan> plan = loadPlan(opts.planPath);
  if (!plan)
    return fail(plan.message());
  int used = plan->graph.numDevicesUsed();
  if (opts.devices == 0) // Not given (0 itself is refused when parsing).
    opts.devices = plan->devices.value_or(std::max(used, 1));
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
  // Both names were checked by the parser.
  options.order = parseReadyOrder(opts.order).value();
  options.memoryPolicy = parseMemoryPolicy(opts.memoryPolicy).value();
  options.idleSpinMicroseconds = static_cast<int>(
      std::max<int64_t>(-1, std::min<int64_t>(opts.idleSpin, 1000000)));
  options.memoryLimits.assign(static_cast<size_t>(opts.devices),
                              static_cast<uint64_t>(opts.memoryLimit));
  options.taskTimeoutSeconds = opts.taskTimeout;
  if (!opts.fault.empty()) {
    Result<FaultInjection> fault = parseFaultInjection(opts.fault);
    if (!fault)
      return fail("--inject-fault: " + fault.message());
    options.fault = *fault;
  }
  if (Status status = mpi.setUp(*plan, opts.backend.devices,
                                opts.backend.name, options);
      !status)
    return fail(status.message());
  Executor executor(std::move(*created), options);

  Result<HostArguments> arguments =
      makeSeededArguments(*plan, static_cast<uint64_t>(opts.seed));
  if (!arguments)
    return fail(arguments.message());
  if (Status same = mpi.agreeArguments(*arguments); !same)
    return fail(same.message());
  Result<Measurement> measured =
      measure(executor, plan->graph, bindArguments(*plan, *arguments),
              static_cast<int>(opts.repeat));
  if (!measured)
    return fail(measured.message());
  mpi.runsDone();
  return report(opts, *plan, std::move(*measured));
}

} // namespace

int main(int argc, char **argv) {
  if (Status started = mpi.start(&argc, &argv); !started)
    return fail(started.message());
  return mpi.finishWith("doppler-run-plan", runPlan(argc, argv));
}
