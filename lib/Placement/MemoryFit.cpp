//===- MemoryFit.cpp - Placements that fit the devices' memory ------------===//
//
// The repair is a descent on (total overflow bytes, overflow integral),
// makespan last:
//  1. simulate; on the device with the largest overflow, take the instant
//     of its peak and the buffers live there, largest first;
//  2. candidates: the producer of a local buffer alone, or with its readers
//     on that device; the readers there of a received copy; the node
//     running at that instant; each to the device with the most headroom
//     or to a neighbour's device;
//  3. judge every candidate by a simulator run and keep the best if it
//     lowers (overflow, overflow integral); if none does, try every node of
//     the device, alone, on the device with the most headroom; else stop.
// The integral (bytes above capacity times how long) breaks ties between
// moves that leave the peak itself unchanged (a plateau of equal peaks), so
// every accepted move is progress and the descent ends.
//
// Where the descent stalls above capacity, a seeded annealing takes over
// (moves: a node of the most overfull device elsewhere, a node to a
// neighbour's device, a swap), on overflow + integral / initial makespan
// (the average excess), until a placement fits. The input's repair gets half
// the budget; if it finds nothing that fits, the repair restarts from the
// placements of deterministic heuristics, sharing the rest.
//
// Then the annealing of Search.cpp (refinePlacement with
// SearchOptions::peakMemoryLimits), which only accepts feasible placements,
// shortens the makespan with what is left of the budget. Same seed and
// budget, same result.
//
//===----------------------------------------------------------------------===//

#include "Doppler/Placement/MemoryFit.h"

#include "Doppler/Placement/Heuristics.h"
#include "Doppler/Placement/Search.h"
#include "Doppler/Placement/Simulator.h"
#include "Doppler/Support/NumberFormat.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

namespace doppler::placement {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

/// How good a placement is for the repair: smaller is better, compared in
/// member order (makespan last).
struct FitCost {
  double overflow = kInfinity;
  double integral = kInfinity;
  double makespan = kInfinity;

  bool feasible() const { return overflow <= 0; }
  /// Lowers (overflow, integral): progress for the repair.
  bool reducesOverflow(const FitCost &other) const {
    return overflow < other.overflow ||
           (overflow == other.overflow && integral < other.integral);
  }
  bool operator<(const FitCost &other) const {
    if (overflow != other.overflow)
      return overflow < other.overflow;
    if (integral != other.integral)
      return integral < other.integral;
    return makespan < other.makespan;
  }
};

/// The judge: a memory-tracking simulator and the per-device limits.
class FitJudge {
public:
  FitJudge(const Graph &graph, const System &system,
           std::vector<double> limits)
      : graph_(graph), limits_(std::move(limits)),
        simulator_(graph, system, trackingOptions()) {}

  static SimulatorOptions trackingOptions() {
    SimulatorOptions options;
    options.trackMemory = true;
    return options;
  }

  FitCost evaluate(ArrayView<DeviceId> assignment) {
    ++evaluations_;
    FitCost cost;
    cost.makespan = simulator_.run(assignment);
    const Schedule &schedule = simulator_.schedule();
    cost.overflow = 0;
    bool over = false;
    for (size_t d = 0; d < limits_.size(); ++d) {
      double excess = schedule.peakMemory[d] - limits_[d];
      if (excess > 0) {
        cost.overflow += excess;
        over = true;
      }
    }
    cost.integral = 0;
    if (over) {
      buffers_ = bufferIntervals(graph_, assignment, schedule);
      for (double value :
           overflowIntegrals(buffers_, limits_, schedule.makespan))
        cost.integral += value;
    }
    return cost;
  }

