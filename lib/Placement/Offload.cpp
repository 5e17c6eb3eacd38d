//===- Offload.cpp - Evicting values to host memory and back --------------===//
//
// buildOffloadGraph rewrites the graph as Offload.h states. planOffload is a
// greedy descent judged by that rewrite's simulation:
//  1. simulate the graph with the evictions chosen so far (trackMemory, the
//     reference timing otherwise); take the device with the largest
//     overflow and the instant of its peak (Schedule::peakMemoryTime);
//  2. candidates, new evictions: the values produced on that device whose
//     buffer is live there at that instant, not running nor read by the node
//     running then, and with readers there that start after the instant
//     (the gap spans the peak). The readers split by id: the late readers
//     are the longest id-suffix of them that all start after the instant,
//     the rest are early. A value already evicted is a candidate again when
//     this split gives it more late readers (its eviction is replaced).
//     Candidates whose original can be freed by then (early readers and
//     outgoing transfers done, the host copy made) come first, each group
//     largest first; the first six are tried;
//  3. triggers for each: a node on the device, not the value, not a graph
//     output, with an id below the first late reader: the one ending last
//     before the late readers are ready (less the reload time) but after
//     the instant (no reader then moves in its device's FIFO queue, so the
//     schedule stays); the one ending last while leaving the reload time
//     before the first late reader starts; the first one ending after the
//     instant; the last one to end;
//  4. candidates, new triggers: a reload under way at the instant whose
//     readers have not started is triggered by the first node ending after
//     the instant instead;
//  5. every candidate is simulated; the best by (overflow bytes, overflow
//     integral, makespan) is kept if it lowers (overflow bytes, overflow
//     integral); the integral (bytes over capacity times how long) makes
//     progress on a plateau of equal peaks visible;
//  6. stop when every device fits, when no candidate lowers the overflow,
//     or at the evaluation or eviction budget.
// Nothing is random: the same inputs give the same plan.
//
// What it cannot do, by the model: evict a received copy (only values on
// their producer's device), reload one value twice (one eviction per value:
// a reloaded copy stays from its reload to its last late reader), or keep a
// late reader's place in its device's FIFO queue when the reload arrives
// after it was ready (the reader then queues behind what became ready
// before, and its other inputs stay live meanwhile).
//
//===----------------------------------------------------------------------===//

#include "Doppler/Placement/Offload.h"

#include "Doppler/Placement/MemoryFit.h"
#include "Doppler/Placement/Simulator.h"
#include "Doppler/Support/NumberFormat.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace doppler::placement {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

bool isAscending(const std::vector<NodeId> &ids) {
  for (size_t i = 1; i < ids.size(); ++i)
    if (ids[i - 1] >= ids[i])
      return false;
  return true;
}

std::string checkOptions(const Graph &graph, const System &system,
                         ArrayView<DeviceId> assignment,
                         const OffloadOptions &options) {
  const int32_t numDevices = system.numDevices();
  if (!graph.hasOutputBytes() && graph.numNodes() > 0)
    return "offload planning needs the output size of every node, and the "
           "graph has none";
  std::string error;
  if (!validateAssignment(graph, numDevices, assignment, &error))
    return error;
  if (options.hostLinks.size() != static_cast<size_t>(numDevices))
    return "expected " + std::to_string(numDevices) + " host links, got " +
           std::to_string(options.hostLinks.size());
  for (size_t d = 0; d < options.hostLinks.size(); ++d) {
    const HostLink &link = options.hostLinks[d];
    if (!(link.bandwidth > 0) || std::isnan(link.bandwidth))
      return "device " + std::to_string(d) + ": host link bandwidth " +
             formatShortest(link.bandwidth) + " is not positive";
    if (!(link.latency >= 0) || !std::isfinite(link.latency))
      return "device " + std::to_string(d) + ": host link latency " +
             formatShortest(link.latency) +
             " is negative or not a finite number";
  }
  if (options.maxEvaluations < 1)
    return "offload planning needs an evaluation budget of at least 1, got " +
           std::to_string(options.maxEvaluations);
  if (options.maxEvictions < 0)
    return "the eviction limit " + std::to_string(options.maxEvictions) +
           " is negative";
  const std::vector<double> &resident = options.residentBytes;
  if (!resident.empty() && resident.size() != static_cast<size_t>(numDevices))
    return "expected " + std::to_string(numDevices) +
           " resident byte counts, got " + std::to_string(resident.size());
  for (size_t d = 0; d < resident.size(); ++d)
    if (!(resident[d] >= 0) || !std::isfinite(resident[d]))
      return "device " + std::to_string(d) + ": resident bytes " +
             formatShortest(resident[d]) +
             " is negative or not a finite number";
  return {};
}

