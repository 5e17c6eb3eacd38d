//===- PlacementReport.cpp - What doppler-place reports -------------------===//

#include "Doppler/Placement/PlacementReport.h"

#include "Doppler/Placement/Learning/LearnedPolicy.h"
#include "Doppler/Support/NumberFormat.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdarg>
#include <cstdio>

namespace doppler::placement {
namespace {

using Json = nlohmann::ordered_json;

/// Integral values print as JSON integers (exact up to 2^53, which covers
/// every makespan of integer costs up to ~1e14 and beyond); others with the
/// shortest representation that round-trips.
Json exactNumber(double value) {
  if (!std::isfinite(value))
    return nullptr;
  if (value == std::floor(value) && std::fabs(value) < 0x1.0p53)
    return static_cast<int64_t>(value);
  return value;
}

double ratioToLowerBound(const PlacementReport &report) {
  return report.lowerBound > 0 ? report.makespan / report.lowerBound : 1.0;
}

/// printf onto the end of `out`.
[[gnu::format(printf, 2, 3)]] void appendf(std::string &out, const char *format,
                                           ...) {
  va_list args;
  va_start(args, format);
  va_list copy;
  va_copy(copy, args);
  int size = std::vsnprintf(nullptr, 0, format, copy);
  va_end(copy);
  if (size > 0) {
    size_t old = out.size();
    out.resize(old + static_cast<size_t>(size) + 1);
    std::vsnprintf(out.data() + old, static_cast<size_t>(size) + 1, format,
                   args);
    out.resize(old + static_cast<size_t>(size));
  }
  va_end(args);
}

} // namespace

std::string formatPlacementReportJson(const PlacementReport &report) {
  // Insertion order: the headline numbers first.
  Json out;
  out["graph"] = report.graphPath;
  out["nodes"] = report.nodes;
  out["edges"] = report.edges;
  out["devices"] = report.devices;
  if (!report.policy.empty()) {
    out["policy"] = report.policy;
    out["seed"] = report.seed;
    if (report.policy == kLearnedPolicyName) {
      out["samples"] = report.samples;
      out["model"] =
          report.modelPath.empty() ? std::string("embedded") : report.modelPath;
    }
  } else {
    out["policy"] = nullptr;
    out["assignment_file"] = report.assignmentPath;
  }
  out["makespan"] = exactNumber(report.makespan);
  out["lower_bound"] = exactNumber(report.lowerBound);
  out["ratio_to_lower_bound"] = ratioToLowerBound(report);
  out["seconds"] = report.seconds;
  if (report.secondsPerEval) {
    out["repeat"] = report.repeat;
    out["seconds_per_eval"] = *report.secondsPerEval;
  }
  if (!report.starts.empty()) {
    Json starts = Json::array();
    for (size_t i = 0; i < report.starts.size(); ++i)
      starts.push_back({{"name", report.starts[i].first},
                        {"makespan", exactNumber(report.starts[i].second)},
                        {"chosen", i == report.startChosen}});
    out["starts"] = starts;
  }
  if (report.refinement) {
    const SearchResult &refined = *report.refinement;
    out["refine"] = {{"initial_makespan", exactNumber(refined.initialMakespan)},
                     {"evaluations", refined.evaluations},
                     {"accepted_moves", refined.acceptedMoves},
                     {"improvements", refined.improvements},
                     {"initial_temperature", refined.initialTemperature},
                     {"final_temperature", refined.finalTemperature},
                     {"temperature_runs", refined.temperatureRuns},
                     {"seconds", refined.seconds}};
  }
  Json busy = Json::array();
  for (double value : report.deviceBusy)
    busy.push_back(exactNumber(value));
  out["device_busy"] = busy;
  out["device_nodes"] = report.deviceNodes;
  if (!report.peakMemory.empty()) {
    // Bytes; an unknown capacity is null.
    Json peak = Json::array(), capacity = Json::array();
    for (double value : report.peakMemory)
      peak.push_back(exactNumber(value));
    for (double value : report.memoryCapacity)
      capacity.push_back(exactNumber(value));
    out["peak_memory"] = peak;
    out["memory_capacity"] = capacity;
  }
  if (report.movedToFit) {
    out["moved_to_fit"] = *report.movedToFit;
    out["memory_feasible"] = report.memoryFeasible;
    if (!report.memoryFeasible)
      out["memory_diagnosis"] = report.memoryDiagnosis;
  }
  out["assignment"] = report.assignment;
  // One line (assignments are long); replace: never throw on odd bytes in
  // a file name.
  return out.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string formatPlacementReportText(const PlacementReport &report) {
  std::string out;
  appendf(out, "graph:       %s (%d nodes, %d edges)\n",
          report.graphPath.c_str(), report.nodes, report.edges);
  if (!report.policy.empty())
    appendf(out, "policy:      %s\n", report.policy.c_str());
  else
    appendf(out, "assignment:  %s\n", report.assignmentPath.c_str());
  for (size_t i = 0; i < report.starts.size(); ++i)
    appendf(out, "%s%s %s%s\n", i ? "             " : "starts:      ",
            report.starts[i].first.c_str(),
            formatIntegral(report.starts[i].second).c_str(),
            i == report.startChosen && report.starts.size() > 1 ? " (best)"
                                                                : "");
  // Both under the refinement's judge (the network simulator with
  // doppler-place --network; `makespan` below is the reference one).
  if (report.refinement)
    appendf(out, "refined:     %s -> %s (%lld evaluation%s, %.3f s)\n",
            formatIntegral(report.refinement->initialMakespan).c_str(),
            formatIntegral(report.refinement->makespan).c_str(),
            static_cast<long long>(report.refinement->evaluations),
            report.refinement->evaluations == 1 ? "" : "s",
            report.refinement->seconds);
  appendf(out, "devices:     %lld\n", static_cast<long long>(report.devices));
  appendf(out, "makespan:    %s\n", formatIntegral(report.makespan).c_str());
  appendf(out, "lower bound: %s (makespan / bound = %.4f)\n",
          formatIntegral(report.lowerBound).c_str(), ratioToLowerBound(report));
  if (report.secondsPerEval)
    appendf(out, "evaluation:  %.3g s per run (%lld runs)\n",
            *report.secondsPerEval, static_cast<long long>(report.repeat));
  else
    appendf(out, "time:        %.3g s\n", report.seconds);
  if (!report.peakMemory.empty()) {
    auto list = [](const std::vector<double> &values) {
      std::string text = "[";
      for (size_t i = 0; i < values.size(); ++i)
        text += (i ? ", " : "") + (std::isfinite(values[i])
                                       ? formatIntegral(values[i])
                                       : std::string("unlimited"));
      return text + "]";
    };
    appendf(out, "memory:      peak per device %s of capacity %s bytes\n",
            list(report.peakMemory).c_str(),
            list(report.memoryCapacity).c_str());
  }
  if (report.movedToFit && (*report.movedToFit > 0 || !report.memoryFeasible)) {
    if (report.memoryFeasible)
      appendf(out, "memory fit:  %lld node(s) moved to fit\n",
              static_cast<long long>(*report.movedToFit));
    else
      appendf(out,
              "memory fit:  no placement found that fits (%s); kept the "
              "least overflow (%lld node(s) moved)\n",
              report.memoryDiagnosis.c_str(),
              static_cast<long long>(*report.movedToFit));
  }
  appendf(out, "device  nodes  busy                  utilisation\n");
  for (size_t d = 0; d < report.deviceBusy.size(); ++d)
    appendf(out, "%6zu  %5d  %-20s  %5.1f%%\n", d, report.deviceNodes[d],
            formatIntegral(report.deviceBusy[d]).c_str(),
            report.makespan > 0 ? 100.0 * report.deviceBusy[d] / report.makespan
                                : 0.0);
  return out;
}

} // namespace doppler::placement
