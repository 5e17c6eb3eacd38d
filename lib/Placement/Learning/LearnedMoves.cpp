//===- LearnedMoves.cpp - Learned improvement moves (issue 32) ------------===//
//
// See LearnedMoves.h. MoveState holds the current placement, its schedule
// (from the judge's last run) and what the features read from it: the
// critical chain, each node's data-ready time and latest input, and the
// longest path below each node under the current placement.
//
//===----------------------------------------------------------------------===//

#include "Doppler/Placement/Learning/LearnedMoves.h"
#include "Doppler/Placement/Learning/LearnedPolicy.h"
#include "Doppler/Support/Stopwatch.h"

#include "ModelNumbers.h"
#include "MoveState.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

using namespace doppler::placement;

const std::array<const char *, kMoveFeatureCount>
    doppler::placement::kMoveFeatureNames = {
        "on_chain",         "near_chain",         "slack",
        "comm_delta",       "ready_gain",         "device_wait",
        "load_delta",       "compute",            "late_producer_on_d",
        "consumers_on_d",   "chain_x_ready_gain", "chain_x_comm_delta",
        "overload"};

namespace {
using Clock = std::chrono::steady_clock;
} // namespace

namespace doppler::placement::moves_detail {

void MoveState::sortByDevice() {
  const int32_t n = graph_.numNodes();
  auto before = [&](NodeId a, NodeId b) {
    if (current[a] != current[b])
      return current[a] < current[b];
    if (start_[a] != start_[b])
      return start_[a] < start_[b];
    return a < b;
  };
  // From the last kept schedule's order, a few moves ago, the order is
  // nearly sorted: insertion sort, O(n + displacement), and a full sort
  // only past 8n shifts (the result is the same: the order is total).
  bool sorted = static_cast<int32_t>(byDevice_.size()) == n;
  int64_t shifts = 0;
  for (int32_t i = 1; sorted && i < n; ++i) {
    const NodeId x = byDevice_[i];
    int32_t j = i;
    for (; j > 0 && before(x, byDevice_[j - 1]) && shifts <= 8LL * n; --j)
      byDevice_[j] = byDevice_[j - 1], ++shifts;
    byDevice_[j] = x;
    sorted = shifts <= 8LL * n;
  }
  if (!sorted) {
    // By device (a counting sort), then each device's nodes by (start,
    // id) from a contiguous array of keys: the same total order.
    const int32_t numDevices = judge_.numDevices();
    std::vector<int32_t> begin(numDevices + 1, 0);
    for (NodeId v = 0; v < n; ++v)
      ++begin[current[v] + 1];
    for (DeviceId d = 0; d < numDevices; ++d)
      begin[d + 1] += begin[d];
    std::vector<std::pair<double, NodeId>> keys(n);
    std::vector<int32_t> fill(begin.begin(), begin.end() - 1);
    for (NodeId v = 0; v < n; ++v)
      keys[fill[current[v]]++] = {start_[v], v};
    byDevice_.resize(n);
    for (DeviceId d = 0; d < numDevices; ++d) {
      std::sort(keys.begin() + begin[d], keys.begin() + begin[d + 1]);
      for (int32_t i = begin[d]; i < begin[d + 1]; ++i)
        byDevice_[i] = keys[i].second;
    }
  }
}

void MoveState::keep(const Schedule &schedule) {
  const int32_t n = graph_.numNodes();
  start_.assign(schedule.start.begin(), schedule.start.end());
  end_.assign(schedule.end.begin(), schedule.end.end());
  busy_.assign(schedule.deviceBusy.begin(), schedule.deviceBusy.end());
  makespan_ = std::max(schedule.makespan, 1e-12);
  maxBusy_ = busy_.empty() ? 0 : *std::max_element(busy_.begin(), busy_.end());
  const double eps = 1e-9 * makespan_;

  // Data-ready time and the input that arrived last (a crossing one among
  // equals: that transfer is what a move can save).
  ready_.assign(n, 0);
  lateProducer_.assign(n, -1);
  for (NodeId v = 0; v < n; ++v) {
    ArrayView<NodeId> preds = graph_.predecessors(v);
    ArrayView<int32_t> edges = graph_.predecessorEdges(v);
    auto arrival = [&](size_t i) {
      return end_[preds[i]] +
             (current[preds[i]] != current[v] ? graph_.edgeCost(edges[i]) : 0.0);
    };
    for (size_t i = 0; i < preds.size(); ++i)
      ready_[v] = std::max(ready_[v], arrival(i));
    for (size_t i = 0; i < preds.size(); ++i)
      if (current[preds[i]] != current[v] && arrival(i) >= ready_[v] - eps) {
        lateProducer_[v] = preds[i];
        break;
      }
  }

  // The longest path below each node under this placement (no contention).
  tail_.assign(n, 0);
  const std::vector<NodeId> &order = graph_.topologicalOrder();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    NodeId v = *it;
    for (int32_t e = graph_.succBegin(v); e < graph_.succEnd(v); ++e) {
      NodeId w = graph_.edgeTarget(e);
      double via = (current[w] != current[v] ? graph_.edgeCost(e) : 0.0) +
                   graph_.computeCost(w) + tail_[w];
      tail_[v] = std::max(tail_[v], via);
    }
  }

