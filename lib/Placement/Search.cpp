//===- Search.cpp - Simulator-judged placement refinement ----------------===//

#include "Doppler/Placement/Search.h"

#include "Doppler/Placement/Heuristics.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>

namespace doppler::placement {

namespace {

using Clock = std::chrono::steady_clock;

/// Why a node on the critical chain started when it did.
struct ChainLink {
  NodeId node;
  /// The producer whose cross-device transfer arrived last, or -1 when the
  /// node waited for its device instead (or for nothing: a source).
  NodeId lateProducer;
};

/// The seed of the automatic temperature's sampled moves: a stream apart
/// from the annealing's own (seeded with the seed itself), so that an
/// explicit temperature and the automatic one make the same moves after it.
uint64_t sampleSeed(uint64_t seed) { return seed ^ 0x7e3c5a96d14f2b81ULL; }

/// Relative makespan changes |M' - M| / M of single-node moves: every move
/// (node, other device) once when there are at most `samples`, else
/// `samples` drawn from `random`. `tryMove(v, d)` returns the makespan with
/// v on d (and leaves the placement as it was), or nothing to stop early
/// (a budget). Infinite makespans (infeasible moves) are left out.
template <typename TryMove>
std::vector<double> sampleMoveDeltas(ArrayView<DeviceId> assignment,
                                     int32_t numDevices, double makespan,
                                     SeededRandom &random, int64_t samples,
                                     TryMove &&tryMove) {
  std::vector<double> deltas;
  const int64_t numNodes = static_cast<int64_t>(assignment.size());
  if (numNodes == 0 || numDevices < 2 || samples < 1 || !(makespan > 0) ||
      !std::isfinite(makespan))
    return deltas;
  auto record = [&](NodeId v, DeviceId d) {
    std::optional<double> moved = tryMove(v, d);
    if (!moved)
      return false;
    if (std::isfinite(*moved))
      deltas.push_back(std::abs(*moved - makespan) / makespan);
    return true;
  };
  if (numNodes * (numDevices - 1) <= samples) {
    for (NodeId v = 0; v < numNodes; ++v)
      for (DeviceId d = 0; d < numDevices; ++d)
        if (d != assignment[v] && !record(v, d))
          return deltas;
    return deltas;
  }
  for (int64_t i = 0; i < samples; ++i) {
    const NodeId v =
        static_cast<NodeId>(random.below(static_cast<uint32_t>(numNodes)));
    const DeviceId d = static_cast<DeviceId>(
        (assignment[v] + 1 +
         random.below(static_cast<uint32_t>(numDevices - 1))) %
        numDevices);
    if (!record(v, d))
      break;
  }
  return deltas;
}

/// The median (the upper one of an even count) of the changes; of the
/// non-zero ones when it is 0; 0 when there are none.
double typicalOf(std::vector<double> deltas) {
  std::sort(deltas.begin(), deltas.end());
  if (deltas.empty())
    return 0;
  double median = deltas[deltas.size() / 2];
  if (median > 0)
    return median;
  auto firstChange = std::upper_bound(deltas.begin(), deltas.end(), 0.0);
  const size_t changes = static_cast<size_t>(deltas.end() - firstChange);
  return changes == 0 ? 0 : firstChange[changes / 2];
}

/// The annealing state and its moves. Moves change `current_` in place and
/// log what they changed, so undoing a rejected move costs O(moved nodes).
class Annealer {
public:
  Annealer(Simulator &judge, ArrayView<DeviceId> initial,
           const SearchOptions &options)
      : judge_(judge), graph_(judge.graph()), numDevices_(judge.numDevices()),
        options_(options), random_(options.seed),
        current_(initial.begin(), initial.end()) {
    const int32_t numNodes = graph_.numNodes();
    byDeviceStart_.reserve(numNodes);
    chain_.reserve(numNodes);
    changeLog_.reserve(numNodes);
    cluster_.reserve(numNodes);
    visitStamp_.assign(numNodes, 0);
  }

