//===- MoveEstimate.cpp - Moves judged by an estimate, then confirmed -----===//
//
// The heads-and-tails estimate of a move's makespan (MoveState.h) and the
// climb that uses it to screen candidate moves, so that the simulator runs
// once per kept batch of moves rather than once per candidate
// (LearnedMovesOptions::estimate).
//
//===----------------------------------------------------------------------===//

#include "MoveState.h"

#include "Doppler/Support/Stopwatch.h"

#include <algorithm>
#include <chrono>
#include <cmath>

using namespace doppler::placement;
using namespace doppler::placement::moves_detail;

void MoveState::keepEstimates() {
  const int32_t n = graph_.numNodes();
  const int32_t numDevices = judge_.numDevices();
  deviceBegin_.assign(numDevices + 1, 0);
  for (NodeId v = 0; v < n; ++v)
    ++deviceBegin_[current[v] + 1];
  for (DeviceId d = 0; d < numDevices; ++d)
    deviceBegin_[d + 1] += deviceBegin_[d];

  // Tails through data and device-order edges, from the sinks of that
  // graph back (Kahn's order: O(V + E), no sort).
  pending_.resize(n);
  work_.clear();
  for (NodeId v = 0; v < n; ++v) {
    pending_[v] = graph_.succEnd(v) - graph_.succBegin(v) + (next_[v] >= 0);
    if (pending_[v] == 0)
      work_.push_back(v);
  }
  deviceTail_.assign(n, 0);
  for (size_t i = 0; i < work_.size(); ++i) {
    const NodeId v = work_[i];
    double tail = 0;
    for (int32_t e = graph_.succBegin(v); e < graph_.succEnd(v); ++e) {
      const NodeId w = graph_.edgeTarget(e);
      tail = std::max(tail, (current[w] != current[v] ? graph_.edgeCost(e) : 0) +
                                graph_.computeCost(w) + deviceTail_[w]);
    }
    if (next_[v] >= 0)
      tail = std::max(tail, graph_.computeCost(next_[v]) + deviceTail_[next_[v]]);
    deviceTail_[v] = tail;
    for (NodeId u : graph_.predecessors(v))
      if (--pending_[u] == 0)
        work_.push_back(u);
    if (previous_[v] >= 0 && --pending_[previous_[v]] == 0)
      work_.push_back(previous_[v]);
  }
  // Zero-length nodes that start together can be ordered on their device
  // against their data edges: those (and what leads to them) keep the
  // data-only tail.
  if (static_cast<int32_t>(work_.size()) < n)
    for (NodeId v = 0; v < n; ++v)
      if (pending_[v] > 0)
        deviceTail_[v] = tail_[v];
}