  // The critical chain: back from the last node along whatever made each
  // node start when it did (its latest input, else the node its device ran
  // before it).
  sortByDevice();
  previous_.assign(n, -1);
  next_.assign(n, -1);
  for (int32_t i = 1; i < n; ++i)
    if (current[byDevice_[i]] == current[byDevice_[i - 1]]) {
      previous_[byDevice_[i]] = byDevice_[i - 1];
      next_[byDevice_[i - 1]] = byDevice_[i];
    }
  near_.assign(n, 0);
  chain_.clear();
  chainTransfer_ = chainQueued_ = 0;
  NodeId v = -1;
  for (NodeId u = 0; u < n; ++u)
    if (v < 0 || end_[u] > end_[v])
      v = u;
  while (v >= 0 && near_[v] != 2) {
    near_[v] = 2;
    chain_.push_back(v);
    NodeId next = -1;
    if (graph_.inDegree(v) > 0 && ready_[v] >= start_[v] - eps) {
      if (lateProducer_[v] >= 0) {
        next = lateProducer_[v];
        ArrayView<NodeId> preds = graph_.predecessors(v);
        ArrayView<int32_t> edges = graph_.predecessorEdges(v);
        for (size_t i = 0; i < preds.size(); ++i)
          if (preds[i] == next) {
            chainTransfer_ += graph_.edgeCost(edges[i]);
            break;
          }
      } else {
        for (NodeId u : graph_.predecessors(v))
          if (end_[u] >= ready_[v] - eps) {
            next = u;
            break;
          }
      }
    } else if (previous_[v] >= 0 && end_[previous_[v]] >= start_[v] - eps) {
      next = previous_[v];
      chainQueued_ += graph_.computeCost(next);
    }
    v = next;
  }
  candidates_ = chain_;
  for (NodeId c : chain_) {
    auto add = [&](NodeId w) {
      if (near_[w] == 0) {
        near_[w] = 1;
        candidates_.push_back(w);
      }
    };
    for (NodeId u : graph_.predecessors(c))
      add(u);
    for (NodeId w : graph_.successors(c))
      add(w);
  }
}

void MoveState::features(NodeId v, DeviceId d, MoveFeatures &out) const {
  const DeviceId here = current[v];
  const double m = makespan_;
  double commDelta = 0, readyOnD = 0, toD = 0, outTotal = 0;
  ArrayView<NodeId> preds = graph_.predecessors(v);
  ArrayView<int32_t> edges = graph_.predecessorEdges(v);
  for (size_t i = 0; i < preds.size(); ++i) {
    const DeviceId du = current[preds[i]];
    const double cost = graph_.edgeCost(edges[i]);
    commDelta += cost * ((du != d) - (du != here));
    readyOnD = std::max(readyOnD, end_[preds[i]] + (du != d ? cost : 0.0));
  }
  for (int32_t e = graph_.succBegin(v); e < graph_.succEnd(v); ++e) {
    const DeviceId dw = current[graph_.edgeTarget(e)];
    const double cost = graph_.edgeCost(e);
    commDelta += cost * ((dw != d) - (dw != here));
    outTotal += cost;
    if (dw == d)
      toD += cost;
  }
  const double chain = onChain(v) ? 1.0 : 0.0;
  const double readyGain = (ready_[v] - readyOnD) / m;
  out[0] = chain;
  out[1] = near_[v] == 1 ? 1.0 : 0.0;
  out[2] = std::max(0.0, m - end_[v] - tail_[v]) / m;
  out[3] = commDelta / m;
  out[4] = readyGain;
  out[5] = std::max(0.0, start_[v] - ready_[v]) / m;
  out[6] = (busy_[d] - busy_[here]) / m;
  out[7] = graph_.computeCost(v) / m;
  out[8] = lateProducer_[v] >= 0 && current[lateProducer_[v]] == d ? 1.0 : 0.0;
  out[9] = outTotal > 0 ? toD / outTotal : 0.0;
  out[10] = chain * readyGain;
  out[11] = chain * commDelta / m;
  out[12] = std::max(0.0, busy_[d] + graph_.computeCost(v) - maxBusy_) / m;
}

