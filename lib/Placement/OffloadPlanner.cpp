//===- OffloadPlanner.cpp - Searching for an offload plan ----------------===//
//
// The search planOffload runs (Offload.h describes what a plan is and what
// it guarantees): candidate orders of the graph, evictions proposed where a
// device overflows, each candidate judged by the enforcing simulation, and
// a descent that keeps the best.
//
//===----------------------------------------------------------------------===//

#include "OffloadInternal.h"

#include "Doppler/Placement/MemoryFit.h"
#include "Doppler/Placement/Simulator.h"
#include "Doppler/Support/NumberFormat.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <utility>

namespace doppler::placement::offload_detail {

namespace {

/// A depth-first topological order: each graph output's ancestors (inputs
/// in edge order, recursively) before the output itself, outputs in id
/// order. Priority = position.
std::vector<double> depthFirstOrder(const Graph &graph) {
  const int32_t numNodes = graph.numNodes();
  std::vector<double> priority(numNodes, -1);
  std::vector<uint8_t> seen(numNodes, 0);
  std::vector<std::pair<NodeId, size_t>> stack;
  double next = 0;
  for (NodeId sink = 0; sink < numNodes; ++sink) {
    if (graph.outDegree(sink) != 0)
      continue;
    seen[sink] = 1;
    stack.push_back({sink, 0});
    while (!stack.empty()) {
      auto &[v, i] = stack.back();
      ArrayView<NodeId> inputs = graph.predecessors(v);
      if (i < inputs.size()) {
        const NodeId u = inputs[i++];
        if (!seen[u]) {
          seen[u] = 1;
          stack.push_back({u, 0});
        }
        continue;
      }
      priority[v] = next++;
      stack.pop_back();
    }
  }
  return priority;
}

/// A memory-aware list order, one sequence for all devices: repeatedly the
/// ready node with the smallest key, where the key is (net bytes it
/// allocates: its output less the inputs it is the last reader of; the
/// latest position among its inputs, later first: depth-first) in that
/// order (memoryFirst) or the other, then the longest path to a graph
/// output (compute), then the id. Each step scans the ready nodes.
/// Priority = position.
std::vector<double> memoryAwareOrder(const Graph &graph, bool memoryFirst) {
  const int32_t numNodes = graph.numNodes();
  // Longest compute path from each node to an output (Kahn order, reversed).
  std::vector<int32_t> pending(numNodes), topological;
  topological.reserve(numNodes);
  for (NodeId v = 0; v < numNodes; ++v)
    if ((pending[v] = graph.inDegree(v)) == 0)
      topological.push_back(v);
  for (size_t i = 0; i < topological.size(); ++i)
    for (NodeId w : graph.successors(topological[i]))
      if (--pending[w] == 0)
        topological.push_back(w);
  std::vector<double> bottom(numNodes, 0);
  for (size_t i = topological.size(); i-- > 0;) {
    const NodeId v = topological[i];
    double below = 0;
    for (NodeId w : graph.successors(v))
      below = std::max(below, bottom[w]);
    bottom[v] = graph.computeCost(v) + below;
  }

  std::vector<int32_t> readersLeft(numNodes);
  std::vector<double> lastInput(numNodes, -1), priority(numNodes, -1);
  std::vector<NodeId> ready;
  for (NodeId v = 0; v < numNodes; ++v) {
    readersLeft[v] = graph.outDegree(v);
    if ((pending[v] = graph.inDegree(v)) == 0)
      ready.push_back(v);
  }
  auto netBytes = [&](NodeId v) {
    double net = graph.outputBytes(v);
    for (NodeId u : graph.predecessors(v))
      if (readersLeft[u] == 1)
        net -= graph.outputBytes(u);
    return net;
  };
  for (int32_t position = 0; !ready.empty(); ++position) {
    size_t bestIndex = 0;
    double bestNet = netBytes(ready[0]);
    for (size_t i = 1; i < ready.size(); ++i) {
      const NodeId v = ready[i], b = ready[bestIndex];
      const double net = netBytes(v);
      bool better;
      if (memoryFirst && net != bestNet)
        better = net < bestNet;
      else if (lastInput[v] != lastInput[b])
        better = lastInput[v] > lastInput[b];
      else if (net != bestNet)
        better = net < bestNet;
      else if (bottom[v] != bottom[b])
        better = bottom[v] > bottom[b];
      else
        better = v < b;
      if (better) {
        bestIndex = i;
        bestNet = net;
      }
    }
    const NodeId v = ready[bestIndex];
    ready[bestIndex] = ready.back();
    ready.pop_back();
    priority[v] = position;
    for (NodeId u : graph.predecessors(v))
      --readersLeft[u];
    for (NodeId w : graph.successors(v)) {
      lastInput[w] = position;
      if (--pending[w] == 0)
        ready.push_back(w);
    }
  }
  return priority;
}

/// The execution orders planOffload tries besides readiness order. The
/// list orders cost O(V x ready nodes x inputs), up to O(V^2): only on
/// graphs up to kListOrderNodes nodes.
constexpr int32_t kListOrderNodes = 20000;
std::vector<std::vector<double>> candidateOrders(const Graph &graph) {
  std::vector<std::vector<double>> orders = {depthFirstOrder(graph)};
  if (graph.numNodes() <= kListOrderNodes) {
    orders.push_back(memoryAwareOrder(graph, false));
    orders.push_back(memoryAwareOrder(graph, true));
  }
  return orders;
}

/// A plan being judged: its rewritten graph, simulated.
struct Trial {
  std::vector<Eviction> evictions;
  std::vector<double> priority;
  OffloadGraph rewritten;
  Schedule schedule;
  bool fitted = false;  // the prediction fits (OffloadSimulation::fits)
  std::string deadlock; // OffloadSimulation::deadlock
  double overflow = kInfinity, integral = kInfinity, makespan = kInfinity;

