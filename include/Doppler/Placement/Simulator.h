//===- Simulator.h - Work-conserving execution simulator --------*- C++ -*-===//
//
// Simulates running a placed graph on an asynchronous, work-conserving
// engine and returns its makespan. By default it reproduces the reference
// semantics of METHOD section 2 exactly, ties included. Extended modes (link
// contention, per-device speeds, memory capacity, the runtime's hand-off)
// are off by default and each can be switched on alone.
//
// Built for the inner loop of search and training: everything is allocated
// in the constructor, and run() costs O((V + E) log V) with no allocation.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_PLACEMENT_SIMULATOR_H
#define DOPPLER_PLACEMENT_SIMULATOR_H

#include "Doppler/Placement/Graph.h"
#include "Doppler/Placement/System.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace doppler::placement {

/// What the simulator does when a device's live buffers would exceed its
/// memory capacity.
enum class MemoryLimitPolicy {
  /// Stop: run() returns +infinity and schedule().status says why.
  Fail,
  /// The device does not start its next operation until enough memory has
  /// been freed (head-of-line: its FIFO order is kept). If nothing can ever
  /// free memory, the run fails with SimulationStatus::MemoryDeadlock.
  Stall,
  /// The runtime's MemoryPolicy::Wait: a device whose best ready node (the
  /// queue head) does not fit starts the best one that does instead (its
  /// queue order is kept among the rest); the nodes that do not fit wait
  /// and are retried, best first, whenever memory is freed there or a new
  /// node becomes ready. A run with waiting nodes and nothing running or in
  /// flight that could free memory fails with
  /// SimulationStatus::MemoryDeadlock.
  Skip,
};

/// How long a cross-device transfer of edge (u, v) takes.
enum class TransferModel {
  /// The graph's edge cost (= m(u) by default), as the reference does.
  EdgeCost,
  /// link.latency + outputBytes(u) / link.bandwidth (System links). Needs a
  /// graph with output bytes.
  LinkBandwidth,
};

/// Extended modes; all off by default, which gives the reference semantics.
/// Any of them switches run() to a plainer (about 1.5-2x slower) event loop
/// with the same event order.
struct SimulatorOptions {
  /// Each directed link carries one tensor at a time, in the order the
  /// transfers were requested (a producer's edges in edge order): a
  /// transfer starts when both the producer has finished and the link is
  /// free. A value crosses a link once per destination device, however
  /// many consumers it has there. Without it (the reference), every edge
  /// transfers on its own and any number are in flight at once. On a
  /// System with nodes, a transfer between nodes holds one NIC of the
  /// sending node and one of the receiving node instead of a link (each
  /// side's earliest free NIC, lowest number among equals) and starts when
  /// both are free; transfers inside a node use the links.
  bool linkContention = false;
  TransferModel transferModel = TransferModel::EdgeCost;
  /// Node v on device d computes for c(v) / System::speed(d).
  bool deviceSpeeds = false;
  /// The runtime's hand-off (System::handOff): a node whose device sat
  /// idle waiting for it starts System::handOff(d) after it is granted
  /// (its Schedule::start is then, and its device is busy from the grant to
  /// its end). It waited when it became ready by the end of a node on its
  /// own device (its last input to arrive was local; a transfer's latency
  /// already holds the receiver's wake-up) and the device, free since that
  /// end, had nothing else queued then. A node that was queued when its
  /// device became free, a source, and one whose last input came from
  /// another device start at the grant, as in the reference. Where
  /// System::handOffBytes(d) is positive, a node after a producer of fewer
  /// output bytes pays that share of it (outputBytes / handOffBytes; a
  /// graph without output bytes: nothing): the runtime's gap grows with
  /// the data the task before touched. With every hand-off 0 the schedule
  /// is the reference's.
  bool handOff = false;
  /// Tracks live buffers per device (needs Graph output bytes) and reports
  /// the peak per device in Schedule::peakMemory. A buffer is live over
  /// [allocation, free):
  ///  - a node's output, on its device, from the node's start until the
  ///    end of its last reader on that device or the arrival of its last
  ///    transfer to another device, whichever is later;
  ///  - a copy received from another device, on the receiver, from the
  ///    start of the transfer that brings it (the first one, if several
  ///    edges carry the value there: one copy per value and device) until
  ///    the end of its last reader on the receiver;
  ///  - a sink's output (a graph output) stays live to the end of the run.
  /// Graph inputs are the outputs of source nodes and follow the first
  /// rule: they appear when their source node starts. Frees come first at
  /// equal times: a buffer freed at t and one allocated at t never overlap
  /// (the peak is sampled once an instant's events are all done), so a
  /// zero-length interval counts for nothing.
  bool trackMemory = false;
  /// With trackMemory: enforce System::memoryCapacity with this policy. The
  /// check is made when a device is about to start its queue head: the
  /// live bytes there (received copies included; buffers freed later in
  /// the same instant not yet subtracted) plus the head's output must fit.
  /// A received copy is never refused: transfers are not held back.
  bool enforceMemoryCapacity = false;
  MemoryLimitPolicy memoryPolicy = MemoryLimitPolicy::Fail;
  /// Fill Schedule::transfers (costs a little time per run).
  bool recordTransfers = false;
  /// The order in which each device serves its ready nodes: smallest
  /// priority first, ties in readiness order (the runtime's
  /// ReadyOrder::Priority with Task::priority). One entry per node, or
  /// empty for readiness order (METHOD section 2). With priorities, a
  /// device that is (or becomes) free at an instant chooses once every
  /// node that becomes ready at that instant has joined its queue (in the
  /// reference, a device freed by its node's end chooses before that
  /// node's successors are ready, and an idle device starts the first node
  /// to become ready). Equal priorities give the reference's choices.
  /// Non-empty priorities switch run() to the extended engine. Inserting a
  /// ready node costs O(ready nodes on its device).
  std::vector<double> priorities;
};

