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
  // The ready times in device order, side by side for estimateRow's
  // binary searches.
  readyByDevice_.resize(n);
  for (int32_t i = 0; i < n; ++i)
    readyByDevice_[i] = ready_[byDevice_[i]];

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

namespace {

/// For each device d, the largest of `same[d]` and the largest `cross`
/// entry of another device: what a node on d gets from values on d as they
/// are and from the others' with their transfer (the two largest cross
/// values suffice, as in PlacementEnvironment::earliestStarts).
void combineByDevice(const std::vector<double> &same,
                     const std::vector<double> &cross, int32_t numDevices,
                     double *out) {
  double best = 0, second = 0;
  DeviceId bestDevice = -1;
  for (DeviceId d = 0; d < numDevices; ++d) {
    if (cross[d] > best) {
      second = best;
      best = cross[d];
      bestDevice = d;
    } else if (cross[d] > second) {
      second = cross[d];
    }
  }
  for (DeviceId d = 0; d < numDevices; ++d)
    out[d] = std::max(same[d], d == bestDevice ? second : best);
}

} // namespace

// The same arithmetic as estimate(), term by term, so that the numbers are
// equal (MoveEstimateTest.RowIsTheSameAsEachMove): every max is over the
// same values, and each sum is formed in the same order.
void MoveState::estimateRow(NodeId v, double *estimates, double *heads,
                            double cutoff) const {
  const int32_t numDevices = judge_.numDevices();
  const DeviceId here = current[v];
  const double compute = graph_.computeCost(v);
  sameArrival_.assign(numDevices, 0.0);
  crossArrival_.assign(numDevices, 0.0);
  sameTail_.assign(numDevices, 0.0);
  crossTail_.assign(numDevices, 0.0);
  ArrayView<NodeId> preds = graph_.predecessors(v);
  ArrayView<int32_t> edges = graph_.predecessorEdges(v);
  for (size_t i = 0; i < preds.size(); ++i) {
    const DeviceId du = current[preds[i]];
    sameArrival_[du] = std::max(sameArrival_[du], end_[preds[i]] + 0.0);
    crossArrival_[du] = std::max(crossArrival_[du],
                                 end_[preds[i]] + graph_.edgeCost(edges[i]));
  }
  for (int32_t e = graph_.succBegin(v); e < graph_.succEnd(v); ++e) {
    const NodeId w = graph_.edgeTarget(e);
    const DeviceId dw = current[w];
    const double rest = graph_.computeCost(w);
    sameTail_[dw] = std::max(sameTail_[dw], 0.0 + rest + deviceTail_[w]);
    crossTail_[dw] = std::max(crossTail_[dw],
                              graph_.edgeCost(e) + rest + deviceTail_[w]);
  }
  // `heads` holds the arrivals until each is made a head below, and
  // `estimates` the consumers' tails.
  combineByDevice(sameArrival_, crossArrival_, numDevices, heads);
  combineByDevice(sameTail_, crossTail_, numDevices, estimates);

  // The node after v on its old device: what starts it apart from v.
  const NodeId next = next_[v], previous = previous_[v];
  double nextReady = previous >= 0 ? end_[previous] : 0.0;
  double fromV = -1; // the costliest edge v -> next, if any
  if (next >= 0) {
    ArrayView<NodeId> nextPreds = graph_.predecessors(next);
    ArrayView<int32_t> nextEdges = graph_.predecessorEdges(next);
    for (size_t i = 0; i < nextPreds.size(); ++i) {
      const NodeId u = nextPreds[i];
      const double cost = graph_.edgeCost(nextEdges[i]);
      if (u == v)
        fromV = std::max(fromV, cost);
      else
        nextReady = std::max(nextReady, end_[u] + (current[u] != here ? cost
                                                                      : 0.0));
    }
  }
  const bool shortens = mayShorten(v);
  for (DeviceId d = 0; d < numDevices; ++d) {
    const double arrival = heads[d];
    // head >= arrival and the tail only grows below: a lower bound, in the
    // same order of sums (rounding is monotone).
    const double bound = arrival + compute + estimates[d];
    if (bound >= cutoff) {
      estimates[d] = bound;
      continue;
    }
    // estimate()'s search (the first node ready after `arrival`) over the
    // ready times themselves, without branches (Khuong and Morin).
    const double *first = readyByDevice_.data() + deviceBegin_[d];
    const double *at = first;
    for (size_t count = deviceBegin_[d + 1] - deviceBegin_[d]; count > 1;) {
      const size_t half = count / 2;
      at = at[half] <= arrival ? at + half : at;
      count -= half;
    }
    const double *last = readyByDevice_.data() + deviceBegin_[d + 1];
    at += at != last && *at <= arrival;
    const int32_t i = static_cast<int32_t>(at - readyByDevice_.data());
    const NodeId before = at != first ? byDevice_[i - 1] : -1;
    const NodeId after = at != last ? byDevice_[i] : -1;
    const double head = std::max(arrival, before >= 0 ? end_[before] : 0.0);
    heads[d] = head;
    double tail = estimates[d];
    if (after >= 0)
      tail = std::max(tail, graph_.computeCost(after) + deviceTail_[after]);
    double estimate = head + compute + tail;
    if (next >= 0) {
      double ready = nextReady;
      if (fromV >= 0)
        ready = std::max(ready, head + compute + (d != here ? fromV : 0.0));
      estimate = std::max(estimate, ready + graph_.computeCost(next) +
                                        deviceTail_[next]);
    }
    if (!shortens)
      estimate = std::max(estimate, makespan_);
    estimates[d] = estimate;
  }
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

/// What describing a move for the model (features and score) counts
/// besides its node's degree, against LearnedMovesOptions::maxWork.
constexpr int64_t kDescribeWork = 6;

/// A node's share of the work counted against LearnedMovesOptions::maxWork
/// when it is estimated on every device or described once.
int64_t nodeWork(const Graph &graph, NodeId v, int64_t extra) {
  return graph.inDegree(v) + graph.outDegree(v) + extra;
}

/// The candidate moves the estimate says shorten the makespan, best
/// estimate first, then the model's best score, then node and device;
/// sorted lazily, since a round reads only its first few (a batch and the
/// single tries): prefix() puts a prefix in that order.
class Ranking {
public:
  /// Estimates the moves of `state`'s candidate nodes (adding their work
  /// to `work`); returns the number of moves estimated.
  int64_t estimate(const MoveState &state, int64_t &work);
  size_t size() const { return moves_.size(); }
  /// The i-th move in the order (i < size()), ordering as far as needed;
  /// describing tied moves for the model adds to `work`.
  const EstimatedMove &at(size_t i, const MoveState &state,
                          const MoveModel &model, int64_t &work) {
    while (sorted_ <= i)
      extend(state, model, work);
    return moves_[i];
  }

private:
  void extend(const MoveState &state, const MoveModel &model, int64_t &work);
  std::vector<EstimatedMove> moves_;
  size_t sorted_ = 0;
  std::vector<double> estimates_, heads_;
};

/// By estimate, then node and device (the model's score is ordered in
/// afterwards, among equal estimates only).
bool estimatedBefore(const EstimatedMove &a, const EstimatedMove &b) {
  if (a.estimate != b.estimate)
    return a.estimate < b.estimate;
  if (a.node != b.node)
    return a.node < b.node;
  return a.to < b.to;
}

int64_t Ranking::estimate(const MoveState &state, int64_t &work) {
  const Graph &graph = state.graph();
  const double makespan = state.makespan();
  const int32_t numDevices = state.numDevices();
  int64_t estimated = 0;
  moves_.clear();
  sorted_ = 0;
  estimates_.resize(numDevices);
  heads_.resize(numDevices);
  for (NodeId v : state.candidateNodes()) {
    // The estimate is M or more for every move of such a node.
    if (!state.mayShorten(v))
      continue;
    // Moves sure not to shorten are left unestimated.
    state.estimateRow(v, estimates_.data(), heads_.data(),
                      makespan * (1 - 1e-9));
    work += nodeWork(graph, v, 2 * numDevices);
    for (DeviceId d = 0; d < numDevices; ++d) {
      if (d == state.current[v])
        continue;
      ++estimated;
      const double head = heads_[d], estimate = estimates_[d];
      if (!(estimate < makespan * (1 - 1e-9)))
        continue;
      moves_.push_back({estimate, 0, v, state.current[v], d,
                        std::min(state.start(v), head),
                        std::max(state.end(v), head + graph.computeCost(v))});
    }
  }
  return estimated;
}

void Ranking::extend(const MoveState &state, const MoveModel &model,
                     int64_t &work) {
  // The next chunk (64, then doubling) of the smallest by estimatedBefore,
  // and every other move of its last estimate, so that equal estimates
  // are never split between chunks; then the ties by the model's score.
  const auto first = moves_.begin() + sorted_;
  const size_t chunk =
      std::min(moves_.size() - sorted_, std::max<size_t>(64, sorted_));
  // (nth_element and a sort of the chunk: the same prefix as a partial
  // sort, the order being total, in O(n + chunk log chunk).)
  if (first + chunk != moves_.end())
    std::nth_element(first, first + chunk - 1, moves_.end(), estimatedBefore);
  std::sort(first, first + chunk, estimatedBefore);
  const double last = (first + chunk - 1)->estimate;
  const auto tied = std::partition(
      first + chunk, moves_.end(),
      [&](const EstimatedMove &m) { return m.estimate == last; });
  std::sort(first + chunk, tied, estimatedBefore);
  MoveFeatures features;
  for (auto i = first; i != tied;) {
    auto j = i + 1;
    while (j != tied && j->estimate == i->estimate)
      ++j;
    if (j - i > 1) {
      for (auto k = i; k != j; ++k) {
        state.features(k->node, k->to, features);
        k->score = model.score(features);
        work += nodeWork(state.graph(), k->node, kDescribeWork);
      }
      std::stable_sort(i, j, [](const EstimatedMove &a, const EstimatedMove &b) {
        return a.score > b.score;
      });
    }
    i = j;
  }
  sorted_ = static_cast<size_t>(tied - moves_.begin());
}

/// Adds the seconds `work` takes to `slot` (LearnedMovesProfile).
template <typename Work> void timed(double &slot, Work &&work) {
  const auto from = std::chrono::steady_clock::now();
  work();
  slot += doppler::secondsSince(from);
}

/// The climb's budget: simulator runs, seconds and work
/// (LearnedMovesOptions). A round (a schedule read, its ranking, its runs)
/// starts only if the work so far, a read, the last round's ranking and a
/// run fit; its first run is made even if its ranking went past the bound
/// (that work is spent by then); later runs only within it.
struct ClimbBudget {
  ClimbBudget(const LearnedMovesOptions &options, const Graph &graph)
      : options(options), begin(std::chrono::steady_clock::now()),
        graphWork(int64_t(graph.numNodes()) + graph.numEdges()) {}
  bool workLeft(int64_t more) const {
    return options.maxWork <= 0 || work + more <= options.maxWork;
  }
  bool runsLeft() const {
    return runs < options.maxEvaluations &&
           (options.seconds <= 0 ||
            doppler::secondsSince(begin) < options.seconds);
  }
  /// Whether the next run of this round may start.
  bool runLeft() const {
    return runsLeft() && (roundRuns == 0 || workLeft(graphWork));
  }
  bool roundFits() const {
    return runsLeft() && workLeft(2 * graphWork + rankWork);
  }
  /// A run (the graph's nodes and edges) made.
  void ran() { work += graphWork, ++runs, ++roundRuns; }
  /// A schedule read (heads, tails, the chain: as much) made.
  void read() { work += graphWork, roundRuns = 0; }

  const LearnedMovesOptions &options;
  std::chrono::steady_clock::time_point begin;
  /// A run's or a schedule read's work: the graph's nodes and edges.
  int64_t graphWork;
  int64_t work = 0, runs = 0, roundRuns = 0;
  int64_t rankWork = 0; ///< the last round's ranking
};

/// The next batch of the climb: up to `size` moves in `ranked`'s order,
/// not yet `used`, none touching another nor adjacent to a move `applied`
/// from the same ranking.
void pickBatch(Ranking &ranked, const MoveState &state, const MoveModel &model,
               int32_t size, const std::vector<EstimatedMove> &applied,
               std::vector<uint8_t> &used, std::vector<EstimatedMove> &batch,
               int64_t &work) {
  const Graph &graph = state.graph();
  batch.clear();
  for (size_t i = 0; i < ranked.size(); ++i) {
    if (static_cast<int32_t>(batch.size()) >= size)
      break;
    const EstimatedMove &m = ranked.at(i, state, model, work);
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
}

/// What describing every candidate move for the model counts.
int64_t describeWork(const MoveState &state) {
  int64_t work = 0;
  for (NodeId v : state.candidateNodes())
    work += (state.numDevices() - 1) *
            nodeWork(state.graph(), v, kDescribeWork);
  return work;
}

/// Every candidate move scored by the model, its best `count` first in
/// `rest`; returns how many that is.
size_t bestByModel(const MoveState &state, const MoveModel &model,
                   int32_t count, std::vector<Candidate> &rest) {
  scoreCandidates(state, state.numDevices(), model, rest);
  const size_t tries = std::min(rest.size(), static_cast<size_t>(count));
  std::partial_sort(rest.begin(), rest.begin() + tries, rest.end(),
                    scoredBefore);
  return tries;
}

} // namespace

LearnedMovesResult doppler::placement::moves_detail::improveWithEstimatedMoves(
    Simulator &judge, ArrayView<DeviceId> start, const MoveModel &model,
    const LearnedMovesOptions &options, const Schedule *startSchedule) {
  const auto begin = std::chrono::steady_clock::now();
  const Graph &graph = judge.graph();
  const int32_t numDevices = judge.numDevices();
  MoveState state(judge, start);
  LearnedMovesResult result;
  LearnedMovesProfile &profile = result.profile;
  ClimbBudget budget(options, graph);
  Cost cost;
  if (startSchedule)
    cost = MoveState::costOf(*startSchedule);
  else
    timed(profile.startRuns, [&] { cost = state.evaluate(); });
  result.initialMakespan = cost.makespan;
  int64_t &work = budget.work;
  Ranking ranked;
  std::vector<EstimatedMove> batch, applied;
  std::vector<uint8_t> used;
  std::vector<Candidate> rest;
  // The schedule of the last kept run, where the judge's last run may be
  // a rejected one (batchesPerRound > 1).
  bool lastRunKept = false;
  Schedule keptSchedule;
  // Applies `moves`, runs the judge and keeps them if the run improves.
  auto confirm = [&](const std::vector<EstimatedMove> &moves) {
    for (const EstimatedMove &m : moves)
      state.current[m.node] = m.to;
    Cost tried;
    timed(profile.confirmRuns, [&] { tried = state.evaluate(); });
    budget.ran();
    lastRunKept = tried.betterThan(cost);
    if (lastRunKept) {
      cost = tried;
      result.accepted += static_cast<int64_t>(moves.size());
      // A later batch of the round may be run and rejected after it.
      if (options.batchesPerRound > 1)
        keptSchedule = judge.schedule();
      return true;
    }
    for (const EstimatedMove &m : moves)
      state.current[m.node] = m.from;
    return false;
  };
  bool kept = numDevices > 1 && budget.roundFits();
  // Reads the kept schedule (the judge's last run, or the start's):
  // what the features and the estimate need.
  auto readSchedule = [&](const Schedule &schedule) {
    ++profile.rounds;
    budget.read();
    timed(profile.keep, [&] { state.keep(schedule); });
    timed(profile.estimateSetup, [&] { state.keepEstimates(); });
  };
  if (kept)
    readSchedule(startSchedule ? *startSchedule : judge.schedule());
  while (kept && budget.runLeft()) {
    kept = false;
    timed(profile.ranking, [&] {
      const int64_t before = work;
      result.estimates += ranked.estimate(state, work);
      budget.rankWork = work - before;
    });
    // Batches of moves that do not touch one another, one run for each;
    // after a kept one, the next from the same ranking (its estimates now
    // stale, so none that touches a kept move's node or its neighbours).
    applied.clear();
    used.assign(ranked.size(), 0);
    for (int32_t round = 0; round < options.batchesPerRound && budget.runLeft();
         ++round) {
      pickBatch(ranked, state, model, options.batch, applied, used, batch,
                work);
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
                       static_cast<int32_t>(i) < options.singleTries && budget.runLeft();
         ++i) {
      ++result.estimatedTried;
      kept = confirm({ranked.at(i, state, model, work)});
      result.estimatedKept += kept;
    }
    // Else the model's best of all candidates (moves that keep the
    // makespan and finish other work earlier cross its plateaus).
    // Only if describing every candidate and a run fit the work bound.
    if (!kept && options.singleTries > 0 &&
        (options.maxWork <= 0 ||
         budget.workLeft(describeWork(state) + budget.graphWork))) {
      size_t tries = 0;
      timed(profile.ranking, [&] {
        tries = bestByModel(state, model, options.singleTries, rest);
        work += describeWork(state);
      });
      for (size_t i = 0; !kept && i < tries && budget.runLeft(); ++i) {
        ++result.modelTried;
        kept = confirm({{0, rest[i].score, rest[i].node,
                         state.current[rest[i].node], rest[i].device, 0, 0}});
        result.modelKept += kept;
      }
    }
    // The next round, if it fits (else the loop ends unread).
    kept = kept && budget.roundFits();
    if (kept)
      readSchedule(lastRunKept ? judge.schedule() : keptSchedule);
  }
  result.makespan = cost.makespan;
  result.assignment = std::move(state.current);
  result.evaluations = budget.runs;
  result.work = work;
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