PlacementGainAnalysis::Side MoveState::side() const {
  PlacementGainAnalysis::Side s;
  s.makespan = makespan_;
  s.chainNodes = static_cast<int32_t>(chain_.size());
  for (NodeId v : chain_)
    s.chainCompute += graph_.computeCost(v);
  s.chainTransfer = chainTransfer_;
  s.chainQueued = chainQueued_;
  s.chainWait = std::max(0.0, makespan_ - s.chainCompute - s.chainTransfer);
  for (int32_t e = 0; e < graph_.numEdges(); ++e)
    if (current[graph_.edgeSource(e)] != current[graph_.edgeTarget(e)])
      s.crossCommunication += graph_.edgeCost(e);
  s.maxBusy = maxBusy_;
  for (double b : busy_)
    s.meanBusy += b / std::max<size_t>(1, busy_.size());
  return s;
}

/// Every (candidate node, other device) pair with its model score.
void scoreCandidates(const MoveState &state, int32_t numDevices,
                     const MoveModel &model, std::vector<Candidate> &out) {
  out.clear();
  MoveFeatures f;
  for (NodeId v : state.candidateNodes())
    for (DeviceId d = 0; d < numDevices; ++d)
      if (d != state.current[v]) {
        state.features(v, d, f);
        out.push_back({model.score(f), v, d});
      }
}

} // namespace doppler::placement::moves_detail

namespace {

/// Reorders the best-first `candidates` so that each try is, with
/// probability `explore`, a uniformly drawn untried candidate, else the
/// best-scored untried one.
void mixInRandomTries(std::vector<moves_detail::Candidate> &candidates,
                      double explore,
                      SeededRandom &random) {
  const size_t n = candidates.size();
  std::vector<uint32_t> shuffled(n);
  for (size_t i = 0; i < n; ++i)
    shuffled[i] = static_cast<uint32_t>(i);
  for (size_t i = n; i > 1; --i)
    std::swap(shuffled[i - 1], shuffled[random.below(static_cast<uint32_t>(i))]);
  std::vector<uint8_t> used(n, 0);
  std::vector<moves_detail::Candidate> order;
  order.reserve(n);
  size_t best = 0, drawn = 0;
  while (order.size() < n) {
    size_t pick;
    if (random.uniform() < explore) {
      while (used[shuffled[drawn]])
        ++drawn;
      pick = shuffled[drawn];
    } else {
      while (used[best])
        ++best;
      pick = best;
    }
    used[pick] = 1;
    order.push_back(candidates[pick]);
  }
  candidates = std::move(order);
}

} // namespace

double MoveModel::score(const moves_detail::MoveFeatures &features) const {
  double z = bias;
  for (int i = 0; i < kMoveFeatureCount; ++i)
    z += weight[i] * (features[i] - mean[i]) / scale[i];
  return z;
}

const MoveModel &MoveModel::embedded() {
  static const MoveModel model = [] {
    static constexpr double kNumbers[] = {
#include "LearnedMovesModel.inc"
    };
    static_assert(sizeof kNumbers / sizeof kNumbers[0] ==
                      3 * kMoveFeatureCount + 1,
                  "LearnedMovesModel.inc: expected 3 x 13 + 1 numbers");
    MoveModel m;
    for (int i = 0; i < kMoveFeatureCount; ++i) {
      m.mean[i] = kNumbers[i];
      m.scale[i] = kNumbers[kMoveFeatureCount + i];
      m.weight[i] = kNumbers[2 * kMoveFeatureCount + i];
    }
    m.bias = kNumbers[3 * kMoveFeatureCount];
    return m;
  }();
  return model;
}