  Simulator &simulator() { return simulator_; }
  const Schedule &schedule() const { return simulator_.schedule(); }
  const std::vector<double> &limits() const { return limits_; }
  int64_t evaluations() const { return evaluations_; }

private:
  const Graph &graph_;
  std::vector<double> limits_;
  Simulator simulator_;
  std::vector<BufferInterval> buffers_;
  int64_t evaluations_ = 0;
};

/// One candidate move: `nodes` to `target`.
struct Move {
  std::vector<NodeId> nodes;
  DeviceId target;
};

class Repairer {
public:
  Repairer(const Graph &graph, FitJudge &judge, int64_t maxEvaluations,
           std::vector<DeviceId> assignment)
      : graph_(graph), judge_(judge), maxEvaluations_(maxEvaluations),
        current_(std::move(assignment)),
        numDevices_(static_cast<int32_t>(judge.limits().size())) {}

  /// Runs the descent from current_ (whose cost is `cost`); returns the
  /// final cost.
  FitCost run(FitCost cost);
  /// Seeded annealing on overflow + overflow integral / `timeScale` (the
  /// average excess over a run of that length) from current_, until a
  /// placement fits or the budget is spent; current_ becomes the best seen.
  FitCost anneal(FitCost cost, uint64_t seed, double timeScale);
  std::vector<DeviceId> &assignment() { return current_; }

private:
  bool budgetLeft() const { return judge_.evaluations() < maxEvaluations_; }
  /// The device with the largest overflow under the current schedule.
  DeviceId worstDevice(const std::vector<double> &peaks) const;
  DeviceId roomiestDevice(const std::vector<double> &peaks,
                          DeviceId except) const;
  void collectMoves(DeviceId d, double time, const std::vector<double> &peaks);
  void addMoveTargets(const std::vector<NodeId> &nodes, DeviceId from,
                      const std::vector<double> &peaks);
  /// Judges every collected move; applies the best one if it lowers the
  /// overflow. Returns whether it did.
  bool tryMoves(FitCost &cost);

