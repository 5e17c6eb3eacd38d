//===- Environment.h - The sequential placement decision process -*- C++ -*-===//
//
// The decision process of shared/METHOD.md section 4, shared by every policy
// that places one node at a time (the critical-path heuristics here, the
// learned SEL/PLC policies elsewhere):
//
//   PlacementEnvironment env;
//   env.reset(graph, numDevices);
//   while (!env.done()) {
//     NodeId v = pick(env.candidates());          // SEL
//     env.earliestStarts(v, est.data());          // or deviceFeatures(...)
//     env.step(v, pickDevice(est));               // PLC
//   }
//   use(env.assignment());
//
// Alongside the placement the environment keeps an *estimated schedule*
// (start and finish of each placed node, free time of each device) from which
// the device features are computed. It is not the simulator: the final
// assignment is judged by Simulator (or a real run).
//
// Cost: reset() allocates only when the graph or device count grows past
// what earlier episodes saw; step() and the queries never allocate. A whole
// 200-node episode takes about 10 microseconds (doppler-bench-placement).
// Not thread safe: use one environment per thread (queries share scratch
// space).
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_PLACEMENT_ENVIRONMENT_H
#define DOPPLER_PLACEMENT_ENVIRONMENT_H

#include "Doppler/Placement/Graph.h"
#include "Doppler/Placement/System.h"

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace doppler::placement {

/// How the estimated schedule dates a node when it is placed.
enum class StartEstimate {
  /// The reference's estimate: start = compute already placed on the device
  /// (its load), ignoring waits for inputs. Kept for comparisons.
  DeviceLoad,
  /// start = est(v, d) = max(device d's estimated free time, max over inputs
  /// u of finish(u) + (edge cost if u is on another device)).
  EarliestStart,
};

/// Device feature columns, in this order: the five of METHOD section 4,
/// then our own.
enum DeviceFeature : int32_t {
  kDeviceLoadFeature = 0,         ///< total compute already placed on d
  kInputComputeFeature = 1,       ///< total compute of v's inputs on d
  kInputMinStartFeature = 2,      ///< min estimated start of v's inputs on d
  kInputMaxFinishFeature = 3,     ///< max estimated finish of v's inputs on d
  kEarliestStartFeature = 4,      ///< est(v, d)
  kNumMethodDeviceFeatures = 5,
  /// What placing v on d splits from its siblings: for every successor w of
  /// v and every other input u of w already placed on another device than
  /// d, min(edge cost u -> w, edge cost v -> w), the least that w must wait
  /// for a transfer wherever it goes. est(v, d) looks only backwards; this
  /// is the forward cost of a join whose inputs are spread (on the shared
  /// ffnn and transformer graphs, the gap between the critical-path
  /// heuristic and the best placements found by search).
  kJoinSplitFeature = 5,
  /// Memory pressure (memoryPressure()): the estimated peak of d's live
  /// bytes if v is placed there, over d's capacity; 0 without limits.
  kMemoryPressureFeature = 6,
  kNumDeviceFeatures = 7
};

/// What moving the output of edge e's source from device `from` to device
/// `to` costs on `system`'s link between them, in the graph's cost units:
/// link.latency + outputBytes(source) / link.bandwidth, the simulator's
/// TransferModel::LinkBandwidth (uncontended). Needs a graph with output
/// bytes.
inline double pairTransferCost(const Graph &graph, const System &system,
                               int32_t e, DeviceId from, DeviceId to) {
  const Link &link = system.link(from, to);
  return link.latency + graph.outputBytes(graph.edgeSource(e)) / link.bandwidth;
}

class PlacementEnvironment {
public:
  PlacementEnvironment() = default;

  /// Starts an episode: nothing placed, candidates = the sources in id order.
  /// The graph must outlive the episode. Fails (returns false) only if
  /// `numDevices` < 1.
  bool reset(const Graph &graph, int32_t numDevices,
             StartEstimate estimate = StartEstimate::EarliestStart,
             std::string *error = nullptr);

  /// Places candidate `v` on device `d`; its successors whose predecessors
  /// are now all placed become candidates. Returns false (and changes
  /// nothing) if v is not a candidate or d is not a device.
  bool step(NodeId v, DeviceId d, std::string *error = nullptr);

  /// Pair-aware transfer costs. With a system (of numDevices() devices)
  /// and a graph that carries output bytes, an input u of v placed on
  /// another device than v's costs pairTransferCost(e, device(u), device(v))
  /// in every estimate (est, the device features, the join split): devices
  /// of different nodes pay the network's figures, those of one node their
  /// link's. Without one (the default), or when the graph has no bytes or
  /// the device count differs, every cross-device input costs its edge cost
  /// and nothing changes. Kept across reset(); the system must outlive the
  /// episodes that use it.
  void setSystem(const System *system);
  /// Whether the estimates use pairTransferCost (see setSystem).
  bool pairAware() const { return pairAware_; }
  /// What edge e (whose source is on `from`) costs a consumer on `to`:
  /// 0 on one device, else the edge cost or the pair's cost (setSystem).
  double transferCost(int32_t e, DeviceId from, DeviceId to) const {
    if (from == to)
      return 0;
    return pairAware_ ? pairTransferCost(*graph_, *system_, e, from, to)
                      : graph_->edgeCost(e);
  }

  const Graph &graph() const { return *graph_; }
  int32_t numDevices() const { return numDevices_; }
  StartEstimate startEstimate() const { return estimate_; }
  int32_t numPlaced() const { return static_cast<int32_t>(order_.size()); }
  bool done() const { return numPlaced() == graph_->numNodes(); }

  /// Unplaced nodes whose predecessors are all placed, in the order they
  /// became candidates (initial sources by id, then as steps released them,
  /// each step's in edge order). The same order as the reference's list.
  ArrayView<NodeId> candidates() const { return candidates_; }
  bool isCandidate(NodeId v) const { return candidateFlag_[v] != 0; }

  /// Device of each node by id, -1 while unplaced.
  ArrayView<DeviceId> assignment() const { return device_; }
  DeviceId deviceOf(NodeId v) const { return device_[v]; }
  bool isPlaced(NodeId v) const { return device_[v] >= 0; }
  /// Nodes in the order they were placed.
  ArrayView<NodeId> placementOrder() const { return order_; }
  /// Nodes placed on `d`, in placement order.
  ArrayView<NodeId> nodesOn(DeviceId d) const { return onDevice_[d]; }

  /// Estimated schedule of placed nodes.
  double estimatedStart(NodeId v) const { return start_[v]; }
  double estimatedFinish(NodeId v) const { return finish_[v]; }
  /// Estimated time at which `d` is free: the finish of its last placed node.
  double deviceFreeTime(DeviceId d) const { return free_[d]; }
  /// Total compute placed on `d`.
  double deviceLoad(DeviceId d) const { return load_[d]; }
  /// Largest estimated finish so far.
  double estimatedMakespan() const { return estimatedMakespan_; }

  /// est(v, d) of an unplaced node whose predecessors are placed.
  double earliestStart(NodeId v, DeviceId d) const;
  /// est(v, d) for every device: writes numDevices() values to `out`.
  void earliestStarts(NodeId v, double *out) const;
  /// The device with the smallest est(v, d) (lowest id among equals).
  DeviceId earliestDevice(NodeId v) const;
  /// The device features of `v` for every device, row-major by device with
  /// a stride of kNumDeviceFeatures. `columns` (kNumMethodDeviceFeatures or
  /// kNumDeviceFeatures) says how many leading columns to fill: a reader of
  /// METHOD's five does not pay for the join split.
  void deviceFeatures(NodeId v, double *out,
                      int32_t columns = kNumDeviceFeatures) const;
  /// The kJoinSplitFeature column alone: numDevices() values.
  void joinSplitCosts(NodeId v, double *out) const;

  /// Memory estimate. After reset() and before the first step, gives each
  /// device a capacity in bytes (numDevices() values; infinity: unlimited)
  /// and turns on the estimate of live bytes: the episode then keeps, per
  /// device, the bytes of the values present there (a node's output on its
  /// device, a copy on every other device that one of its placed readers
  /// is on) that some unplaced node still reads, graph outputs to the end,
  /// and the largest such total seen after each step: the memory profile
  /// of a run in placement order, a cheap stand-in for the simulator's
  /// peaks (Simulator's trackMemory). Needs a graph with output bytes;
  /// without them (or without a finite capacity) the estimate stays off and
  /// memoryPressure() is 0. reset() turns it off. Allocates O(N + E) once.
  void setMemoryCapacities(const std::vector<double> &capacities);
  bool tracksMemory() const { return memoryOn_; }
  /// Estimated bytes live on `d` now, and the most seen so far (0 when off).
  double residentBytes(DeviceId d) const { return memoryOn_ ? live_[d] : 0; }
  double estimatedPeakBytes(DeviceId d) const {
    return memoryOn_ ? peakLive_[d] : 0;
  }
  /// The kMemoryPressureFeature column alone: for every device d,
  /// (residentBytes(d) + v's output + v's inputs not yet on d) /
  /// capacity(d), what d would hold while v runs there; 0 for an unlimited
  /// device or when the estimate is off. Above 1: placing v on d overflows
  /// it (by the estimate).
  void memoryPressure(NodeId v, double *out) const;
  /// Whether placing v on d raises d's estimated overflow: the bytes d
  /// would hold exceed both its capacity and estimatedPeakBytes(d).
  /// `pressure` is memoryPressure()'s value for d (false when unlimited).
  bool raisesOverflow(double pressure, DeviceId d) const;

private:
  /// Per device: max finish of v's inputs on it, and max finish + edge cost
  /// of v's inputs on it (what a consumer elsewhere would wait for).
  void gatherInputTimes(NodeId v) const;

  /// earliestStarts() and joinSplitCosts() with pair costs: O(inputs x D).
  void pairEarliestStarts(NodeId v, double *out) const;
  void pairJoinSplitCosts(NodeId v, double *out) const;
  void updatePairAware();

  const Graph *graph_ = nullptr;
  const System *system_ = nullptr;
  bool pairAware_ = false;
  int32_t numDevices_ = 0;
  StartEstimate estimate_ = StartEstimate::EarliestStart;

  std::vector<DeviceId> device_;
  std::vector<double> start_, finish_;
  std::vector<int32_t> unplacedPreds_;
  std::vector<NodeId> candidates_;
  std::vector<char> candidateFlag_;
  std::vector<NodeId> order_;
  std::vector<std::vector<NodeId>> onDevice_;
  std::vector<double> free_, load_;
  double estimatedMakespan_ = 0;

  // Memory estimate (setMemoryCapacities). The devices holding a copy of
  // each node's value: copyDevice_[copyBegin_[u] .. + copyCount_[u]),
  // room for one per reader plus the producer's own.
  bool memoryOn_ = false;
  std::vector<double> capacity_, live_, peakLive_;
  std::vector<int32_t> unplacedSuccs_, copyBegin_, copyCount_;
  std::vector<DeviceId> copyDevice_;
  bool hasCopy(NodeId u, DeviceId d) const;
  void placeMemory(NodeId v, DeviceId d);

  // Query scratch, sized numDevices_.
  mutable std::vector<double> sameDeviceReady_, crossDeviceReady_, estScratch_,
      siblingScratch_;
};

/// An environment's candidates ordered by a per-node key, largest first and,
/// among equal keys, in the environment's order (earliest arrival first):
/// so first() is the candidate a scan of candidates() for the first largest
/// key finds. Kept in step incrementally (each node enters and leaves once),
/// a pick costs O(log ready) instead of a scan of the ready set: what keeps
/// the critical-path heuristic and the learned policy's candidate window
/// linear in the node count on graphs whose ready sets grow with their size.
///
///   order.reset(graph.numNodes(), key);
///   while (!env.done()) {
///     order.sync(env);            // takes in the new candidates
///     NodeId v = order.first();
///     env.step(v, device);
///     order.remove(v);
///   }
class CandidateOrder {
public:
  /// `key` (one value per node) must outlive the order.
  void reset(int32_t numNodes, const double *key);
  /// Adds the candidates the environment listed since the last sync.
  void sync(const PlacementEnvironment &env);
  /// Forgets a placed candidate (call after env.step).
  void remove(NodeId v);
  bool empty() const { return entries_.empty(); }
  size_t size() const { return entries_.size(); }
  /// The candidate with the largest key (the earliest among equals).
  NodeId first() const { return entries_.begin()->node; }
  /// The `count` first candidates of the order, written to `out` in the
  /// environment's order.
  void firstInEnvironmentOrder(size_t count, std::vector<NodeId> &out);

private:
  struct Entry {
    double key;
    int64_t arrival;
    NodeId node;
    bool operator<(const Entry &other) const {
      if (key != other.key)
        return key > other.key;
      return arrival < other.arrival;
    }
  };
  const double *key_ = nullptr;
  std::set<Entry> entries_;
  std::vector<int64_t> arrival_;
  int64_t nextArrival_ = 0;
  size_t known_ = 0; // env.candidates() entries already in entries_
  std::vector<std::pair<int64_t, NodeId>> scratch_;
};

} // namespace doppler::placement

#endif // DOPPLER_PLACEMENT_ENVIRONMENT_H