std::optional<std::vector<double>>
doppler::placement::parseModelNumbers(std::string_view text,
                                      const std::string &what,
                                      std::string *error) {
  std::vector<double> numbers;
  std::istringstream lines{std::string(text)};
  std::string line;
  while (std::getline(lines, line)) {
    size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line.compare(first, 2, "//") == 0)
      continue;
    std::replace(line.begin(), line.end(), ',', ' ');
    std::istringstream words(line);
    std::string word;
    while (words >> word) {
      char *endPtr = nullptr;
      double value = std::strtod(word.c_str(), &endPtr);
      if (endPtr != word.c_str() + word.size() || !std::isfinite(value)) {
        if (error)
          *error = what + ": '" + word + "' is not a finite number";
        return std::nullopt;
      }
      numbers.push_back(value);
    }
  }
  return numbers;
}

std::optional<MoveModel>
doppler::placement::parseMoveModel(std::string_view text, std::string *error) {
  std::optional<std::vector<double>> parsed =
      parseModelNumbers(text, "move model", error);
  if (!parsed)
    return std::nullopt;
  const std::vector<double> &numbers = *parsed;
  if (numbers.size() != 3 * kMoveFeatureCount + 1) {
    if (error)
      *error = "move model: expected " +
               std::to_string(3 * kMoveFeatureCount + 1) + " numbers, got " +
               std::to_string(numbers.size());
    return std::nullopt;
  }
  MoveModel m;
  for (int i = 0; i < kMoveFeatureCount; ++i) {
    m.mean[i] = numbers[i];
    m.scale[i] = numbers[kMoveFeatureCount + i];
    m.weight[i] = numbers[2 * kMoveFeatureCount + i];
    if (!(m.scale[i] > 0)) {
      if (error)
        *error = "move model: scale of " + std::string(kMoveFeatureNames[i]) +
                 " must be positive";
      return std::nullopt;
    }
  }
  m.bias = numbers.back();
  return m;
}

std::optional<MoveModel>
doppler::placement::readMoveModel(const std::string &path,
                                  std::string *error) {
  std::ifstream in(path);
  if (!in) {
    if (error)
      *error = "cannot read move model '" + path + "'";
    return std::nullopt;
  }
  std::stringstream text;
  text << in.rdbuf();
  std::optional<MoveModel> model = parseMoveModel(text.str(), error);
  if (!model && error)
    *error = path + ": " + *error;
  return model;
}

bool doppler::placement::writeMoveModel(const MoveModel &model,
                                        const std::string &path,
                                        const std::string &comment,
                                        std::string *error) {
  std::string text = "// doppler learned-moves model: means, scales, weights "
                     "(";
  for (int i = 0; i < kMoveFeatureCount; ++i)
    text += std::string(i ? ", " : "") + kMoveFeatureNames[i];
  text += "), bias\n";
  std::istringstream commentLines(comment);
  std::string line;
  while (std::getline(commentLines, line))
    text += "// " + line + "\n";
  char number[40];
  auto row = [&](const std::array<double, kMoveFeatureCount> &values) {
    for (double value : values) {
      std::snprintf(number, sizeof number, "%.17g, ", value);
      text += number;
    }
    text += "\n";
  };
  row(model.mean);
  row(model.scale);
  row(model.weight);
  std::snprintf(number, sizeof number, "%.17g\n", model.bias);
  text += number;
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary);
    out << text;
    if (!out) {
      if (error)
        *error = "cannot write move model '" + path + "'";
      return false;
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    if (error)
      *error = "cannot write move model '" + path + "'";
    return false;
  }
  return true;
}