std::string checkEviction(const Graph &graph, ArrayView<DeviceId> assignment,
                          const Eviction &eviction, size_t index,
                          std::vector<uint8_t> &evicted) {
  const std::string where = "eviction " + std::to_string(index) + ": ";
  const int32_t numNodes = graph.numNodes();
  const NodeId v = eviction.value;
  if (v < 0 || v >= numNodes)
    return where + "value " + std::to_string(v) + " is not a node";
  if (evicted[v])
    return where + "value " + std::to_string(v) + " is evicted twice";
  evicted[v] = 1;
  const DeviceId d = assignment[v];
  if (eviction.device != d)
    return where + "value " + std::to_string(v) + " is on device " +
           std::to_string(d) + ", not " + std::to_string(eviction.device);
  if (eviction.lateReaders.empty())
    return where + "no late readers";
  if (!isAscending(eviction.earlyReaders) ||
      !isAscending(eviction.lateReaders))
    return where + "readers are not in ascending id order";
  // Early + late readers are exactly v's readers on d.
  std::vector<NodeId> readers;
  for (NodeId w : graph.successors(v))
    if (assignment[w] == d)
      readers.push_back(w);
  std::sort(readers.begin(), readers.end());
  std::vector<NodeId> named = eviction.earlyReaders;
  named.insert(named.end(), eviction.lateReaders.begin(),
               eviction.lateReaders.end());
  std::sort(named.begin(), named.end());
  if (named != readers)
    return where + "early and late readers are not exactly the readers of " +
           "node " + std::to_string(v) + " on device " + std::to_string(d);
  const NodeId firstLate = eviction.lateReaders.front();
  if (!eviction.earlyReaders.empty() &&
      eviction.earlyReaders.back() > firstLate)
    return where + "early reader " +
           std::to_string(eviction.earlyReaders.back()) +
           " comes after late reader " + std::to_string(firstLate);
  const NodeId trigger = eviction.trigger;
  if (trigger < 0 || trigger >= numNodes)
    return where + "trigger " + std::to_string(trigger) + " is not a node";
  if (trigger == v)
    return where + "the trigger is the evicted value itself";
  if (assignment[trigger] != d)
    return where + "trigger " + std::to_string(trigger) + " is on device " +
           std::to_string(assignment[trigger]) + ", not " + std::to_string(d);
  if (trigger >= firstLate)
    return where + "trigger " + std::to_string(trigger) +
           " does not come before late reader " + std::to_string(firstLate);
  return {};
}

/// A plan being judged: its rewritten graph, simulated.
struct Trial {
  std::vector<Eviction> evictions;
  OffloadGraph rewritten;
  Schedule schedule;
  double overflow = kInfinity, integral = kInfinity, makespan = kInfinity;

  bool fits() const { return overflow <= 0; }
  bool reducesOverflow(const Trial &other) const {
    return overflow < other.overflow ||
           (overflow == other.overflow && integral < other.integral);
  }
  bool betterThan(const Trial &other) const {
    if (overflow != other.overflow)
      return overflow < other.overflow;
    if (integral != other.integral)
      return integral < other.integral;
    return makespan < other.makespan;
  }
};

class Planner {
public:
  Planner(const Graph &graph, const System &system,
          ArrayView<DeviceId> assignment, const OffloadOptions &options)
      : graph_(graph), system_(system), assignment_(assignment),
        options_(options), numDevices_(system.numDevices()),
        limits_(numDevices_) {
    for (DeviceId d = 0; d < numDevices_; ++d)
      limits_[d] = system.memoryCapacity(d) - resident(d);
  }