double MoveState::estimate(NodeId v, DeviceId d, double *newStart) const {
  const DeviceId here = current[v];
  const double compute = graph_.computeCost(v);
  ArrayView<NodeId> preds = graph_.predecessors(v);
  ArrayView<int32_t> edges = graph_.predecessorEdges(v);
  double arrival = 0;
  for (size_t i = 0; i < preds.size(); ++i)
    arrival = std::max(arrival, end_[preds[i]] + (current[preds[i]] != d
                                                      ? graph_.edgeCost(edges[i])
                                                      : 0.0));
  // d serves its queue in the order its nodes became ready: v goes after
  // every node there that was ready by `arrival`.
  const auto first = byDevice_.begin() + deviceBegin_[d];
  const auto last = byDevice_.begin() + deviceBegin_[d + 1];
  const auto at = std::upper_bound(
      first, last, arrival, [&](double t, NodeId w) { return t < ready_[w]; });
  const NodeId before = at != first ? *(at - 1) : -1;
  const NodeId after = at != last ? *at : -1;
  const double head = std::max(arrival, before >= 0 ? end_[before] : 0.0);
  if (newStart)
    *newStart = head;
  double tail = 0;
  for (int32_t e = graph_.succBegin(v); e < graph_.succEnd(v); ++e) {
    const NodeId w = graph_.edgeTarget(e);
    tail = std::max(tail, (current[w] != d ? graph_.edgeCost(e) : 0.0) +
                              graph_.computeCost(w) + deviceTail_[w]);
  }
  if (after >= 0)
    tail = std::max(tail, graph_.computeCost(after) + deviceTail_[after]);
  double estimate = head + compute + tail;

  // The node after v on its old device starts after the one before v, or
  // when its inputs (v's output at v's new time among them) arrive.
  const NodeId next = next_[v], previous = previous_[v];
  if (next >= 0) {
    double ready = previous >= 0 ? end_[previous] : 0.0;
    ArrayView<NodeId> nextPreds = graph_.predecessors(next);
    ArrayView<int32_t> nextEdges = graph_.predecessorEdges(next);
    for (size_t i = 0; i < nextPreds.size(); ++i) {
      const NodeId u = nextPreds[i];
      const double cost = graph_.edgeCost(nextEdges[i]);
      ready = std::max(ready, u == v ? head + compute + (d != here ? cost : 0.0)
                                     : end_[u] + (current[u] != here ? cost : 0.0));
    }
    estimate = std::max(estimate, ready + graph_.computeCost(next) +
                                      deviceTail_[next]);
  }
  // Neither v nor the node after it is on a longest path: every path of
  // length M stays.
  if (!mayShorten(v))
    estimate = std::max(estimate, makespan_);
  return estimate;
}

bool MoveState::onLongestPath(NodeId v) const {
  return start_[v] + graph_.computeCost(v) + deviceTail_[v] >=
         makespan_ * (1 - 1e-9);
}

bool MoveState::mayShorten(NodeId v) const {
  return onLongestPath(v) || (next_[v] >= 0 && onLongestPath(next_[v]));
}

namespace {

struct EstimatedMove {
  double estimate, score;
  NodeId node;
  DeviceId from, to;
  double begin, end; // the time v occupies on either device, before or after
};

/// The same node, or a data edge between them.
bool adjacent(NodeId a, NodeId b, const Graph &graph) {
  if (a == b)
    return true;
  for (NodeId w : graph.successors(a))
    if (w == b)
      return true;
  for (NodeId u : graph.predecessors(a))
    if (u == b)
      return true;
  return false;
}

/// Moves of one batch must not touch one another: different nodes, no
/// data edge between them, and no device in common unless their times do
/// not overlap.
bool touches(const EstimatedMove &a, const EstimatedMove &b,
             const Graph &graph) {
  if (adjacent(a.node, b.node, graph))
    return true;
  const bool shareDevice = a.from == b.from || a.from == b.to ||
                           a.to == b.from || a.to == b.to;
  return shareDevice && a.begin < b.end && b.begin < a.end;
}

/// The candidate moves the estimate says shorten the makespan, best
/// estimate first, the model's score breaking ties; returns the number of
/// moves estimated.
int64_t rankEstimatedMoves(const MoveState &state, const MoveModel &model,
                           std::vector<EstimatedMove> &ranked) {
  const Graph &graph = state.graph();
  const double makespan = state.makespan();
  MoveFeatures features;
  int64_t estimated = 0;
  ranked.clear();
  for (NodeId v : state.candidateNodes())
    for (DeviceId d = 0; d < state.numDevices(); ++d) {
      // The estimate is M or more for every move of such a node.
      if (d == state.current[v] || !state.mayShorten(v))
        continue;
      ++estimated;
      double head = 0;
      const double estimate = state.estimate(v, d, &head);
      if (!(estimate < makespan * (1 - 1e-9)))
        continue;
      state.features(v, d, features);
      ranked.push_back({estimate, model.score(features), v, state.current[v],
                        d, std::min(state.start(v), head),
                        std::max(state.end(v), head + graph.computeCost(v))});
    }
  std::sort(ranked.begin(), ranked.end(),
            [](const EstimatedMove &a, const EstimatedMove &b) {
              if (a.estimate != b.estimate)
                return a.estimate < b.estimate;
              if (a.score != b.score)
                return a.score > b.score;
              if (a.node != b.node)
                return a.node < b.node;
              return a.to < b.to;
            });
  return estimated;
}

} // namespace