std::optional<LearnedMovesResult> doppler::placement::improveWithLearnedMoves(
    Simulator &judge, ArrayView<DeviceId> start, const MoveModel &model,
    const LearnedMovesOptions &options, std::string *error) {
  if (!validateAssignment(judge.graph(), judge.numDevices(), start, error))
    return std::nullopt;
  using namespace moves_detail;
  if (options.estimate)
    return improveWithEstimatedMoves(judge, start, model, options);
  const Clock::time_point begin = Clock::now();
  MoveState state(judge, start);
  LearnedMovesResult result;
  Cost cost = state.evaluate();
  result.initialMakespan = cost.makespan;
  state.keep();
  const int32_t numDevices = judge.numDevices();
  SeededRandom random(options.seed);
  std::vector<Candidate> candidates;
  auto budgetLeft = [&] {
    return state.evaluations - 1 < options.maxEvaluations &&
           (options.seconds <= 0 || secondsSince(begin) < options.seconds);
  };
  bool improved = numDevices > 1;
  while (improved && budgetLeft()) {
    improved = false;
    scoreCandidates(state, numDevices, model, candidates);
    if (options.randomOrder) {
      for (size_t i = candidates.size(); i > 1; --i)
        std::swap(candidates[i - 1],
                  candidates[random.below(static_cast<uint32_t>(i))]);
    } else {
      std::sort(candidates.begin(), candidates.end(), scoredBefore);
      if (options.explore > 0)
        mixInRandomTries(candidates, options.explore, random);
    }
    for (const Candidate &c : candidates) {
      if (!budgetLeft())
        break;
      const DeviceId old = state.current[c.node];
      state.current[c.node] = c.device;
      Cost tried = state.evaluate();
      if (tried.betterThan(cost)) {
        cost = tried;
        state.keep();
        ++result.accepted;
        improved = true;
        break;
      }
      state.current[c.node] = old;
    }
  }
  // The last run may have been a rejected move: the kept placement's
  // makespan is `cost`.
  result.makespan = cost.makespan;
  result.assignment = std::move(state.current);
  result.evaluations = state.evaluations - 1;
  result.seconds = secondsSince(begin);
  return result;
}

namespace {

/// The better of critical path and join-aware by `judge` (critical path on
/// a tie), placed by one placeCriticalPathAndJoinAware call, with the
/// judge's schedule of it in `schedule` where given (start, end, busy and
/// makespan: what MoveState reads). Times go to `profile` where given.
std::optional<std::vector<DeviceId>>
betterHeuristicStart(Simulator &judge, const PolicyOptions &heuristic,
                     std::string_view *name, double *makespan,
                     Schedule *schedule, LearnedMovesProfile *profile,
                     std::string *error) {
  const int32_t numDevices = judge.numDevices();
  if (numDevices < 1) {
    if (error)
      *error = "device count must be at least 1, got " +
               std::to_string(numDevices);
    return std::nullopt;
  }
  Clock::time_point from = Clock::now();
  CriticalPathAndJoinAware placed = placeCriticalPathAndJoinAware(
      judge.graph(), numDevices, heuristic.estimate, heuristic.system);
  if (profile)
    profile->heuristics += doppler::secondsSince(from);
  from = Clock::now();
  auto copy = [&] {
    const Schedule &ran = judge.schedule();
    schedule->start.assign(ran.start.begin(), ran.start.end());
    schedule->end.assign(ran.end.begin(), ran.end.end());
    schedule->deviceBusy.assign(ran.deviceBusy.begin(), ran.deviceBusy.end());
    schedule->makespan = ran.makespan;
  };
  const double criticalMakespan = judge.run(placed.criticalPath);
  if (schedule)
    copy();
  const double joinMakespan = judge.run(placed.joinAware);
  const bool join = joinMakespan < criticalMakespan;
  if (join && schedule)
    copy();
  if (profile)
    profile->startRuns += doppler::secondsSince(from);
  if (name)
    *name = join ? "join-aware" : "critical-path";
  if (makespan)
    *makespan = join ? joinMakespan : criticalMakespan;
  return join ? std::move(placed.joinAware) : std::move(placed.criticalPath);
}

} // namespace

std::optional<std::vector<DeviceId>> doppler::placement::placeBetterHeuristic(
    Simulator &judge, const PolicyOptions &heuristic, std::string_view *name,
    double *makespan, std::string *error) {
  return betterHeuristicStart(judge, heuristic, name, makespan, nullptr,
                              nullptr, error);
}