  double resident(DeviceId d) const {
    return options_.residentBytes.empty() ? 0.0 : options_.residentBytes[d];
  }
  /// Builds and simulates `evictions`; false when the rewrite is invalid
  /// (e.g. a trigger downstream of a late reader closes a cycle).
  bool judge(std::vector<Eviction> evictions, Trial &trial);
  OffloadPlan plan();

private:
  /// A change to the current plan: a new eviction (replace < 0) or a new
  /// trigger for eviction `replace`.
  struct Change {
    int32_t replace;
    Eviction eviction;
  };
  /// The candidate changes at the current trial's worst peak.
  std::vector<Change> candidates(const Trial &current, DeviceId d,
                                 double time);
  std::string diagnose(const Trial &trial) const;
  /// When `w`'s last input arrived in `trial`'s schedule.
  double readyTime(const Trial &trial, NodeId w) const {
    const Graph &rewritten = trial.rewritten.graph;
    const std::vector<DeviceId> &device = trial.rewritten.assignment;
    ArrayView<NodeId> preds = rewritten.predecessors(w);
    ArrayView<int32_t> edges = rewritten.predecessorEdges(w);
    double ready = 0;
    for (size_t i = 0; i < preds.size(); ++i)
      ready = std::max(ready, trial.schedule.end[preds[i]] +
                                  (device[preds[i]] != device[w]
                                       ? rewritten.edgeCost(edges[i])
                                       : 0.0));
    return ready;
  }

  const Graph &graph_;
  const System &system_;
  ArrayView<DeviceId> assignment_;
  const OffloadOptions &options_;
  const int32_t numDevices_;
  std::vector<double> limits_;
  int64_t evaluations_ = 0;
};

bool Planner::judge(std::vector<Eviction> evictions, Trial &trial) {
  std::optional<OffloadGraph> rewritten = buildOffloadGraph(
      graph_, system_, assignment_, evictions, options_, nullptr);
  if (!rewritten)
    return false;
  ++evaluations_;
  SimulatorOptions simulation;
  simulation.trackMemory = true;
  Simulator simulator(rewritten->graph, rewritten->system, simulation);
  trial.makespan = simulator.run(rewritten->assignment);
  trial.schedule = simulator.schedule();
  trial.evictions = std::move(evictions);
  trial.overflow = 0;
  bool over = false;
  for (DeviceId d = 0; d < numDevices_; ++d) {
    double excess = trial.schedule.peakMemory[d] - limits_[d];
    if (excess > 0) {
      trial.overflow += excess;
      over = true;
    }
  }
  trial.integral = 0;
  if (over) {
    std::vector<double> limits = limits_;
    limits.push_back(kInfinity); // the host
    for (double value : overflowIntegrals(
             bufferIntervals(rewritten->graph, rewritten->assignment,
                             trial.schedule),
             limits, trial.makespan))
      trial.integral += value;
  }
  trial.rewritten = std::move(*rewritten);
  return true;
}