LearnedMovesResult doppler::placement::moves_detail::improveWithEstimatedMoves(
    Simulator &judge, ArrayView<DeviceId> start, const MoveModel &model,
    const LearnedMovesOptions &options) {
  const auto begin = std::chrono::steady_clock::now();
  const Graph &graph = judge.graph();
  const int32_t numDevices = judge.numDevices();
  MoveState state(judge, start);
  LearnedMovesResult result;
  Cost cost = state.evaluate();
  result.initialMakespan = cost.makespan;
  auto budgetLeft = [&] {
    return state.evaluations - 1 < options.maxEvaluations &&
           (options.seconds <= 0 || doppler::secondsSince(begin) < options.seconds);
  };
  std::vector<EstimatedMove> ranked, batch, applied;
  std::vector<uint8_t> used;
  std::vector<Candidate> rest;
  // Applies `moves`, runs the judge and keeps them if the run improves.
  auto confirm = [&](const std::vector<EstimatedMove> &moves) {
    for (const EstimatedMove &m : moves)
      state.current[m.node] = m.to;
    Cost tried = state.evaluate();
    if (tried.betterThan(cost)) {
      cost = tried;
      result.accepted += static_cast<int64_t>(moves.size());
      return true;
    }
    for (const EstimatedMove &m : moves)
      state.current[m.node] = m.from;
    return false;
  };
  bool kept = numDevices > 1;
  if (kept) {
    state.keep();
    state.keepEstimates();
  }
  while (kept && budgetLeft()) {
    kept = false;
    result.estimates += rankEstimatedMoves(state, model, ranked);
    // Batches of moves that do not touch one another, one run for each;
    // after a kept one, the next from the same ranking (its estimates now
    // stale, so none that touches a kept move's node or its neighbours).
    applied.clear();
    used.assign(ranked.size(), 0);
    for (int32_t round = 0; round < options.batchesPerRound && budgetLeft();
         ++round) {
      batch.clear();
      for (size_t i = 0; i < ranked.size(); ++i) {
        if (static_cast<int32_t>(batch.size()) >= options.batch)
          break;
        const EstimatedMove &m = ranked[i];
        bool free = !used[i];
        for (const EstimatedMove &b : batch)
          free = free && !touches(m, b, graph);
        for (const EstimatedMove &a : applied)
          free = free && !adjacent(m.node, a.node, graph);
        if (free) {
          batch.push_back(m);
          used[i] = 1;
        }
      }
      if (batch.empty() || (round == 0 && batch.size() < 2))
        break;
      ++result.batchesTried;
      const bool batchKept = confirm(batch);
      result.batchesKept += batchKept;
      if (!batchKept)
        break;
      kept = true;
      applied.insert(applied.end(), batch.begin(), batch.end());
    }
    // Else the best estimated moves one at a time.
    for (size_t i = 0; !kept && i < ranked.size() &&
                       static_cast<int32_t>(i) < options.singleTries && budgetLeft();
         ++i) {
      ++result.estimatedTried;
      kept = confirm({ranked[i]});
      result.estimatedKept += kept;
    }
    // Else the model's best of all candidates (moves that keep the
    // makespan and finish other work earlier cross its plateaus).
    if (!kept && options.singleTries > 0) {
      scoreCandidates(state, numDevices, model, rest);
      const size_t tries =
          std::min(rest.size(), static_cast<size_t>(options.singleTries));
      std::partial_sort(rest.begin(), rest.begin() + tries, rest.end(),
                        scoredBefore);
      for (size_t i = 0; !kept && i < tries && budgetLeft(); ++i) {
        ++result.modelTried;
        kept = confirm({{0, rest[i].score, rest[i].node,
                         state.current[rest[i].node], rest[i].device, 0, 0}});
        result.modelKept += kept;
      }
    }
    if (kept) {
      state.keep();
      state.keepEstimates();
    }
  }
  result.makespan = cost.makespan;
  result.assignment = std::move(state.current);
  result.evaluations = state.evaluations - 1;
  result.seconds = doppler::secondsSince(begin);
  return result;
}

