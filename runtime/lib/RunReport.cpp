//===- RunReport.cpp - Timing runs and reporting them ---------------------===//

#include "doppler/runtime/Plan.h"

#include "Doppler/Support/NumberFormat.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace doppler::runtime {

using nlohmann::json;

//===----------------------------------------------------------------------===//
// Timing and reports
//===----------------------------------------------------------------------===//

Result<Measurement> measure(Executor &executor, const TaskGraph &graph,
                            const InputBindings &bindings, int repeat) {
  Result<RunResult> warmUp = executor.run(graph, bindings);
  if (!warmUp)
    return warmUp.status();
  std::vector<RunResult> runs;
  for (int i = 0; i < repeat; ++i) {
    Result<RunResult> run = executor.run(graph, bindings);
    if (!run)
      return run.status();
    runs.push_back(std::move(*run));
  }
  if (runs.empty())
    return Status::failure("no timed runs (repeat must be >= 1)");
  Measurement result;
  std::vector<size_t> order(runs.size());
  for (size_t i = 0; i < runs.size(); ++i) {
    order[i] = i;
    result.makespans.push_back(runs[i].makespan);
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return runs[a].makespan < runs[b].makespan;
  });
  result.median = std::move(runs[order[(order.size() - 1) / 2]]);
  return result;
}

namespace {

/// JSON has no NaN or infinity: those become strings.
json jsonNumber(double value) {
  if (std::isfinite(value))
    return value;
  if (std::isnan(value))
    return "nan";
  return value > 0 ? "inf" : "-inf";
}

std::map<std::string, int64_t> tasksByKind(const TaskGraph &graph) {
  std::map<std::string, int64_t> counts;
  for (ValueId id = 0; id < graph.size(); ++id)
    if (graph.task(id).kind != TaskKind::Input)
      ++counts[std::string(taskKindName(graph.task(id).kind))];
  return counts;
}

int64_t numTasks(const TaskGraph &graph) {
  return graph.size() - static_cast<int64_t>(graph.inputs().size());
}

} // namespace

std::string RunReport::json() const {
  nlohmann::json perDevice = nlohmann::json::array();
  const RunResult &run = measurement.median;
  for (size_t d = 0; d < run.devices.size(); ++d) {
    const DeviceStats &stats = run.devices[d];
    perDevice.push_back({{"device", d},
                         {"utilization", jsonNumber(stats.utilization)},
                         {"compute_busy_s", stats.computeBusy},
                         {"copy_busy_s", stats.copyBusy},
                         {"compute_tasks", stats.computeTasks},
                         {"copy_tasks", stats.copyTasks},
                         {"peak_bytes", stats.peakBytes},
                         {"memory_limit_bytes", nullptr}});
    if (uint64_t limit = memoryLimitOf(d))
      perDevice.back()["memory_limit_bytes"] = limit;
  }
  nlohmann::json outputsJson = nlohmann::json::array();
  for (size_t i = 0; i < outputs.size(); ++i) {
    Checksum sum = checksum(outputs[i]);
    nlohmann::json entry = {
        {"index", i},
        {"type", tensorTypeString(outputs[i].type, outputs[i].shape)},
        {"sum", jsonNumber(sum.sum)},
        {"l2", jsonNumber(sum.l2)}};
    if (i < errors.size())
      entry["rel_error"] = jsonNumber(errors[i]);
    outputsJson.push_back(std::move(entry));
  }
  nlohmann::json root = {{"file", file},
                         {"function", function},
                         {"backend", backend},
                         {"devices", devices},
                         {"seed", seed},
                         {"repeat", repeat},
                         {"tasks", numTasks(*graph)},
                         {"tasks_by_kind", tasksByKind(*graph)},
                         {"measured_makespan_s", run.makespan},
                         {"makespans_s", measurement.makespans},
                         {"predicted_makespan_s", nullptr},
                         {"per_device", std::move(perDevice)},
                         {"host_peak_bytes", run.hostPeakBytes},
                         {"outputs", std::move(outputsJson)}};
  if (predicted) {
    root["predicted_makespan_s"] = *predicted;
    if (*predicted > 0)
      root["measured_over_predicted"] = run.makespan / *predicted;
  }
  if (maxRelError) {
    root["max_rel_error"] = jsonNumber(*maxRelError);
    root["tolerance"] = tolerance;
    root["ok"] = ok();
  }
  if (!trace.empty())
    root["trace"] = trace;
  return root.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
         "\n";
}

std::string RunReport::text() const {
  const RunResult &run = measurement.median;
  std::string out = "@" + function + " on " + std::to_string(devices) + " " +
                    backend + " device(s), seed " + std::to_string(seed) +
                    ": " + std::to_string(numTasks(*graph)) + " tasks (";
  bool first = true;
  for (const auto &[kind, count] : tasksByKind(*graph)) {
    out += (first ? "" : ", ") + kind + " " + std::to_string(count);
    first = false;
  }
  out += ")\n";
  out += "  measured makespan: " + formatSignificant(run.makespan, 4) +
         " s (median of " + std::to_string(repeat) +
         " run(s) after a warm-up)\n";
  if (predicted) {
    out += "  predicted makespan: " + formatSignificant(*predicted, 4) + " s";
    if (*predicted > 0)
      out += " (measured / predicted " +
             formatSignificant(run.makespan / *predicted, 3) + ")";
    out += "\n";
  } else {
    out += "  predicted makespan: none (no doppler.makespan; run "
           "doppler-simulate)\n";
  }
  for (size_t d = 0; d < run.devices.size(); ++d) {
    const DeviceStats &stats = run.devices[d];
    out += "  device " + std::to_string(d) + ": utilization " +
           formatSignificant(stats.utilization, 3) + ", " +
           std::to_string(stats.computeTasks) + " compute task(s), " +
           std::to_string(stats.copyTasks) + " transfer(s) in, peak " +
           std::to_string(stats.peakBytes) + " bytes";
    if (uint64_t limit = memoryLimitOf(d))
      out += " of a " + std::to_string(limit) + "-byte limit";
    out += "\n";
  }
  if (run.hostPeakBytes)
    out += "  host: peak " + std::to_string(run.hostPeakBytes) +
           " bytes of evicted values\n";
  for (size_t i = 0; i < outputs.size(); ++i) {
    out += "  " + describeOutput(i, outputs[i]);
    if (i < errors.size())
      out += " rel-error " + formatSignificant(errors[i], 3);
    out += "\n";
  }
  if (maxRelError) {
    char tol[32];
    std::snprintf(tol, sizeof(tol), "%g", tolerance);
    out += "check against the interpreter: max rel-error " +
           formatSignificant(*maxRelError, 3) + (ok() ? " <= " : " > ") +
           "tolerance " + tol + ": " + (ok() ? "ok" : "FAILED") + "\n";
  }
  if (!trace.empty())
    out += "  trace: " + trace + "\n";
  return out;
}

} // namespace doppler::runtime