std::vector<Planner::Change>
Planner::candidates(const Trial &current, DeviceId d, double time) {
  const Schedule &schedule = current.schedule;
  const Graph &rewritten = current.rewritten.graph;
  const int32_t numNodes = graph_.numNodes();
  std::vector<int32_t> evictionOf(numNodes, -1);
  for (size_t i = 0; i < current.evictions.size(); ++i)
    evictionOf[current.evictions[i].value] = static_cast<int32_t>(i);
  auto running = [&](NodeId v) {
    return schedule.start[v] <= time && time < schedule.end[v];
  };

  struct Candidate {
    Eviction eviction;
    int32_t replace; // an eviction of the same value, split earlier
    bool freesInTime;
    double bytes;
  };
  std::vector<Candidate> found;
  for (const BufferInterval &buffer :
       bufferIntervals(rewritten, current.rewritten.assignment, schedule)) {
    const NodeId v = buffer.value;
    if (buffer.device != d || buffer.received || v >= numNodes ||
        !buffer.liveAt(time) || running(v))
      continue;
    std::vector<NodeId> readers;
    bool readNow = false, othersDone = true;
    for (int32_t e = graph_.succBegin(v), last = graph_.succEnd(v); e < last;
         ++e) {
      const NodeId w = graph_.edgeTarget(e);
      if (assignment_[w] != d) {
        othersDone &= schedule.end[v] + graph_.edgeCost(e) <= time;
        continue;
      }
      readers.push_back(w);
      readNow |= running(w);
    }
    if (readNow || readers.empty())
      continue;
    std::sort(readers.begin(), readers.end());
    size_t split = readers.size();
    while (split > 0 && schedule.start[readers[split - 1]] > time)
      --split;
    if (split == readers.size())
      continue; // no reader after the peak
    // An evicted value still live here: split it earlier, if that gives it
    // more late readers.
    const int32_t replace = evictionOf[v];
    if (replace >= 0 &&
        readers.size() - split <=
            current.evictions[replace].lateReaders.size())
      continue;
    Eviction eviction;
    eviction.value = v;
    eviction.device = d;
    eviction.trigger = -1;
    eviction.earlyReaders.assign(readers.begin(), readers.begin() + split);
    eviction.lateReaders.assign(readers.begin() + split, readers.end());
    const double evictTime =
        hostTransferTime(options_.hostLinks[d], graph_.outputBytes(v));
    bool freesInTime = othersDone && schedule.end[v] + evictTime <= time;
    for (NodeId w : eviction.earlyReaders)
      freesInTime &= schedule.end[w] <= time;
    found.push_back({std::move(eviction), replace, freesInTime, buffer.bytes});
  }
  std::stable_sort(found.begin(), found.end(),
                   [](const Candidate &a, const Candidate &b) {
                     if (a.freesInTime != b.freesInTime)
                       return a.freesInTime;
                     return a.bytes > b.bytes;
                   });
  constexpr size_t kValues = 6;
  if (found.size() > kValues)
    found.resize(kValues);

  std::vector<Change> result;
  // Reloads under way at the peak whose readers do not run yet: reload
  // later, after the first node that ends after the peak.
  for (size_t i = 0; i < current.evictions.size(); ++i) {
    const Eviction &eviction = current.evictions[i];
    if (eviction.device != d)
      continue;
    const NodeId reload = current.rewritten.reloadNode[i];
    bool liveNow = schedule.end[reload] <= time, readNow = false;
    for (NodeId w : eviction.lateReaders) {
      liveNow &= time < schedule.end[w];
      readNow |= schedule.start[w] <= time;
    }
    if (!liveNow || readNow)
      continue;
    NodeId firstAfter = -1;
    for (NodeId t = 0; t < eviction.lateReaders.front(); ++t) {
      if (t == eviction.value || assignment_[t] != d ||
          graph_.outDegree(t) == 0)
        continue;
      if (schedule.end[t] > time &&
          (firstAfter < 0 || schedule.end[t] < schedule.end[firstAfter]))
        firstAfter = t;
    }
    if (firstAfter >= 0 && firstAfter != eviction.trigger) {
      Change change{static_cast<int32_t>(i), eviction};
      change.eviction.trigger = firstAfter;
      result.push_back(std::move(change));
    }
  }
  for (Candidate &candidate : found) {
    Eviction &eviction = candidate.eviction;
    const NodeId v = eviction.value;
    const NodeId firstLate = eviction.lateReaders.front();
    const double reloadTime =
        hostTransferTime(options_.hostLinks[d], graph_.outputBytes(v));
    const double deadline = schedule.start[firstLate] - reloadTime;
    // Back before every late reader is ready: no reader moves in its
    // device's FIFO, so the schedule stays as it is.
    double readyDeadline = kInfinity;
    for (NodeId w : eviction.lateReaders)
      readyDeadline = std::min(readyDeadline, readyTime(current, w));
    readyDeadline -= reloadTime;
    NodeId latest = -1, firstAfter = -1, last = -1, inTime = -1;
    for (NodeId t = 0; t < firstLate; ++t) {
      if (t == v || assignment_[t] != d || graph_.outDegree(t) == 0)
        continue;
      const double end = schedule.end[t];
      if (end <= deadline && (latest < 0 || end > schedule.end[latest]))
        latest = t;
      if (end > time && (firstAfter < 0 || end < schedule.end[firstAfter]))
        firstAfter = t;
      if (last < 0 || end > schedule.end[last])
        last = t;
      if (end > time && end <= readyDeadline &&
          (inTime < 0 || end > schedule.end[inTime]))
        inTime = t;
    }
    std::vector<NodeId> triggers = {inTime, latest, firstAfter, last};
    for (NodeId trigger : triggers) {
      if (trigger < 0)
        continue;
      bool seen = false;
      for (const Change &change : result)
        seen |= change.replace == candidate.replace &&
                change.eviction.value == v &&
                change.eviction.trigger == trigger;
      if (seen)
        continue;
      eviction.trigger = trigger;
      result.push_back({candidate.replace, eviction});
    }
  }
  return result;
}