std::vector<double> doppler::placement::estimateMoveMakespans(
    Simulator &judge, ArrayView<DeviceId> placement,
    const std::vector<std::pair<NodeId, DeviceId>> &moves) {
  MoveState state(judge, placement);
  state.evaluate();
  state.keep();
  state.keepEstimates();
  std::vector<double> estimates;
  estimates.reserve(moves.size());
  for (const auto &[node, device] : moves)
    estimates.push_back(state.estimate(node, device));
  return estimates;
}

namespace {

/// Ranks (average ranks among ties) of `values`.
std::vector<double> ranksOf(const std::vector<double> &values) {
  std::vector<size_t> order(values.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return values[a] < values[b]; });
  std::vector<double> ranks(values.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && values[order[j + 1]] == values[order[i]])
      ++j;
    for (size_t k = i; k <= j; ++k)
      ranks[order[k]] = (i + j) / 2.0;
    i = j + 1;
  }
  return ranks;
}

} // namespace

MoveEstimateAgreement
doppler::placement::checkMoveEstimates(Simulator &judge,
                                       ArrayView<DeviceId> placement) {
  MoveEstimateAgreement agreement;
  MoveState state(judge, placement);
  const double makespan = state.evaluate().makespan;
  state.keep();
  state.keepEstimates();
  std::vector<double> estimated, simulated;
  for (NodeId v : state.candidateNodes())
    for (DeviceId d = 0; d < judge.numDevices(); ++d)
      if (d != state.current[v])
        estimated.push_back(state.estimate(v, d)), simulated.push_back(0);
  size_t i = 0, best = 0;
  for (NodeId v : state.candidateNodes())
    for (DeviceId d = 0; d < judge.numDevices(); ++d) {
      if (d == state.current[v])
        continue;
      const DeviceId old = state.current[v];
      state.current[v] = d;
      simulated[i] = judge.run(state.current);
      state.current[v] = old;
      const double eps = 1e-9 * makespan;
      const bool estimatedBetter = estimated[i] < makespan - eps;
      const bool simulatedBetter = simulated[i] < makespan - eps;
      agreement.estimatedBetter += estimatedBetter;
      agreement.simulatedBetter += simulatedBetter;
      agreement.bothBetter += estimatedBetter && simulatedBetter;
      agreement.exact += std::abs(estimated[i] - simulated[i]) <= eps;
      if (estimated[i] < estimated[best])
        best = i;
      ++i;
    }
  agreement.candidates = static_cast<int64_t>(i);
  if (i == 0)
    return agreement;
  agreement.bestEstimatedImproves = simulated[best] < makespan * (1 - 1e-9);
  agreement.bestEstimated = simulated[best];
  agreement.bestSimulated = *std::min_element(simulated.begin(), simulated.end());
  const std::vector<double> a = ranksOf(estimated), b = ranksOf(simulated);
  const double mean = (i - 1) / 2.0;
  double ab = 0, aa = 0, bb = 0;
  for (size_t k = 0; k < i; ++k) {
    ab += (a[k] - mean) * (b[k] - mean);
    aa += (a[k] - mean) * (a[k] - mean);
    bb += (b[k] - mean) * (b[k] - mean);
  }
  agreement.spearman = aa > 0 && bb > 0 ? ab / std::sqrt(aa * bb) : 0;
  return agreement;
}