  SearchResult run();

private:
  bool budgetLeft(double *progress);
  /// The automatic temperature: typicalMoveDelta's moves, each a run of the
  /// budget; returns the typical change and sets annealBegin*_.
  double measureTemperature(SearchResult &result);
  double elapsedSeconds() const {
    return std::chrono::duration<double>(Clock::now() - begin_).count();
  }
  double evaluate();
  void keepCurrentSchedule();
  void computeCriticalChain();
  bool proposeMove();
  bool proposeRandomMove();
  bool proposeSwap();
  bool proposeNeighbourMove();
  bool proposeClusterMove();
  bool proposeCriticalMove();
  /// Moves `v` to `d`, logging the previous device for undo().
  void set(NodeId v, DeviceId d);
  void undo();
  DeviceId otherDevice(DeviceId d);
  NodeId randomNode() {
    return static_cast<NodeId>(random_.below(graph_.numNodes()));
  }

  Simulator &judge_;
  const Graph &graph_;
  const int32_t numDevices_;
  const SearchOptions options_;
  SeededRandom random_;
  Clock::time_point begin_ = Clock::now();

  std::vector<DeviceId> current_;
  double currentCost_ = 0;
  std::vector<DeviceId> best_;
  double bestCost_ = 0;
  int64_t evaluations_ = 0;
  // Where the temperature's schedule begins (after the measurement of an
  // automatic temperature): runs and seconds.
  int64_t annealBeginRuns_ = 0;
  double annealBeginSeconds_ = 0;

  // The move being tried: (node, previous device) pairs.
  std::vector<std::pair<NodeId, DeviceId>> changeLog_;

  // The current schedule, kept when a move is accepted; its critical chain
  // is derived from it only when a critical move asks for it.
  std::vector<double> start_, end_, busy_;
  bool chainStale_ = true;
  std::vector<ChainLink> chain_;