std::string Planner::diagnose(const Trial &trial) const {
  DeviceId worst = 0;
  double worstExcess = -kInfinity;
  for (DeviceId d = 0; d < numDevices_; ++d) {
    double excess = trial.schedule.peakMemory[d] - limits_[d];
    if (excess > worstExcess) {
      worstExcess = excess;
      worst = d;
    }
  }
  const double time = trial.schedule.peakMemoryTime[worst];
  std::vector<BufferInterval> live;
  for (const BufferInterval &buffer :
       bufferIntervals(trial.rewritten.graph, trial.rewritten.assignment,
                       trial.schedule))
    if (buffer.device == worst && buffer.liveAt(time) && buffer.bytes > 0)
      live.push_back(buffer);
  std::stable_sort(live.begin(), live.end(),
                   [](const BufferInterval &a, const BufferInterval &b) {
                     return a.bytes > b.bytes;
                   });
  std::string text =
      "device " + std::to_string(worst) + " peaks at " +
      formatBytes(trial.schedule.peakMemory[worst] + resident(worst)) +
      (resident(worst) > 0 ? " (" + formatBytes(resident(worst)) +
                                 " resident)"
                           : std::string()) +
      " at time " + formatShortest(time) + ", over its " +
      formatBytes(system_.memoryCapacity(worst)) + " capacity; live there:";
  const int32_t numNodes = graph_.numNodes();
  constexpr size_t kShown = 4;
  for (size_t i = 0; i < live.size() && i < kShown; ++i) {
    const BufferInterval &buffer = live[i];
    text += i == 0 ? " " : ", ";
    if (buffer.value < numNodes)
      text += "node " + std::to_string(buffer.value);
    else
      text += "a reloaded value";
    text += " (" + formatBytes(buffer.bytes) +
            (buffer.received ? ", a received copy" : "") + ")";
  }
  if (live.size() > kShown)
    text += " and " + std::to_string(live.size() - kShown) + " more";
  return text;
}