  bool fits() const { return fitted; }
  bool reducesOverflow(const Trial &other) const {
    return overflow < other.overflow ||
           (overflow == other.overflow && integral < other.integral);
  }
  bool betterThan(const Trial &other) const {
    if (fitted != other.fitted)
      return fitted;
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
    limited_ = *offloadSystem(system, enforcedCapacities(system, options),
                              options, nullptr);
  }

  double resident(DeviceId d) const {
    return options_.residentBytes.empty() ? 0.0 : options_.residentBytes[d];
  }
  /// Builds and simulates `evictions` in the order `priority`; false when
  /// the rewrite is invalid (e.g. a trigger downstream of a late reader
  /// closes a cycle).
  bool judge(std::vector<Eviction> evictions, std::vector<double> priority,
             Trial &trial);
  /// The greedy descent of evictions from `current` (its priority kept).
  Trial descend(Trial current);
  OffloadPlan plan();

private:
  /// A change to the current plan: a new eviction (replace < 0) or a new
  /// trigger for eviction `replace`.
  struct Change {
    int32_t replace;
    Eviction eviction;
  };
  /// A value that could be evicted from the peak's device.
  struct EvictionCandidate {
    Eviction eviction; // trigger unset
    int32_t replace;   // an eviction of the same value, split earlier
    bool freesInTime;  // its early readers and transfers end by the peak
    double bytes;
  };
  /// The candidate changes at the current trial's worst peak: later
  /// reloads, then each evictable value with each of its triggers.
  std::vector<Change> candidates(const Trial &current, DeviceId d,
                                 double time);
  /// The values live on `d` at `time` that could be evicted there, the
  /// ones that free their bytes in time first, then the largest: at most
  /// a few.
  std::vector<EvictionCandidate>
  evictableValues(const Trial &current, DeviceId d, double time) const;
  /// Reloads under way at the peak whose readers do not run yet: reload
  /// later, after the first node that ends after the peak.
  void addLaterReloads(const Trial &current, DeviceId d, double time,
                       std::vector<Change> &result) const;
  /// `candidate` with each of its triggers (the last node to end before
  /// the reload is due, the first after the peak, ...), once each.
  void addTriggers(const Trial &current, DeviceId d, double time,
                   EvictionCandidate candidate,
                   std::vector<Change> &result) const;
  /// Why no eviction can make `current` fit ("" when one may): a device
  /// whose resident bytes exceed it, or a node whose own inputs and output
  /// do not fit its device.
  std::string whyImpossible(const Trial &current) const;
  /// The best trial found from `current` (no evictions): an order first,
  /// then the evictions' descent from each order until one fits.
  Trial search(Trial current);
  /// The host's peak of stashed bytes under `plan`'s evictions in
  /// `schedule` (each from its value's end until its reload has arrived;
  /// frees first at equal times).
  double hostPeak(const OffloadPlan &plan, const Schedule &schedule,
                  const OffloadGraph &offload) const;
  /// The device whose predicted peak exceeds its limit the most (the
  /// first on a tie), with that excess (negative when every device fits).
  std::pair<DeviceId, double> worstDevice(const Trial &trial) const;
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
  System limited_; // offloadSystem with enforcedCapacities
  int64_t evaluations_ = 0;
};

bool Planner::judge(std::vector<Eviction> evictions,
                    std::vector<double> priority, Trial &trial) {
  std::optional<OffloadGraph> rewritten = buildOffloadGraph(
      graph_, system_, assignment_, evictions, options_, nullptr);
  if (!rewritten)
    return false;
  ++evaluations_;
  OffloadSimulation simulation = simulateRewritten(
      std::move(*rewritten), priority, system_, limited_, options_);
  rewritten = std::move(simulation.offload);
  trial.schedule = std::move(simulation.schedule);
  trial.makespan = trial.schedule.makespan;
  trial.fitted = simulation.fits;
  trial.deadlock = std::move(simulation.deadlock);
  trial.evictions = std::move(evictions);
  trial.priority = std::move(priority);
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

std::vector<Planner::EvictionCandidate>
Planner::evictableValues(const Trial &current, DeviceId d,
                         double time) const {
  const Schedule &schedule = current.schedule;
  const Graph &rewritten = current.rewritten.graph;
  const int32_t numNodes = graph_.numNodes();
  // The current evictions of values on device d, by value.
  std::vector<int32_t> evictionOf(numNodes, -1);
  for (size_t i = 0; i < current.evictions.size(); ++i)
    if (current.evictions[i].device == d)
      evictionOf[current.evictions[i].value] = static_cast<int32_t>(i);
  auto running = [&](NodeId v) {
    return schedule.start[v] <= time && time < schedule.end[v];
  };

  std::vector<EvictionCandidate> found;
  for (const BufferInterval &buffer :
       bufferIntervals(rewritten, current.rewritten.assignment, schedule)) {
    const NodeId v = buffer.value;
    if (buffer.device != d || v >= numNodes || !buffer.liveAt(time) ||
        running(v) || (buffer.received && !options_.evictReceivedCopies))
      continue;
    std::vector<NodeId> readers;
    bool readNow = false, othersDone = true;
    for (int32_t e = graph_.succBegin(v), last = graph_.succEnd(v); e < last;
         ++e) {
      const NodeId w = graph_.edgeTarget(e);
      if (assignment_[w] != d) {
        // A received copy is freed after its early readers alone.
        if (!buffer.received)
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
    bool freesInTime =
        othersDone && (buffer.received || schedule.end[v] + evictTime <= time);
    for (NodeId w : eviction.earlyReaders)
      freesInTime &= schedule.end[w] <= time;
    found.push_back({std::move(eviction), replace, freesInTime, buffer.bytes});
  }
  std::stable_sort(found.begin(), found.end(),
                   [](const EvictionCandidate &a, const EvictionCandidate &b) {
                     if (a.freesInTime != b.freesInTime)
                       return a.freesInTime;
                     return a.bytes > b.bytes;
                   });
  constexpr size_t kValues = 6;
  if (found.size() > kValues)
    found.resize(kValues);

  return found;
}

void Planner::addLaterReloads(const Trial &current, DeviceId d, double time,
                              std::vector<Change> &result) const {
  const Schedule &schedule = current.schedule;
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
}

void Planner::addTriggers(const Trial &current, DeviceId d, double time,
                          EvictionCandidate candidate,
                          std::vector<Change> &result) const {
  const Schedule &schedule = current.schedule;
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

std::vector<Planner::Change>
Planner::candidates(const Trial &current, DeviceId d, double time) {
  std::vector<Change> result;
  addLaterReloads(current, d, time, result);
  for (EvictionCandidate &candidate : evictableValues(current, d, time))
    addTriggers(current, d, time, std::move(candidate), result);
  return result;
}

std::pair<DeviceId, double> Planner::worstDevice(const Trial &trial) const {
  DeviceId worst = 0;
  double worstExcess = -kInfinity;
  for (DeviceId d = 0; d < numDevices_; ++d) {
    double excess = trial.schedule.peakMemory[d] - limits_[d];
    if (excess > worstExcess) {
      worstExcess = excess;
      worst = d;
    }
  }
  return {worst, worstExcess};
}

std::string Planner::diagnose(const Trial &trial) const {
  auto [worst, worstExcess] = worstDevice(trial);
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
  if (!trial.deadlock.empty())
    text += " (with the capacities enforced: " + trial.deadlock + ")";
  return text;
}

std::string Planner::whyImpossible(const Trial &current) const {
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
  return impossible;
}

Trial Planner::search(Trial current) {
  Trial best = current;
  if (!best.fits()) {
    // An order first: readiness order and the candidate orders, best first.
    std::vector<Trial> starts;
    starts.push_back(std::move(current));
    std::vector<std::vector<double>> orders;
    if (options_.chooseOrder)
      orders = candidateOrders(graph_);
    for (std::vector<double> &priority : orders) {
      if (evaluations_ >= options_.maxEvaluations)
        break;
      Trial trial;
      if (judge({}, std::move(priority), trial))
        starts.push_back(std::move(trial));
    }
    std::stable_sort(starts.begin(), starts.end(),
                     [](const Trial &a, const Trial &b) {
                       return a.betterThan(b);
                     });
    best = starts.front();
    // Evictions second, from each order in turn until one fits.
    for (Trial &start : starts) {
      if (best.fits() || evaluations_ >= options_.maxEvaluations)
        break;
      Trial result = descend(std::move(start));
      if (result.betterThan(best))
        best = std::move(result);
    }
  }
  return best;
}

double Planner::hostPeak(const OffloadPlan &plan, const Schedule &schedule,
                         const OffloadGraph &offload) const {
  std::vector<std::pair<double, double>> events;
  for (size_t i = 0; i < plan.evictions.size(); ++i) {
    const Eviction &eviction = plan.evictions[i];
    const double bytes = graph_.outputBytes(eviction.value);
    const double reloaded =
        schedule.end[offload.reloadNode[i]] +
        hostTransferTime(options_.hostLinks[eviction.device], bytes);
    events.emplace_back(schedule.end[eviction.value], bytes);
    events.emplace_back(reloaded, -bytes);
  }
  std::sort(events.begin(), events.end());
  double stashed = 0, peak = 0;
  for (const auto &event : events) {
    stashed += event.second;
    peak = std::max(peak, stashed);
  }
  return peak;
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
  {
    // The input as it stands: readiness order, no limit, no offload.
    SimulatorOptions tracking;
    tracking.trackMemory = true;
    Simulator simulator(graph_, system_, tracking);
    simulator.run(assignment_);
    plan.peakBefore = simulator.schedule().peakMemory;
    plan.peakBefore.resize(numDevices_);
    for (DeviceId d = 0; d < numDevices_; ++d)
      plan.peakBefore[d] += resident(d);
  }
  Trial current;
  judge({}, {}, current);

  const std::string impossible = whyImpossible(current);
  Trial best = impossible.empty() ? search(std::move(current)) : current;
  // The runtime is given the planned start times; keep them when they
  // predict no worse than the priorities they came from.
  if (best.fits() && !best.priority.empty() &&
      evaluations_ < options_.maxEvaluations) {
    std::vector<double> planned(best.schedule.start.begin(),
                                best.schedule.start.begin() +
                                    graph_.numNodes());
    Trial timed;
    if (judge(best.evictions, std::move(planned), timed) && timed.fits() &&
        timed.makespan <= best.makespan)
      best = std::move(timed);
  }

  plan.evictions = best.evictions;
  std::sort(plan.evictions.begin(), plan.evictions.end(),
            [](const Eviction &a, const Eviction &b) {
              return std::pair(a.value, a.device) <
                     std::pair(b.value, b.device);
            });
  plan.priority = best.priority;
  // The prediction, exactly as simulateOffloadPlan makes it (the evictions
  // in value order).
  std::optional<OffloadSimulation> prediction = simulateOffloadPlan(
      graph_, system_, assignment_, plan, options_, nullptr);
  assert(prediction && "the chosen plan was simulated before");
  plan.fits = prediction->fits;
  plan.makespan = prediction->schedule.makespan;
  plan.peakAfter = prediction->peak;
  const Schedule &schedule = prediction->schedule;
  plan.hostPeak = hostPeak(plan, schedule, prediction->offload);
  plan.evaluations = evaluations_;
  if (!plan.fits) {
    if (!impossible.empty()) {
      plan.diagnosis = impossible;
    } else {
      Trial predicted;
      predicted.rewritten = std::move(prediction->offload);
      predicted.schedule = schedule;
      predicted.deadlock = prediction->deadlock;
      plan.diagnosis = diagnose(predicted);
    }
  }
  return plan;
}

Trial Planner::descend(Trial current) {
  while (!current.fits() && evaluations_ < options_.maxEvaluations) {
    auto [worst, worstExcess] = worstDevice(current);
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
      if (!judge(std::move(evictions), current.priority, trial))
        continue;
      if (!found || trial.betterThan(best)) {
        best = std::move(trial);
        found = true;
      }
    }
    if (!found || !(best.fits() || best.reducesOverflow(current)))
      break;
    current = std::move(best);
  }
  return current;
}

} // namespace

OffloadPlan runOffloadPlanner(const Graph &graph, const System &system,
                              ArrayView<DeviceId> assignment,
                              const OffloadOptions &options) {
  Planner planner(graph, system, assignment, options);
  return planner.plan();
}

} // namespace doppler::placement::offload_detail