enum class SimulationStatus {
  Ok,
  /// Fail policy: a node's output did not fit (failedNode, failedDevice).
  MemoryExceeded,
  /// Stall or Skip policy: some device waits for memory that nothing will
  /// free.
  MemoryDeadlock,
};

/// One cross-device movement of a producer's output.
struct TransferRecord {
  int32_t edge; // the edge it serves (the first one, with linkContention)
  DeviceId from, to;
  double start, end; // end = arrival on `to`
};

struct Schedule {
  /// Per node. After a failed run, nodes that never ran have NaN times.
  std::vector<double> start, end;
  std::vector<double> deviceBusy; // per device: total compute time run there
  double makespan = 0;            // the last end (0 for an empty graph)
  /// Extended modes only (empty otherwise).
  /// Per device, bytes: the most live at any instant (trackMemory; see
  /// SimulatorOptions::trackMemory for what is live when).
  std::vector<double> peakMemory;
  /// Per device: the first instant its peak was live (trackMemory). The
  /// peak holds over [peakMemoryTime[d], the next event there).
  std::vector<double> peakMemoryTime;
  std::vector<TransferRecord> transfers; // in request order (recordTransfers)
  SimulationStatus status = SimulationStatus::Ok;
  NodeId failedNode = -1;
  DeviceId failedDevice = -1;
  /// For a memory failure: bytes live on failedDevice, failedNode's output
  /// size, and the device's capacity.
  double failedLiveBytes = 0, failedRequestBytes = 0, failedCapacity = 0;

  bool ok() const { return status == SimulationStatus::Ok; }
  /// Peak bytes live on device `d` (0 when memory was not tracked).
  double peakMemoryOf(DeviceId d) const {
    return static_cast<size_t>(d) < peakMemory.size() ? peakMemory[d] : 0;
  }
  /// A one-line explanation of a failed run ("" when ok()).
  std::string describeFailure() const;
};

/// Checks length == graph.numNodes() and every id in [0, numDevices).
bool validateAssignment(const Graph &graph, int32_t numDevices,
                        ArrayView<DeviceId> assignment, std::string *error);

class Simulator {
public:
  /// Reference semantics on `numDevices` identical devices (>= 1). The graph
  /// must outlive the simulator.
  Simulator(const Graph &graph, int32_t numDevices,
            SimulatorOptions options = {});
  /// Extended modes read speeds, memory and links from `system`.
  /// Preconditions are those checked by create().
  Simulator(const Graph &graph, const System &system,
            SimulatorOptions options = {});
  /// Like the constructor, but reports options the inputs cannot support
  /// (e.g. trackMemory on a graph without output bytes) instead of
  /// asserting.
  static std::optional<Simulator> create(const Graph &graph,
                                         const System &system,
                                         SimulatorOptions options,
                                         std::string *error = nullptr);

  /// Simulates `assignment` (device per node, assumed valid); returns the
  /// makespan (+infinity when a memory limit makes the run fail).
  /// No heap allocation after the first call. One instance per thread.
  double run(ArrayView<DeviceId> assignment);
  /// Per-node start/end and per-device busy time of the last run().
  const Schedule &schedule() const { return schedule_; }