OffloadPlan Planner::plan() {
  OffloadPlan plan;
  Simulator unlimited(graph_, numDevices_);
  plan.unlimitedMakespan = unlimited.run(assignment_);

  if (graph_.numNodes() == 0) {
    // Nothing runs: only the resident bytes count.
    plan.peakBefore.assign(numDevices_, 0.0);
    for (DeviceId d = 0; d < numDevices_; ++d) {
      plan.peakBefore[d] = resident(d);
      if (limits_[d] < 0 && plan.diagnosis.empty())
        plan.diagnosis = "device " + std::to_string(d) + " holds " +
                         formatBytes(system_.memoryCapacity(d)) + " but " +
                         formatBytes(resident(d)) + " are resident there";
    }
    plan.peakAfter = plan.peakBefore;
    plan.fits = plan.diagnosis.empty();
    return plan;
  }
  Trial current;
  judge({}, current);
  plan.peakBefore = current.schedule.peakMemory;
  plan.peakBefore.resize(numDevices_);
  for (DeviceId d = 0; d < numDevices_; ++d)
    plan.peakBefore[d] += resident(d);

  // No eviction helps a device whose resident bytes exceed it, or a node
  // whose own inputs and output do not fit.
  std::string impossible;
  for (DeviceId d = 0; d < numDevices_ && impossible.empty(); ++d)
    if (limits_[d] < 0)
      impossible = "device " + std::to_string(d) + " holds " +
                   formatBytes(system_.memoryCapacity(d)) + " but " +
                   formatBytes(resident(d)) + " are resident there";
  if (!current.fits() && impossible.empty()) {
    for (NodeId v = 0; v < graph_.numNodes() && impossible.empty(); ++v) {
      const DeviceId d = assignment_[v];
      const double need = nodeWorkingSet(graph_, v);
      if (need > limits_[d])
        impossible = "node " + std::to_string(v) + " needs " +
                     formatBytes(need) +
                     " at once (inputs and output) but device " +
                     std::to_string(d) + " holds " + formatBytes(limits_[d]) +
                     (resident(d) > 0 ? " beside " + formatBytes(resident(d)) +
                                            " resident"
                                      : std::string());
    }
  }

  while (!current.fits() && impossible.empty() &&
         evaluations_ < options_.maxEvaluations) {
    DeviceId worst = 0;
    double worstExcess = -kInfinity;
    for (DeviceId d = 0; d < numDevices_; ++d) {
      double excess = current.schedule.peakMemory[d] - limits_[d];
      if (excess > worstExcess) {
        worstExcess = excess;
        worst = d;
      }
    }
    Trial best;
    bool found = false;

    for (Change &change : candidates(
             current, worst, current.schedule.peakMemoryTime[worst])) {
      if (evaluations_ >= options_.maxEvaluations)
        break;
      std::vector<Eviction> evictions = current.evictions;
      if (change.replace >= 0)
        evictions[change.replace] = std::move(change.eviction);
      else if (static_cast<int64_t>(evictions.size()) < options_.maxEvictions)
        evictions.push_back(std::move(change.eviction));
      else
        continue;
      Trial trial;
      if (!judge(std::move(evictions), trial))
        continue;
      if (!found || trial.betterThan(best)) {
        best = std::move(trial);
        found = true;
      }
    }
    if (!found || !best.reducesOverflow(current))
      break;
    current = std::move(best);
  }

  plan.evictions = current.evictions;
  std::sort(plan.evictions.begin(), plan.evictions.end(),
            [](const Eviction &a, const Eviction &b) {
              return a.value < b.value;
            });
  plan.fits = current.fits();
  plan.makespan = current.makespan;
  plan.peakAfter = current.schedule.peakMemory;
  plan.peakAfter.resize(numDevices_);
  for (DeviceId d = 0; d < numDevices_; ++d)
    plan.peakAfter[d] += resident(d);
  // Host bytes: each stash from the end of its value until its reload has
  // arrived; frees first at equal times.
  std::vector<std::pair<double, double>> events;
  for (size_t i = 0; i < current.evictions.size(); ++i) {
    const Eviction &eviction = current.evictions[i];
    const double bytes = graph_.outputBytes(eviction.value);
    const double reloaded =
        current.schedule.end[current.rewritten.reloadNode[i]] +
        hostTransferTime(options_.hostLinks[eviction.device], bytes);
    events.emplace_back(current.schedule.end[eviction.value], bytes);
    events.emplace_back(reloaded, -bytes);
  }
  std::sort(events.begin(), events.end());
  double stashed = 0;
  for (const auto &event : events) {
    stashed += event.second;
    plan.hostPeak = std::max(plan.hostPeak, stashed);
  }
  plan.evaluations = evaluations_;
  if (!plan.fits)
    plan.diagnosis = impossible.empty() ? diagnose(current) : impossible;
  return plan;
}

} // namespace

double hostTransferTime(const HostLink &link, double bytes) {
  return link.latency + bytes / link.bandwidth;
}