std::optional<LearnedMovesResult> doppler::placement::placeWithLearnedMoves(
    Simulator &judge, const PolicyOptions &heuristic, const MoveModel &model,
    const LearnedMovesOptions &options, std::string *error) {
  const Clock::time_point begin = Clock::now();
  LearnedMovesProfile profile;
  Schedule schedule;
  std::optional<std::vector<DeviceId>> best = betterHeuristicStart(
      judge, heuristic, nullptr, nullptr, &schedule, &profile, error);
  if (!best)
    return std::nullopt;
  LearnedMovesOptions rest = options;
  if (options.seconds > 0)
    rest.seconds = std::max(1e-6, options.seconds - secondsSince(begin));
  std::optional<LearnedMovesResult> result;
  if (options.estimate) {
    // The climb starts from the schedule just simulated: no third run.
    result = moves_detail::improveWithEstimatedMoves(judge, *best, model, rest,
                                                     &schedule);
  } else {
    result = improveWithLearnedMoves(judge, *best, model, rest, error);
  }
  if (result) {
    result->seconds = secondsSince(begin);
    result->profile.heuristics = profile.heuristics;
    result->profile.startRuns += profile.startRuns;
  }
  return result;
}

int64_t doppler::placement::defaultMoveEvaluations(const Graph &graph,
                                                   int32_t numDevices) {
  const double visits =
      graph.numNodes() + static_cast<double>(graph.numEdges()) + numDevices;
  return std::clamp<int64_t>(static_cast<int64_t>(2e7 / std::max(1.0, visits)),
                             16, 2048);
}

int64_t doppler::placement::defaultMoveWork(const Graph &graph,
                                            int32_t numDevices) {
  const double pass = (graph.numNodes() + static_cast<double>(graph.numEdges())) *
                      (1 + std::max(0, numDevices) / 16.0);
  return std::max<int64_t>(1, static_cast<int64_t>(kMoveWorkPerPass * pass));
}

std::optional<std::vector<DeviceId>>
doppler::placement::placeWithLearnedMovesPolicy(
    const Graph &graph, int32_t numDevices, const PolicyOptions &heuristic,
    const LearnedPolicyOptions &learned, std::string *error) {
  if (numDevices < 1) {
    if (error)
      *error = "device count must be at least 1, got " +
               std::to_string(numDevices);
    return std::nullopt;
  }
  std::optional<MoveModel> model = MoveModel::embedded();
  if (!learned.modelPath.empty() &&
      !(model = readMoveModel(learned.modelPath, error)))
    return std::nullopt;
  LearnedMovesOptions options;
  // By default a budget of work that keeps the policy near 3x the better
  // heuristic's time (issue 32's bar); --move-evaluations N: N runs.
  options.maxEvaluations = learned.moveEvaluations >= 0
                               ? learned.moveEvaluations
                               : defaultMoveEvaluations(graph, numDevices);
  if (learned.moveEvaluations < 0)
    options.maxWork = defaultMoveWork(graph, numDevices);
  options.seed = heuristic.seed;
  options.estimate = true;
  Simulator judge(graph, numDevices);
  std::optional<LearnedMovesResult> placed =
      placeWithLearnedMoves(judge, heuristic, *model, options, error);
  if (!placed)
    return std::nullopt;
  return std::move(placed->assignment);
}

void doppler::placement::collectMoveExamples(Simulator &judge,
                                             ArrayView<DeviceId> start,
                                             int32_t rounds, int32_t perRound,
                                             uint64_t seed,
                                             std::vector<MoveExample> &out) {
  using namespace moves_detail;
  const int32_t numDevices = judge.numDevices();
  if (numDevices < 2 ||
      !validateAssignment(judge.graph(), numDevices, start, nullptr))
    return;
  MoveState state(judge, start);
  Cost cost = state.evaluate();
  state.keep();
  SeededRandom random(seed);
  std::vector<Candidate> candidates;
  MoveModel neutral;
  neutral.scale.fill(1);
  int32_t fruitless = 0;
  for (int32_t round = 0; round < rounds; ++round) {
    scoreCandidates(state, numDevices, neutral, candidates);
    const size_t draw =
        std::min(candidates.size(), static_cast<size_t>(perRound));
    for (size_t i = 0; i < draw; ++i)
      std::swap(candidates[i],
                candidates[i + random.below(static_cast<uint32_t>(
                                   candidates.size() - i))]);
    int64_t bestIndex = -1;
    Cost bestCost = cost;
    for (size_t i = 0; i < draw; ++i) {
      const Candidate &c = candidates[i];
      MoveExample example;
      state.features(c.node, c.device, example.features);
      const DeviceId old = state.current[c.node];
      state.current[c.node] = c.device;
      Cost tried = state.evaluate();
      state.current[c.node] = old;
      example.improves =
          tried.makespan < cost.makespan * (1 - 1e-9);
      out.push_back(example);
      if (tried.betterThan(bestCost)) {
        bestCost = tried;
        bestIndex = static_cast<int64_t>(i);
      }
    }
    // No improving move in this sample: draw another from the same state,
    // up to three times in a row.
    if (bestIndex < 0) {
      if (++fruitless == 3)
        return;
      continue;
    }
    fruitless = 0;
    state.current[candidates[bestIndex].node] = candidates[bestIndex].device;
    cost = state.evaluate();
    state.keep();
  }
}