  const Graph &graph() const { return *graph_; }
  int32_t numDevices() const { return system_.numDevices(); }
  const SimulatorOptions &options() const { return options_; }

private:
  /// Strictly-future events, earliest (time, order) first. `order` is
  /// creation order << 32 | the packed event. Times are non-negative, so
  /// their bit patterns order like the times and keys compare as integers.
  /// A sorted array while small (the common case), which beats a heap
  /// there; past kSortedLimit entries it turns into a binary heap (a sorted
  /// array already is one) to stay O(log n).
  class FutureQueue {
  public:
    void reserve(size_t capacity) { entries_.resize(capacity); }
    void clear() { begin_ = end_ = 0, isHeap_ = false; }
    bool empty() const { return begin_ == end_; }
    uint64_t topTimeBits() const { return entries_[begin_].timeBits; }
    double topTime() const;
    /// Whether this queue's earliest entry precedes `other`'s (both
    /// non-empty).
    bool topPrecedes(const FutureQueue &other) const {
      const Entry &a = entries_[begin_], &b = other.entries_[other.begin_];
      return a.timeBits < b.timeBits ||
             (a.timeBits == b.timeBits && a.order < b.order);
    }
    inline void push(double time, uint64_t order);
    inline uint64_t pop();

  private:
    struct Entry {
      uint64_t timeBits;
      uint64_t order;
      bool operator<(const Entry &other) const {
        return timeBits < other.timeBits ||
               (timeBits == other.timeBits && order < other.order);
      }
    };
    static constexpr size_t kSortedLimit = 64;
    std::vector<Entry> entries_;
    size_t begin_ = 0, end_ = 0;
    bool isHeap_ = false;
  };

  double runReference(ArrayView<DeviceId> assignment);
  double runReferenceFifo(ArrayView<DeviceId> assignment);
  void finishReferenceSchedule(ArrayView<DeviceId> assignment, double now);
  double runExtended(ArrayView<DeviceId> assignment);
  /// One run of runExtended (SimulatorExtended.cpp).
  struct ExtendedRun;

  // Fixed per graph, packed so the hot loop needs few base pointers.
  struct NodeInfo {
    double compute;
    int32_t firstEdge, lastEdge; // out-edges, in edge order
    int32_t inDegree;
    uint32_t uniformOutCost; // all out-edges cost the same
  };
  struct EdgeInfo {
    NodeId target;
    double cost;
  };
  // Per run.
  struct NodeState {
    int32_t pendingInputs;
    NodeId nextInQueue;   // device FIFO link
    uint32_t finishOrder; // creation order of its ReleaseAndFinish event
  };
  struct DeviceState {
    NodeId head, tail; // FIFO of ready nodes waiting for the device
    int32_t running;
  };

  const Graph *graph_;
  System system_;
  SimulatorOptions options_;
  bool referenceMode_;
  Schedule schedule_;

  // Working state, sized once in the constructor.
  std::vector<NodeInfo> nodes_;
  std::vector<EdgeInfo> edges_;
  std::vector<NodeState> nodeState_;
  std::vector<DeviceState> deviceState_;
  std::vector<uint32_t> nowEvents_; // FIFO of events at the current time
  FutureQueue future_;
  FutureQueue arrivals_; // runReference keeps arrivals apart from Dones
  bool hasZeroCompute_ = false;
  // The level lists of runReference (see there).
  std::vector<uint32_t> roots_;
  std::vector<int32_t> localEdges_;
  std::vector<NodeId> readyFromRemote_, readyFromLocal_;

  // Extended-mode state.
  std::vector<double> outputBytes_;    // per node (zeros if none given)
  std::vector<double> duration_;       // per node, of the current run
  // The hand-off mode: per node, when it became ready and the node on its
  // own device that made it so (-1: none); per device, when it last became
  // free and whether its queue was empty then.
  std::vector<double> readyAt_;
  std::vector<NodeId> readyFrom_;
  std::vector<double> freeAt_;
  std::vector<uint8_t> emptyAtFree_;
  /// Per (node u, device d), u * numDevices + d: how many uses of u's
  /// buffer on d are still to come (readers there; on u's own device also
  /// its outgoing cross-device transfers). The buffer is freed at 0.
  std::vector<int32_t> copyHolders_;
  std::vector<NodeId> copySentFor_; // per device: dedupe copies (value, dest)
  std::vector<double> liveBytes_;      // per device
  std::vector<uint8_t> stalled_;       // per device
  std::vector<uint8_t> grantDue_;      // per device (priorities)
  std::vector<double> linkFreeAt_;     // per ordered device pair
  std::vector<double> nicFreeAt_;      // per NIC (System::firstNic)
  std::vector<NodeId> lastSenderTo_;   // per device: dedupe (value, dest)
  std::vector<double> lastArrivalTo_;  // per device
};

} // namespace doppler::placement

#endif // DOPPLER_PLACEMENT_SIMULATOR_H