std::optional<OffloadGraph>
buildOffloadGraph(const Graph &graph, const System &system,
                  ArrayView<DeviceId> assignment,
                  const std::vector<Eviction> &evictions,
                  const OffloadOptions &options, std::string *error) {
  auto fail = [&](std::string message) -> std::optional<OffloadGraph> {
    if (error)
      *error = std::move(message);
    return std::nullopt;
  };
  if (std::string why = checkOptions(graph, system, assignment, options);
      !why.empty())
    return fail(why);
  const int32_t numNodes = graph.numNodes();
  const int32_t numDevices = system.numDevices();
  std::vector<uint8_t> evicted(numNodes, 0);
  for (size_t i = 0; i < evictions.size(); ++i)
    if (std::string why =
            checkEviction(graph, assignment, evictions[i], i, evicted);
        !why.empty())
      return fail(why);

  // Which edges the reloads replace: (value, late reader) pairs.
  std::vector<int32_t> evictionOf(numNodes, -1);
  for (size_t i = 0; i < evictions.size(); ++i)
    evictionOf[evictions[i].value] = static_cast<int32_t>(i);

  GraphBuilder builder;
  for (NodeId v = 0; v < numNodes; ++v) {
    builder.addNode(graph.computeCost(v), graph.transferCost(v),
                    graph.opType(v));
    builder.setOutputBytes(v, graph.outputBytes(v));
  }
  OffloadGraph result;
  const DeviceId host = numDevices;
  result.assignment.assign(assignment.begin(), assignment.end());
  for (const Eviction &eviction : evictions) {
    const double bytes = graph.outputBytes(eviction.value);
    NodeId stash = builder.addNode(0, 0, "stash");
    builder.setOutputBytes(stash, bytes);
    NodeId reload = builder.addNode(0, 0, "reload");
    builder.setOutputBytes(reload, bytes);
    result.stashNode.push_back(stash);
    result.reloadNode.push_back(reload);
    result.assignment.push_back(host);
    result.assignment.push_back(host);
  }
  for (int32_t e = 0; e < graph.numEdges(); ++e) {
    const NodeId u = graph.edgeSource(e), w = graph.edgeTarget(e);
    if (evictionOf[u] >= 0) {
      const std::vector<NodeId> &late = evictions[evictionOf[u]].lateReaders;
      if (std::binary_search(late.begin(), late.end(), w))
        continue;
    }
    builder.addEdge(u, w, graph.edgeCost(e));
  }
  for (size_t i = 0; i < evictions.size(); ++i) {
    const Eviction &eviction = evictions[i];
    const double time =
        hostTransferTime(options.hostLinks[eviction.device],
                         graph.outputBytes(eviction.value));
    builder.addEdge(eviction.value, result.stashNode[i], time);
    builder.addEdge(result.stashNode[i], result.reloadNode[i], 0.0);
    builder.addEdge(eviction.trigger, result.reloadNode[i], 0.0);
    for (NodeId w : eviction.lateReaders)
      builder.addEdge(result.reloadNode[i], w, time);
  }
  std::string why;
  std::optional<Graph> rewritten = builder.build(&why);
  if (!rewritten)
    return fail("the offload graph is invalid: " + why);
  result.graph = std::move(*rewritten);

  SystemBuilder systemBuilder(numDevices + 1);
  for (DeviceId d = 0; d < numDevices; ++d) {
    systemBuilder.setSpeed(d, system.speed(d));
    systemBuilder.setMemoryCapacity(d, system.memoryCapacity(d));
    for (DeviceId to = 0; to < numDevices; ++to)
      if (to != d)
        systemBuilder.setLink(d, to, system.link(d, to));
    // The host link both ways, for byte-model simulations.
    const HostLink &hostLink = options.hostLinks[d];
    Link link{hostLink.bandwidth, hostLink.latency};
    systemBuilder.setLink(d, host, link);
    systemBuilder.setLink(host, d, link);
  }
  std::optional<System> rewrittenSystem = systemBuilder.build(&why);
  if (!rewrittenSystem)
    return fail("the offload system is invalid: " + why);
  result.system = std::move(*rewrittenSystem);
  return result;
}

std::optional<OffloadPlan> planOffload(const Graph &graph,
                                       const System &system,
                                       ArrayView<DeviceId> assignment,
                                       const OffloadOptions &options,
                                       std::string *error) {
  if (std::string why = checkOptions(graph, system, assignment, options);
      !why.empty()) {
    if (error)
      *error = std::move(why);
    return std::nullopt;
  }
  Planner planner(graph, system, assignment, options);
  return planner.plan();
}

} // namespace doppler::placement