MoveModel doppler::placement::fitMoveModel(
    const std::vector<MoveExample> &examples, int32_t iterations, double l2) {
  MoveModel model;
  model.scale.fill(1);
  const size_t n = examples.size();
  if (n == 0)
    return model;
  for (int i = 0; i < kMoveFeatureCount; ++i) {
    double sum = 0, square = 0;
    for (const MoveExample &e : examples) {
      sum += e.features[i];
      square += e.features[i] * e.features[i];
    }
    model.mean[i] = sum / n;
    double variance = std::max(0.0, square / n - model.mean[i] * model.mean[i]);
    model.scale[i] = variance > 1e-18 ? std::sqrt(variance) : 1.0;
  }
  size_t positives = 0;
  for (const MoveExample &e : examples)
    positives += e.improves;
  // Each class weighs half, whatever its count (improving moves are rare).
  const double positiveWeight = positives ? 0.5 / positives : 0.0;
  const double negativeWeight =
      positives < n ? 0.5 / static_cast<double>(n - positives) : 0.0;
  std::vector<moves_detail::MoveFeatures> standard(n);
  for (size_t k = 0; k < n; ++k)
    for (int i = 0; i < kMoveFeatureCount; ++i)
      standard[k][i] =
          (examples[k].features[i] - model.mean[i]) / model.scale[i];
  const double rate = 1.0;
  for (int32_t step = 0; step < iterations; ++step) {
    moves_detail::MoveFeatures gradient{};
    double biasGradient = 0;
    for (size_t k = 0; k < n; ++k) {
      double z = model.bias;
      for (int i = 0; i < kMoveFeatureCount; ++i)
        z += model.weight[i] * standard[k][i];
      const double p = 1 / (1 + std::exp(-z));
      const bool y = examples[k].improves;
      const double g = (p - (y ? 1.0 : 0.0)) *
                       (y ? positiveWeight : negativeWeight);
      for (int i = 0; i < kMoveFeatureCount; ++i)
        gradient[i] += g * standard[k][i];
      biasGradient += g;
    }
    for (int i = 0; i < kMoveFeatureCount; ++i)
      model.weight[i] -= rate * (gradient[i] + l2 * model.weight[i]);
    model.bias -= rate * biasGradient;
  }
  return model;
}

PlacementGainAnalysis doppler::placement::analysePlacementGain(
    Simulator &judge, ArrayView<DeviceId> start, ArrayView<DeviceId> end) {
  using namespace moves_detail;
  PlacementGainAnalysis analysis;
  const Graph &graph = judge.graph();
  const int32_t n = graph.numNodes();
  analysis.nodes = n;
  MoveState before(judge, start);
  before.evaluate();
  before.keep();
  analysis.start = before.side();
  MoveState after(judge, end);
  after.evaluate();
  after.keep();
  analysis.end = after.side();
  std::vector<DeviceId> chainOnly(start.begin(), start.end());
  std::vector<DeviceId> othersOnly(start.begin(), start.end());
  for (NodeId v = 0; v < n; ++v) {
    if (start[v] == end[v])
      continue;
    ++analysis.moved;
    analysis.movedOnChain += before.onChain(v);
    const bool near = before.nearChain(v);
    analysis.movedNearChain += near;
    (near ? chainOnly : othersOnly)[v] = end[v];
  }
  analysis.chainMovesOnly = judge.run(chainOnly);
  analysis.otherMovesOnly = judge.run(othersOnly);
  return analysis;
}
