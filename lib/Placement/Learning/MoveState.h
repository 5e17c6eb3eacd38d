//===- MoveState.h - The learned moves' view of a schedule ------*- C++ -*-===//
//
// Internal to the learned improvement moves (LearnedMoves.h): MoveState
// holds the current placement, its schedule (from the judge's last run) and
// what the move features read from it (LearnedMoves.cpp), and the heads and
// tails that estimate a move's makespan without a simulator run
// (MoveEstimate.cpp).
//
// The estimate. With each device's order fixed as the schedule ran it, the
// schedule is a longest path in the DAG plus device-order edges, with
// transfer costs on cross-device edges: a node's head is its start, its
// tail the longest path from its end to the end of the schedule. Moving v
// from device a to b (inserted on b where its data-ready time there puts it
// in b's FIFO order) changes only the edges around v; the new makespan is
// estimated in O(degree + log n) as the longest of
//   - the path through v on b: v's new start (its inputs' arrival on b, or
//     the end of the node before it there) + c(v) + its new tail (through
//     its consumers, with the transfers they now need, and the node after
//     it on b);
//   - the path through the node after v on a, now started by the node
//     before v there (or by its inputs, v's output at its new time);
//   - the makespan itself, when neither v nor the node after it on a is on
//     a longest path (then no path of length M loses anything);
// as job-shop local search evaluates moves approximately (Taillard;
// Nowicki and Smutnicki). It is exact when the move changes no device's
// order but v's own slot (e.g. on a chain); elsewhere the simulator's FIFO
// reorders what the move delays or advances, which is why every kept move
// is confirmed by a simulator run.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_LIB_PLACEMENT_LEARNING_MOVESTATE_H
#define DOPPLER_LIB_PLACEMENT_LEARNING_MOVESTATE_H

#include "Doppler/Placement/Learning/LearnedMoves.h"

#include <algorithm>
#include <array>
#include <limits>
#include <vector>

namespace doppler::placement::moves_detail {

using MoveFeatures = std::array<double, kMoveFeatureCount>;

/// A makespan with the sum of finish times as the tie-break: plateaus of
/// the makespan are crossed by moves that finish other work earlier, and
/// the order is strict, so a hill climb cannot cycle.
struct Cost {
  double makespan = 0, sumEnd = 0;
  bool betterThan(const Cost &other) const {
    const double eps = 1e-9 * std::max(1.0, other.makespan);
    if (makespan < other.makespan - eps)
      return true;
    return makespan <= other.makespan + eps &&
           sumEnd < other.sumEnd - 1e-9 * std::max(1.0, other.sumEnd);
  }
};

class MoveState {
public:
  MoveState(Simulator &judge, ArrayView<DeviceId> start)
      : judge_(judge), graph_(judge.graph()) {
    current.assign(start.begin(), start.end());
  }

  /// Runs the judge on `current`.
  Cost evaluate() {
    ++evaluations;
    judge_.run(current);
    return costOf(judge_.schedule());
  }
  static Cost costOf(const Schedule &schedule) {
    Cost cost;
    cost.makespan = schedule.makespan;
    for (double end : schedule.end)
      cost.sumEnd += end;
    return cost;
  }
  /// Reads the schedule of the judge's last run (of `current`).
  void keep() { keep(judge_.schedule()); }
  /// Reads `schedule`, the judge's schedule of `current`.
  void keep(const Schedule &schedule);
  /// byDevice_: the nodes by (device, start, id).
  void sortByDevice();
  /// After keep(): the tails through device order (MoveEstimate.cpp).
  void keepEstimates();
  /// After keepEstimates(): the estimated makespan of moving v to d (and
  /// v's start there, if `newStart`).
  double estimate(NodeId v, DeviceId d, double *newStart = nullptr) const;
  /// After keepEstimates(): estimate(v, d, &heads[d]) for every device d
  /// at once, into estimates[d] and heads[d] (numDevices() values each;
  /// the same numbers). Costs O(degree + D log n) instead of D times
  /// O(degree + log n): what does not depend on d (the inputs' and
  /// consumers' times by device, the node after v on its device) is read
  /// once. Devices whose estimate is sure to be `cutoff` or more (v's
  /// inputs' arrival there + c(v) + its consumers' tail: a lower bound)
  /// get that bound, not their estimate, and no head.
  void estimateRow(NodeId v, double *estimates, double *heads,
                   double cutoff = std::numeric_limits<double>::infinity()) const;
  /// After keepEstimates(): whether v, or the node after it on its
  /// device, is on a longest path (else no move of v can shorten one).
  bool mayShorten(NodeId v) const;
  bool onLongestPath(NodeId v) const;
  double makespan() const { return makespan_; }
  const Graph &graph() const { return graph_; }
  int32_t numDevices() const { return judge_.numDevices(); }
  double start(NodeId v) const { return start_[v]; }
  double end(NodeId v) const { return end_[v]; }
  /// Nodes on the chain, then their producers and consumers.
  const std::vector<NodeId> &candidateNodes() const { return candidates_; }
  void features(NodeId v, DeviceId d, MoveFeatures &out) const;
  PlacementGainAnalysis::Side side() const;
  bool onChain(NodeId v) const { return near_[v] == 2; }
  bool nearChain(NodeId v) const { return near_[v] >= 1; }

  std::vector<DeviceId> current;
  int64_t evaluations = 0;

private:
  Simulator &judge_;
  const Graph &graph_;
  double makespan_ = 0, maxBusy_ = 0;
  std::vector<double> start_, end_, busy_;
  std::vector<double> ready_, tail_;
  std::vector<NodeId> lateProducer_; ///< latest input if it crossed, or -1
  std::vector<int8_t> near_;         ///< 2 on the chain, 1 next to it
  /// Nodes by (device, start, id); previous_ and next_ on the device.
  std::vector<NodeId> candidates_, byDevice_, chain_, previous_, next_;
  double chainTransfer_ = 0, chainQueued_ = 0;
  // The estimate's (keepEstimates).
  std::vector<int32_t> deviceBegin_; ///< device d's nodes in byDevice_
  std::vector<double> readyByDevice_; ///< ready_ of byDevice_'s nodes
  std::vector<double> deviceTail_;   ///< longest path after v's end
  std::vector<int32_t> pending_;
  std::vector<NodeId> work_;
  // estimateRow's per-device scratch: inputs' arrival and consumers'
  // tails from nodes on each device.
  mutable std::vector<double> sameArrival_, crossArrival_, sameTail_,
      crossTail_;
};

struct Candidate {
  double score;
  NodeId node;
  DeviceId device;
};

/// The model's order: best score first, then by node and device.
inline bool scoredBefore(const Candidate &a, const Candidate &b) {
  if (a.score != b.score)
    return a.score > b.score;
  if (a.node != b.node)
    return a.node < b.node;
  return a.device < b.device;
}

/// Every (candidate node, other device) pair with its model score.
void scoreCandidates(const MoveState &state, int32_t numDevices,
                     const MoveModel &model, std::vector<Candidate> &out);

/// improveWithLearnedMoves with LearnedMovesOptions::estimate
/// (MoveEstimate.cpp); `start` is valid.
/// `startSchedule`: the judge's schedule of `start` where the caller has
/// it (then the climb does not run the judge on it again).
LearnedMovesResult improveWithEstimatedMoves(Simulator &judge,
                                             ArrayView<DeviceId> start,
                                             const MoveModel &model,
                                             const LearnedMovesOptions &options,
                                             const Schedule *startSchedule = nullptr);

} // namespace doppler::placement::moves_detail

#endif // DOPPLER_LIB_PLACEMENT_LEARNING_MOVESTATE_H