  const Graph &graph_;
  FitJudge &judge_;
  int64_t maxEvaluations_;
  std::vector<DeviceId> current_;
  int32_t numDevices_;
  std::vector<Move> moves_;
};

DeviceId Repairer::worstDevice(const std::vector<double> &peaks) const {
  DeviceId worst = 0;
  double worstExcess = -kInfinity;
  for (DeviceId d = 0; d < numDevices_; ++d) {
    double excess = peaks[d] - judge_.limits()[d];
    if (excess > worstExcess) {
      worstExcess = excess;
      worst = d;
    }
  }
  return worst;
}

DeviceId Repairer::roomiestDevice(const std::vector<double> &peaks,
                                  DeviceId except) const {
  DeviceId best = -1;
  double bestRoom = -kInfinity;
  for (DeviceId d = 0; d < numDevices_; ++d) {
    if (d == except)
      continue;
    double room = judge_.limits()[d] - peaks[d];
    if (best < 0 || room > bestRoom) {
      bestRoom = room;
      best = d;
    }
  }
  return best;
}

void Repairer::addMoveTargets(const std::vector<NodeId> &nodes, DeviceId from,
                              const std::vector<double> &peaks) {
  if (nodes.empty())
    return;
  std::vector<DeviceId> targets;
  targets.push_back(roomiestDevice(peaks, from));
  // Neighbours' devices: joining them costs no transfer.
  for (NodeId v : nodes) {
    for (NodeId u : graph_.predecessors(v))
      targets.push_back(current_[u]);
    for (NodeId w : graph_.successors(v))
      targets.push_back(current_[w]);
  }
  std::vector<DeviceId> distinct;
  for (DeviceId t : targets) {
    if (t == from || t < 0 ||
        std::find(distinct.begin(), distinct.end(), t) != distinct.end())
      continue;
    distinct.push_back(t);
    if (distinct.size() >= 4)
      break;
  }
  for (DeviceId t : distinct)
    moves_.push_back({nodes, t});
}

void Repairer::collectMoves(DeviceId d, double time,
                            const std::vector<double> &peaks) {
  moves_.clear();
  const Schedule &schedule = judge_.schedule();
  std::vector<BufferInterval> live;
  for (const BufferInterval &buffer :
       bufferIntervals(graph_, current_, schedule))
    if (buffer.device == d && buffer.liveAt(time))
      live.push_back(buffer);
  std::stable_sort(live.begin(), live.end(),
                   [](const BufferInterval &a, const BufferInterval &b) {
                     return a.bytes > b.bytes;
                   });
  constexpr size_t kBuffers = 6;
  if (live.size() > kBuffers)
    live.resize(kBuffers);
  for (const BufferInterval &buffer : live) {
    const NodeId u = buffer.value;
    std::vector<NodeId> readersHere;
    for (NodeId w : graph_.successors(u))
      if (current_[w] == d)
        readersHere.push_back(w);
    if (!buffer.received) {
      addMoveTargets({u}, d, peaks);
      std::vector<NodeId> group = readersHere;
      group.insert(group.begin(), u);
      if (group.size() > 1)
        addMoveTargets(group, d, peaks);
    } else {
      addMoveTargets(readersHere, d, peaks);
    }
  }
  // The node running on d at that instant.
  for (NodeId v = 0; v < graph_.numNodes(); ++v)
    if (current_[v] == d && schedule.start[v] <= time && time < schedule.end[v])
      addMoveTargets({v}, d, peaks);
}

bool Repairer::tryMoves(FitCost &cost) {
  FitCost bestCost;
  const Move *best = nullptr;
  std::vector<DeviceId> candidate = current_;
  for (const Move &move : moves_) {
    if (!budgetLeft())
      break;
    for (NodeId v : move.nodes)
      candidate[v] = move.target;
    FitCost moved = judge_.evaluate(candidate);
    if (moved < bestCost) {
      bestCost = moved;
      best = &move;
    }
    for (NodeId v : move.nodes)
      candidate[v] = current_[v];
  }
  if (!best || !bestCost.reducesOverflow(cost))
    return false;
  for (NodeId v : best->nodes)
    current_[v] = best->target;
  cost = bestCost;
  return true;
}

FitCost Repairer::run(FitCost cost) {
  if (numDevices_ < 2)
    return cost;
  while (!cost.feasible() && budgetLeft()) {
    // The schedule of current_ (the last run may have been a candidate).
    judge_.evaluate(current_);
    const Schedule &schedule = judge_.schedule();
    const std::vector<double> peaks = schedule.peakMemory;
    const DeviceId d = worstDevice(peaks);
    collectMoves(d, schedule.peakMemoryTime[d], peaks);
    if (tryMoves(cost))
      continue;
    // Wider: every node of d, alone, to the roomiest device.
    moves_.clear();
    const DeviceId roomiest = roomiestDevice(peaks, d);
    for (NodeId v = 0; v < graph_.numNodes(); ++v)
      if (current_[v] == d)
        moves_.push_back({{v}, roomiest});
    if (!tryMoves(cost))
      break;
  }
  return cost;
}

FitCost Repairer::anneal(FitCost cost, uint64_t seed, double timeScale) {
  if (numDevices_ < 2 || cost.feasible() || !budgetLeft())
    return cost;
  SeededRandom random(seed);
  const int32_t numNodes = graph_.numNodes();
  auto scalar = [&](const FitCost &c) {
    return c.overflow + c.integral / timeScale;
  };
  FitCost best = cost;
  std::vector<DeviceId> bestAssignment = current_;
  judge_.evaluate(current_);
  std::vector<double> peaks = judge_.schedule().peakMemory;
  double currentScore = scalar(cost);
  const double initialTemperature = 0.05 * currentScore;
  const int64_t start = judge_.evaluations();
  const int64_t span = std::max<int64_t>(1, maxEvaluations_ - start);
  std::vector<std::pair<NodeId, DeviceId>> changed;
  while (budgetLeft() && !best.feasible()) {
    changed.clear();
    const double pick = random.uniform();
    if (pick < 0.5) {
      // A node of the device most over its capacity, elsewhere.
      DeviceId worst = worstDevice(peaks);
      for (int tries = 0; tries < 16; ++tries) {
        NodeId v = static_cast<NodeId>(random.below(numNodes));
        if (current_[v] != worst)
          continue;
        DeviceId to = static_cast<DeviceId>(random.below(numDevices_ - 1));
        to += to >= worst;
        changed.emplace_back(v, current_[v]);
        current_[v] = to;
        break;
      }
    } else if (pick < 0.75) {
      // A node joins a neighbour's device.
      NodeId v = static_cast<NodeId>(random.below(numNodes));
      std::vector<DeviceId> others;
      for (NodeId u : graph_.predecessors(v))
        if (current_[u] != current_[v])
          others.push_back(current_[u]);
      for (NodeId w : graph_.successors(v))
        if (current_[w] != current_[v])
          others.push_back(current_[w]);
      if (!others.empty()) {
        changed.emplace_back(v, current_[v]);
        current_[v] = others[random.below(others.size())];
      }
    } else {
      // Two nodes on different devices swap.
      NodeId v = static_cast<NodeId>(random.below(numNodes));
      NodeId w = static_cast<NodeId>(random.below(numNodes));
      if (current_[v] != current_[w]) {
        changed.emplace_back(v, current_[v]);
        changed.emplace_back(w, current_[w]);
        std::swap(current_[v], current_[w]);
      }
    }
    if (changed.empty())
      continue;
    FitCost moved = judge_.evaluate(current_);
    const double score = scalar(moved);
    const double progress =
        static_cast<double>(judge_.evaluations() - start) / span;
    const double temperature =
        initialTemperature * std::pow(0.001, std::min(1.0, progress));
    bool accept = score <= currentScore;
    if (!accept && temperature > 0)
      accept = random.uniform() < std::exp(-(score - currentScore) /
                                           temperature);
    if (!accept) {
      for (auto it = changed.rbegin(); it != changed.rend(); ++it)
        current_[it->first] = it->second;
      continue;
    }
    currentScore = score;
    peaks = judge_.schedule().peakMemory;
    if (moved < best) {
      best = moved;
      bestAssignment = current_;
    }
  }
  current_ = std::move(bestAssignment);
  return best;
}

std::vector<double> withResident(const std::vector<double> &peaks,
                                 const std::vector<double> &resident) {
  std::vector<double> total = peaks;
  for (size_t d = 0; d < total.size() && d < resident.size(); ++d)
    total[d] += resident[d];
  return total;
}

} // namespace

