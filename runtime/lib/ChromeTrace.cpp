//===- ChromeTrace.cpp - Chrome trace JSON of a run -----------------------===//
//
// Trace Event Format: one process per device, one thread per worker (tid 0
// is the compute worker, tid 1 + k copy worker k), one complete ("X") event
// per task with timestamps in microseconds. Events of one worker never
// overlap because a worker runs one task at a time.
//
//===----------------------------------------------------------------------===//

#include "doppler/runtime/Executor.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <set>

namespace doppler::runtime {
namespace {

int traceThreadId(const TaskTiming &timing) {
  return timing.worker == WorkerKind::Compute ? 0 : 1 + timing.lane;
}

/// Microseconds, rounded to whole nanoseconds so that one event's end and
/// the next one's start compare as they did on the clock.
double toMicros(double seconds) { return std::round(seconds * 1e9) / 1e3; }

nlohmann::json metadata(const char *name, int pid, int tid,
                        nlohmann::json args) {
  return {{"name", name},
          {"ph", "M"},
          {"pid", pid},
          {"tid", tid},
          {"args", std::move(args)}};
}

} // namespace

std::string RunResult::chromeTrace(const TaskGraph &graph) const {
  nlohmann::json events = nlohmann::json::array();
  std::set<std::pair<int, int>> threads;
  for (size_t id = 0; id < tasks.size(); ++id) {
    const TaskTiming &timing = tasks[id];
    if (!timing.ran)
      continue;
    ValueId value = static_cast<ValueId>(id);
    const Task &task = graph.task(value);
    int tid = traceThreadId(timing);
    threads.insert({timing.device, tid});
    double start = toMicros(timing.start);
    double duration = std::max(0.0, toMicros(timing.end) - start);
    nlohmann::json args = {{"value", value},
                           {"bytes", graph.byteSize(value)},
                           {"shape", task.shape}};
    if (task.kind == TaskKind::Transfer)
      args["from_device"] = graph.task(task.inputs[0]).device;
    events.push_back({{"name", graph.describe(value)},
                      {"cat", std::string(taskKindName(task.kind))},
                      {"ph", "X"},
                      {"ts", start},
                      {"dur", duration},
                      {"pid", timing.device},
                      {"tid", tid},
                      {"args", std::move(args)}});
  }
  for (size_t device = 0; device < devices.size(); ++device) {
    int pid = static_cast<int>(device);
    // Across processes: a row per (rank, device).
    std::string name = "device " + std::to_string(device);
    if (device < deviceRanks.size())
      name = "rank " + std::to_string(deviceRanks[device]) + " " + name;
    events.push_back(metadata("process_name", pid, 0, {{"name", name}}));
    events.push_back(
        metadata("process_sort_index", pid, 0, {{"sort_index", pid}}));
  }
  for (const auto &[pid, tid] : threads)
    events.push_back(
        metadata("thread_name", pid, tid,
                 {{"name", tid == 0 ? std::string("compute")
                                    : "copy " + std::to_string(tid - 1)}}));
  nlohmann::json trace = {{"traceEvents", std::move(events)},
                          {"displayTimeUnit", "ms"},
                          {"otherData", {{"makespan_us", makespan * 1e6}}}};
  // Labels are user text: replace invalid UTF-8 instead of throwing.
  return trace.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Status RunResult::writeChromeTrace(const TaskGraph &graph,
                                   const std::string &path) const {
  std::ofstream out(path);
  if (!out)
    return Status::failure("cannot open '" + path + "' for writing");
  out << chromeTrace(graph) << '\n';
  if (!out)
    return Status::failure("error writing '" + path + "'");
  return Status();
}

} // namespace doppler::runtime