  // Scratch.
  std::vector<NodeId> byDeviceStart_;
  std::vector<NodeId> neighbours_;
  std::vector<NodeId> cluster_;
  std::vector<uint32_t> visitStamp_;
  uint32_t stamp_ = 0;
};

double Annealer::evaluate() {
  ++evaluations_;
  double makespan = judge_.run(current_);
  const std::vector<double> &limits = options_.peakMemoryLimits;
  if (!limits.empty()) {
    const Schedule &schedule = judge_.schedule();
    for (size_t d = 0; d < limits.size(); ++d)
      if (schedule.peakMemoryOf(static_cast<DeviceId>(d)) > limits[d])
        return std::numeric_limits<double>::infinity();
  }
  return makespan;
}

bool Annealer::budgetLeft(double *progress) {
  // The fraction of the budget spent since the annealing began.
  double fraction = 0;
  if (options_.maxEvaluations > 0) {
    if (evaluations_ >= options_.maxEvaluations)
      return false;
    fraction = static_cast<double>(evaluations_ - annealBeginRuns_) /
               static_cast<double>(options_.maxEvaluations - annealBeginRuns_);
  }
  if (options_.timeBudgetSeconds > 0) {
    double elapsed = elapsedSeconds();
    if (elapsed >= options_.timeBudgetSeconds)
      return false;
    fraction = std::max(fraction,
                        (elapsed - annealBeginSeconds_) /
                            (options_.timeBudgetSeconds - annealBeginSeconds_));
  }
  if (options_.targetMakespan > 0 && bestCost_ <= options_.targetMakespan)
    return false;
  *progress = fraction;
  return true;
}

void Annealer::keepCurrentSchedule() {
  // Called right after the run of `current_`.
  const Schedule &schedule = judge_.schedule();
  start_.assign(schedule.start.begin(), schedule.start.end());
  end_.assign(schedule.end.begin(), schedule.end.end());
  busy_.assign(schedule.deviceBusy.begin(), schedule.deviceBusy.end());
  chainStale_ = true;
}

void Annealer::computeCriticalChain() {
  chainStale_ = false;
  chain_.clear();
  const int32_t numNodes = graph_.numNodes();
  // A failed run (extended modes) may leave no complete schedule.
  if (numNodes == 0 || static_cast<int32_t>(start_.size()) != numNodes ||
      static_cast<int32_t>(end_.size()) != numNodes ||
      static_cast<int32_t>(busy_.size()) != numDevices_)
    return;

  // Nodes by (device, start) to find the node a device ran just before.
  byDeviceStart_.resize(numNodes);
  for (NodeId v = 0; v < numNodes; ++v)
    byDeviceStart_[v] = v;
  auto earlier = [&](NodeId a, NodeId b) {
    if (current_[a] != current_[b])
      return current_[a] < current_[b];
    if (start_[a] != start_[b])
      return start_[a] < start_[b];
    return end_[a] < end_[b];
  };
  std::sort(byDeviceStart_.begin(), byDeviceStart_.end(), earlier);
  auto previousOnDevice = [&](NodeId v) -> NodeId {
    // The first node of v's device starting when v starts; the one before
    // it, if on the same device, ended last before v began.
    auto it = std::lower_bound(
        byDeviceStart_.begin(), byDeviceStart_.end(), v,
        [&](NodeId a, NodeId key) {
          if (current_[a] != current_[key])
            return current_[a] < current_[key];
          return start_[a] < start_[key];
        });
    if (it == byDeviceStart_.begin())
      return -1;
    NodeId previous = *(it - 1);
    return current_[previous] == current_[v] ? previous : -1;
  };

  NodeId last = 0;
  for (NodeId v = 1; v < numNodes; ++v)
    if (end_[v] > end_[last])
      last = v;

  // Walk back along whatever made each node start when it did: the input
  // that arrived last, else the node its device ran before. Times never
  // increase along the walk; bound it anyway.
  NodeId v = last;
  for (int32_t steps = 0; v >= 0 && steps < numNodes; ++steps) {
    ChainLink link{v, -1};
    NodeId next = -1;
    const double start = start_[v];
    ArrayView<NodeId> preds = graph_.predecessors(v);
    ArrayView<int32_t> edges = graph_.predecessorEdges(v);
    for (size_t i = 0; i < preds.size(); ++i) {
      NodeId u = preds[i];
      bool crosses = current_[u] != current_[v];
      double arrival = end_[u] + (crosses ? graph_.edgeCost(edges[i]) : 0.0);
      if (arrival >= start) {
        next = u;
        link.lateProducer = crosses ? u : -1;
        if (crosses)
          break; // a transfer on the chain: the most useful thing to know
      }
    }
    if (next < 0) {
      NodeId previous = previousOnDevice(v);
      if (previous >= 0 && end_[previous] >= start)
        next = previous;
    }
    chain_.push_back(link);
    v = next;
  }
}

DeviceId Annealer::otherDevice(DeviceId d) {
  DeviceId other =
      static_cast<DeviceId>(random_.below(static_cast<uint32_t>(numDevices_ - 1)));
  return other >= d ? other + 1 : other;
}

void Annealer::set(NodeId v, DeviceId d) {
  changeLog_.emplace_back(v, current_[v]);
  current_[v] = d;
}

void Annealer::undo() {
  for (auto it = changeLog_.rbegin(); it != changeLog_.rend(); ++it)
    current_[it->first] = it->second;
}

bool Annealer::proposeRandomMove() {
  NodeId v = randomNode();
  set(v, otherDevice(current_[v]));
  return true;
}

bool Annealer::proposeSwap() {
  NodeId v = randomNode();
  // A few tries to find a partner on another device.
  for (int tries = 0; tries < 8; ++tries) {
    NodeId w = randomNode();
    if (current_[w] == current_[v])
      continue;
    DeviceId dv = current_[v];
    set(v, current_[w]);
    set(w, dv);
    return true;
  }
  return false;
}

bool Annealer::proposeNeighbourMove() {
  // Join a producer or consumer elsewhere: saves a transfer.
  NodeId v = randomNode();
  neighbours_.clear();
  for (NodeId u : graph_.predecessors(v))
    if (current_[u] != current_[v])
      neighbours_.push_back(u);
  for (NodeId w : graph_.successors(v))
    if (current_[w] != current_[v])
      neighbours_.push_back(w);
  if (neighbours_.empty())
    return false;
  NodeId n = neighbours_[random_.below(neighbours_.size())];
  set(v, current_[n]);
  return true;
}

bool Annealer::proposeClusterMove() {
  // Moves a connected group of nodes that share a device. Single moves
  // cannot cross the barrier where splitting a group costs a transfer
  // before it saves anything (e.g. two chains on one device).
  NodeId seed = randomNode();
  const DeviceId from = current_[seed];
  // Sizes 2..17, smaller ones likelier.
  const uint32_t size = 2 + random_.below(1 + random_.below(16));
  if (++stamp_ == 0) {
    std::fill(visitStamp_.begin(), visitStamp_.end(), 0);
    stamp_ = 1;
  }
  cluster_.clear();
  cluster_.push_back(seed);
  visitStamp_[seed] = stamp_;
  for (size_t head = 0; head < cluster_.size() && cluster_.size() < size;
       ++head) {
    NodeId v = cluster_[head];
    auto visit = [&](NodeId w) {
      if (cluster_.size() < size && visitStamp_[w] != stamp_ &&
          current_[w] == from) {
        visitStamp_[w] = stamp_;
        cluster_.push_back(w);
      }
    };
    for (NodeId w : graph_.successors(v))
      visit(w);
    for (NodeId u : graph_.predecessors(v))
      visit(u);
  }
  const DeviceId to = otherDevice(from);
  for (NodeId v : cluster_)
    set(v, to);
  return true;
}

bool Annealer::proposeCriticalMove() {
  if (chainStale_)
    computeCriticalChain();
  if (chain_.empty())
    return false;
  const ChainLink &link = chain_[random_.below(chain_.size())];
  NodeId v = link.node;
  if (link.lateProducer >= 0) {
    // A transfer is on the chain: put both ends together, either way.
    NodeId u = link.lateProducer;
    if (random_.below(2) == 0)
      set(v, current_[u]);
    else
      set(u, current_[v]);
    return true;
  }
  // The node waited for its device (or is a source): move it to the device
  // with the least work, or to a random one.
  DeviceId target = 0;
  if (random_.below(2) == 0) {
    for (DeviceId d = 1; d < numDevices_; ++d)
      if (busy_[d] < busy_[target])
        target = d;
  } else {
    target = otherDevice(current_[v]);
  }
  if (target == current_[v])
    target = otherDevice(current_[v]);
  set(v, target);
  return true;
}

bool Annealer::proposeMove() {
  double pick = random_.uniform();
  if (options_.criticalMoves && pick < 0.3)
    return proposeCriticalMove();
  if (pick < 0.5)
    return proposeNeighbourMove();
  if (pick < 0.7)
    return proposeRandomMove();
  if (pick < 0.85)
    return proposeSwap();
  return proposeClusterMove();
}

double Annealer::measureTemperature(SearchResult &result) {
  // At most an eighth of the budget, so that the annealing keeps the rest.
  int64_t samples = std::max(0, options_.temperatureSamples);
  if (options_.maxEvaluations > 0)
    samples = std::min(samples, options_.maxEvaluations / 8);
  const double secondsCap = options_.timeBudgetSeconds / 8;
  const int64_t runsBefore = evaluations_;
  SeededRandom random(sampleSeed(options_.seed));
  auto tryMove = [&](NodeId v, DeviceId d) -> std::optional<double> {
    if (options_.timeBudgetSeconds > 0 && elapsedSeconds() >= secondsCap)
      return std::nullopt;
    if (options_.targetMakespan > 0 && bestCost_ <= options_.targetMakespan)
      return std::nullopt;
    changeLog_.clear();
    set(v, d);
    const double cost = evaluate();
    if (cost < bestCost_) {
      // Seen, so kept: the result is the best placement ever simulated.
      bestCost_ = cost;
      best_ = current_;
      ++result.improvements;
    }
    undo();
    return cost;
  };
  const double typical = typicalOf(sampleMoveDeltas(
      current_, numDevices_, currentCost_, random, samples, tryMove));
  result.temperatureRuns = evaluations_ - runsBefore;
  annealBeginRuns_ = evaluations_;
  annealBeginSeconds_ = elapsedSeconds();
  return typical;
}

SearchResult Annealer::run() {
  SearchResult result;
  currentCost_ = evaluate();
  result.initialMakespan = currentCost_;
  best_ = current_;
  bestCost_ = currentCost_;
  keepCurrentSchedule();

  const bool canMove = numDevices_ > 1 && graph_.numNodes() > 0;
  const double initialTemperature =
      options_.initialTemperature
          ? *options_.initialTemperature
          : (canMove ? measureTemperature(result) : 0.0) *
                kAutomaticTemperatureScale;
  const double finalTemperature =
      options_.finalTemperature
          ? *options_.finalTemperature
          : initialTemperature * kAutomaticTemperatureFall;
  result.initialTemperature = initialTemperature;
  result.finalTemperature = finalTemperature;
  const double temperatureRatio =
      initialTemperature > 0 && finalTemperature > 0
          ? finalTemperature / initialTemperature
          : 1.0;
  double progress = 0;
  while (canMove && budgetLeft(&progress)) {
    changeLog_.clear();
    if (!proposeMove() || changeLog_.empty())
      continue;
    const double cost = evaluate();
    bool accept = cost <= currentCost_;
    if (!accept && std::isfinite(cost) && std::isfinite(currentCost_) &&
        currentCost_ > 0 && initialTemperature > 0) {
      double temperature =
          initialTemperature * std::pow(temperatureRatio, progress);
      double worsening = (cost - currentCost_) / currentCost_;
      accept = random_.uniform() < std::exp(-worsening / temperature);
    }
    if (!accept) {
      undo();
      continue;
    }
    ++result.acceptedMoves;
    currentCost_ = cost;
    if (cost < bestCost_) {
      bestCost_ = cost;
      best_ = current_;
      ++result.improvements;
    }
    keepCurrentSchedule();
  }

  result.assignment = std::move(best_);
  result.makespan = bestCost_;
  result.evaluations = evaluations_;
  result.seconds =
      std::chrono::duration<double>(Clock::now() - begin_).count();
  return result;
}

} // namespace

double typicalMoveDelta(Simulator &judge, ArrayView<DeviceId> start,
                        uint64_t seed, int32_t samples) {
  std::vector<DeviceId> moved(start.begin(), start.end());
  const double makespan = judge.run(moved);
  SeededRandom random(sampleSeed(seed));
  auto tryMove = [&](NodeId v, DeviceId d) -> std::optional<double> {
    const DeviceId old = moved[v];
    moved[v] = d;
    const double cost = judge.run(moved);
    moved[v] = old;
    return cost;
  };
  return typicalOf(sampleMoveDeltas(start, judge.numDevices(), makespan,
                                    random, samples, tryMove));
}

std::optional<SearchResult> refinePlacement(Simulator &judge,
                                            ArrayView<DeviceId> initial,
                                            const SearchOptions &options,
                                            std::string *error) {
  if (!validateAssignment(judge.graph(), judge.numDevices(), initial, error))
    return std::nullopt;
  if (options.timeBudgetSeconds <= 0 && options.maxEvaluations <= 0) {
    if (error)
      *error = "search needs a time budget or an evaluation budget";
    return std::nullopt;
  }
  if (!options.peakMemoryLimits.empty()) {
    if (!judge.options().trackMemory) {
      if (error)
        *error = "peak memory limits need a judge that tracks memory";
      return std::nullopt;
    }
    if (options.peakMemoryLimits.size() !=
        static_cast<size_t>(judge.numDevices())) {
      if (error)
        *error = "expected " + std::to_string(judge.numDevices()) +
                 " peak memory limits, got " +
                 std::to_string(options.peakMemoryLimits.size());
      return std::nullopt;
    }
  }
  Annealer annealer(judge, initial, options);
  return annealer.run();
}

std::optional<SearchResult> refinePlacement(const Graph &graph,
                                            int32_t numDevices,
                                            ArrayView<DeviceId> initial,
                                            const SearchOptions &options,
                                            std::string *error) {
  if (numDevices < 1) {
    if (error)
      *error = "device count must be at least 1, got " +
               std::to_string(numDevices);
    return std::nullopt;
  }
  Simulator judge(graph, numDevices);
  return refinePlacement(judge, initial, options, error);
}

} // namespace doppler::placement