std::string formatBytes(double bytes) {
  if (!std::isfinite(bytes))
    return formatShortest(bytes) + " B";
  static const char *const units[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  int unit = 0;
  double value = bytes;
  while (std::fabs(value) >= 1000 && unit < 5) {
    value /= 1000;
    ++unit;
  }
  return formatSignificant(value, 3) + " " + units[unit];
}

double nodeWorkingSet(const Graph &graph, NodeId v) {
  if (!graph.hasOutputBytes())
    return 0;
  double bytes = graph.outputBytes(v);
  for (NodeId u : graph.predecessors(v))
    bytes += graph.outputBytes(u);
  return bytes;
}

std::vector<BufferInterval> bufferIntervals(const Graph &graph,
                                            ArrayView<DeviceId> assignment,
                                            const Schedule &schedule) {
  std::vector<BufferInterval> buffers;
  if (!graph.hasOutputBytes())
    return buffers;
  buffers.reserve(graph.numNodes());
  // Received copies of one value: (device, last reader's end) pairs.
  std::vector<std::pair<DeviceId, double>> copies;
  for (NodeId u = 0; u < graph.numNodes(); ++u) {
    const DeviceId home = assignment[u];
    const double bytes = graph.outputBytes(u);
    double freed = graph.outDegree(u) == 0 ? kInfinity : schedule.end[u];
    copies.clear();
    for (int32_t e = graph.succBegin(u), last = graph.succEnd(u); e < last;
         ++e) {
      const NodeId w = graph.edgeTarget(e);
      const DeviceId there = assignment[w];
      if (there == home) {
        freed = std::max(freed, schedule.end[w]);
        continue;
      }
      freed = std::max(freed, schedule.end[u] + graph.edgeCost(e));
      auto it = std::find_if(copies.begin(), copies.end(),
                             [&](const auto &c) { return c.first == there; });
      if (it == copies.end())
        copies.emplace_back(there, schedule.end[w]);
      else
        it->second = std::max(it->second, schedule.end[w]);
    }
    buffers.push_back({u, home, false, bytes, schedule.start[u], freed});
    for (const auto &[there, lastEnd] : copies)
      buffers.push_back({u, there, true, bytes, schedule.end[u], lastEnd});
  }
  return buffers;
}

std::vector<double> overflowIntegrals(const std::vector<BufferInterval> &buffers,
                                      const std::vector<double> &limits,
                                      double makespan) {
  std::vector<double> integrals(limits.size(), 0.0);
  // (time, +bytes or -bytes) per device; frees first at equal times.
  std::vector<std::vector<std::pair<double, double>>> events(limits.size());
  for (const BufferInterval &buffer : buffers) {
    if (static_cast<size_t>(buffer.device) >= limits.size() ||
        buffer.bytes == 0 || !std::isfinite(limits[buffer.device]))
      continue;
    double freed = std::min(buffer.freed, makespan);
    if (!(buffer.allocated < freed))
      continue;
    events[buffer.device].emplace_back(buffer.allocated, buffer.bytes);
    events[buffer.device].emplace_back(freed, -buffer.bytes);
  }
  for (size_t d = 0; d < limits.size(); ++d) {
    auto &list = events[d];
    std::sort(list.begin(), list.end());
    double live = 0;
    for (size_t i = 0; i < list.size(); ++i) {
      live += list[i].second;
      if (i + 1 < list.size() && live > limits[d])
        integrals[d] += (live - limits[d]) * (list[i + 1].first - list[i].first);
    }
  }
  return integrals;
}

std::string memoryLowerBoundViolation(const Graph &graph, const System &system,
                                      const std::vector<double> &residentBytes) {
  if (!graph.hasOutputBytes())
    return {};
  const int32_t numDevices = system.numDevices();
  std::vector<double> room(numDevices);
  double largest = -kInfinity, total = 0;
  for (DeviceId d = 0; d < numDevices; ++d) {
    double resident =
        static_cast<size_t>(d) < residentBytes.size() ? residentBytes[d] : 0;
    room[d] = system.memoryCapacity(d) - resident;
    if (room[d] < 0)
      return "device " + std::to_string(d) + " holds " +
             formatBytes(system.memoryCapacity(d)) + " but " +
             formatBytes(resident) + " are resident there";
    largest = std::max(largest, room[d]);
    total += room[d];
  }
  for (NodeId v = 0; v < graph.numNodes(); ++v) {
    double need = nodeWorkingSet(graph, v);
    if (need > largest)
      return "node " + std::to_string(v) + " needs " + formatBytes(need) +
             " at once (inputs and output) but the largest device holds " +
             formatBytes(largest);
  }
  double outputs = 0;
  for (NodeId v = 0; v < graph.numNodes(); ++v)
    if (graph.outDegree(v) == 0)
      outputs += graph.outputBytes(v);
  if (outputs > total)
    return "the graph outputs need " + formatBytes(outputs) +
           " together (they stay live to the end) but all devices hold " +
           formatBytes(total);
  return {};
}

namespace {

/// fitToMemory's checks of its inputs: "" when they are usable.
std::string checkFitInputs(const Graph &graph, int32_t numDevices,
                           ArrayView<DeviceId> assignment,
                           const MemoryFitOptions &options) {
  if (!graph.hasOutputBytes() && graph.numNodes() > 0)
    return "fitting a placement to memory needs the output size of "
           "every node, and the graph has none";
  std::string error;
  if (!validateAssignment(graph, numDevices, assignment, &error))
    return error;
  const std::vector<double> &resident = options.residentBytes;
  if (!resident.empty() && resident.size() != static_cast<size_t>(numDevices))
    return "expected " + std::to_string(numDevices) +
           " resident byte counts, got " + std::to_string(resident.size());
  for (size_t d = 0; d < resident.size(); ++d)
    if (!(resident[d] >= 0) || !std::isfinite(resident[d]))
      return "device " + std::to_string(d) + ": resident bytes " +
             formatShortest(resident[d]) +
             " is negative or not a finite number";
  if (options.maxEvaluations < 1)
    return "fitting a placement to memory needs an evaluation budget of at "
           "least 1, got " +
           std::to_string(options.maxEvaluations);
  return {};
}

/// The result for a graph without nodes: only the resident bytes count.
MemoryFitResult fitEmptyGraph(const Graph &graph, const System &system,
                              const std::vector<double> &resident,
                              const std::vector<double> &limits) {
  const int32_t numDevices = system.numDevices();
  MemoryFitResult result;
  result.peakMemory =
      withResident(std::vector<double>(numDevices, 0.0), resident);
  result.initialPeakMemory = result.peakMemory;
  result.feasible = true;
  for (DeviceId d = 0; d < numDevices; ++d)
    result.feasible &= limits[d] >= 0;
  if (!result.feasible)
    result.diagnosis = memoryLowerBoundViolation(graph, system, resident);
  return result;
}

/// Fills `result`'s final figures (makespan, peaks, feasibility, the
/// evaluations and, when nothing fits, which device is over by how much)
/// for `result.assignment`, the best found; `input` is the placement the
/// fit started from and `final` the cost of the best found.
void completeFit(FitJudge &judge, const System &system,
                 ArrayView<DeviceId> input,
                 const std::vector<double> &resident, const FitCost &final,
                 MemoryFitResult &result) {
  const int32_t numDevices = system.numDevices();
  result.changed = !std::equal(result.assignment.begin(),
                               result.assignment.end(), input.begin());
  if (result.changed) {
    // The judge's figures for the placement returned (its last run may
    // have been another one). Every stage leaves one evaluation for this.
    judge.evaluate(result.assignment);
    result.makespan = judge.schedule().makespan;
    result.peakMemory = withResident(judge.schedule().peakMemory, resident);
  } else {
    result.makespan = result.initialMakespan;
    result.peakMemory = result.initialPeakMemory;
  }
  result.feasible = final.feasible();
  for (DeviceId d = 0; d < numDevices; ++d)
    result.feasible &= result.peakMemory[d] <= system.memoryCapacity(d);
  result.evaluations = judge.evaluations();
  if (result.feasible || !result.diagnosis.empty())
    return;
  DeviceId worst = 0;
  double worstExcess = -kInfinity;
  for (DeviceId d = 0; d < numDevices; ++d) {
    double excess = result.peakMemory[d] - system.memoryCapacity(d);
    if (excess > worstExcess) {
      worstExcess = excess;
      worst = d;
    }
  }
  result.diagnosis =
      "best found: device " + std::to_string(worst) + " peaks at " +
      formatBytes(result.peakMemory[worst]) +
      (resident.empty() || resident[worst] == 0
           ? std::string()
           : " (" + formatBytes(resident[worst]) + " resident)") +
      ", over its " + formatBytes(system.memoryCapacity(worst)) +
      " capacity";
}

/// The repairs of an infeasible placement: from the input (the descent,
/// then the annealing, on up to half the budget), then restarts from the
/// deterministic heuristics' placements, sharing the rest of the budget,
/// while nothing fits. Returns the best cost; `result.assignment` holds
/// its placement (and `restartPolicy` the restart it came from).
FitCost repairToFit(const Graph &graph, FitJudge &judge, FitCost cost,
                    const MemoryFitOptions &options, MemoryFitResult &result) {
  const int32_t numDevices = judge.simulator().numDevices();
  const double timeScale = std::max(result.initialMakespan, 1e-9);
  auto repair = [&](std::vector<DeviceId> start, FitCost startCost,
                    int64_t budget) {
    Repairer repairer(graph, judge, judge.evaluations() + budget,
                      std::move(start));
    FitCost repaired = repairer.run(startCost);
    if (!repaired.feasible())
      repaired = repairer.anneal(repaired, options.seed, timeScale);
    return std::make_pair(repaired, std::move(repairer.assignment()));
  };
  {
    auto [repaired, placed] = repair(
        result.assignment, cost,
        std::max<int64_t>(0, (options.maxEvaluations - 2) / 2));
    cost = repaired;
    result.assignment = std::move(placed);
  }
  static const char *const kRestarts[] = {"critical-path", "heft",
                                          "join-aware", "round-robin"};
  const int numRestarts = static_cast<int>(std::size(kRestarts));
  for (int i = 0; i < numRestarts && !cost.feasible(); ++i) {
    // One evaluation for the start, one left for completeFit().
    const int64_t left = options.maxEvaluations - judge.evaluations();
    if (left < 3)
      break;
    std::optional<std::vector<DeviceId>> start =
        placeWithPolicy(kRestarts[i], graph, numDevices);
    if (!start)
      continue;
    FitCost startCost = judge.evaluate(*start);
    auto [repaired, placed] = repair(std::move(*start), startCost,
                                     (left - 2) / (numRestarts - i));
    if (repaired < cost) {
      cost = repaired;
      result.assignment = std::move(placed);
      result.restartPolicy = kRestarts[i];
    }
  }
  return cost;
}

} // namespace

std::optional<MemoryFitResult> fitToMemory(const Graph &graph,
                                           const System &system,
                                           ArrayView<DeviceId> assignment,
                                           const MemoryFitOptions &options,
                                           std::string *error) {
  const int32_t numDevices = system.numDevices();
  if (std::string problem =
          checkFitInputs(graph, numDevices, assignment, options);
      !problem.empty()) {
    if (error)
      *error = std::move(problem);
    return std::nullopt;
  }
  const std::vector<double> &resident = options.residentBytes;
  std::vector<double> limits(numDevices);
  for (DeviceId d = 0; d < numDevices; ++d)
    limits[d] = system.memoryCapacity(d) -
                (resident.empty() ? 0.0 : resident[d]);
  if (graph.numNodes() == 0)
    return fitEmptyGraph(graph, system, resident, limits);
  FitJudge judge(graph, system, limits);

  MemoryFitResult result;
  result.assignment.assign(assignment.begin(), assignment.end());
  FitCost cost = judge.evaluate(assignment);
  result.initialMakespan = cost.makespan;
  result.initialPeakMemory =
      withResident(judge.schedule().peakMemory, resident);
  if (cost.feasible()) {
    result.makespan = cost.makespan;
    result.peakMemory = result.initialPeakMemory;
    result.feasible = true;
    result.evaluations = judge.evaluations();
    return result;
  }
  result.diagnosis = memoryLowerBoundViolation(graph, system, resident);
  if (!result.diagnosis.empty()) {
    completeFit(judge, system, assignment, resident, cost, result);
    return result;
  }
  cost = repairToFit(graph, judge, cost, options, result);
  int64_t searchRuns = 0;
  if (cost.feasible()) {
    // Shorten the makespan, staying feasible.
    int64_t left = options.maxEvaluations - judge.evaluations() - 1;
    if (left >= 2) {
      SearchOptions search;
      search.seed = options.seed;
      search.maxEvaluations = left;
      search.peakMemoryLimits = limits;
      std::optional<SearchResult> refined = refinePlacement(
          judge.simulator(), result.assignment, search, error);
      if (!refined)
        return std::nullopt;
      if (refined->makespan < cost.makespan) {
        result.assignment = std::move(refined->assignment);
        cost.makespan = refined->makespan;
      }
      // The search's runs are its own simulator's, not the judge's.
      searchRuns = refined->evaluations;
    }
  }
  completeFit(judge, system, assignment, resident, cost, result);
  result.evaluations += searchRuns;
  return result;
}

} // namespace doppler::placement
