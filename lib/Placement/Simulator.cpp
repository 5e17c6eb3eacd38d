//===- Simulator.cpp - Work-conserving execution simulator ----------------===//
//
// The reference (github xinyuyao/Doppler, env/cost.py) runs one SimPy
// process per edge and per node and orders every event by (time, priority,
// creation sequence). We replay the same event cascade (METHOD section 2)
// without SimPy's generality:
//
//  * Events created with zero delay land at the current time. Every event
//    already queued for that time was created earlier (while the clock was
//    smaller), so it has a smaller sequence number: zero-delay events run
//    after all of them, in creation order. A plain FIFO holds them.
//  * Only strictly-future events (compute completions, cross-device
//    arrivals) go into a priority queue ordered by (time, creation order).
//    It holds about one completion per device plus the transfers in
//    flight, so it stays small.
//  * The start-up events are "urgent" in SimPy, so they all run before any
//    ordinary event at time 0; the only visible effect of that phase is
//    that every source node becomes ready, in id order.
//
// Savings that keep the order exact (each checked against the reference
// data and against a literal port, unittests/Placement/NaiveSimulator.h):
//  * All cross-device transfers out of one node are created in one go with
//    the same delay (m(v)), so their arrival events are consecutive in
//    (time, sequence) order: one queue entry stands for the whole batch.
//  * Release(d) and Finished(v) are always scheduled back to back, so one
//    event does both.
//  * Granted(v) only records the start and schedules Done(v); it creates
//    nothing at the current instant. Done(v) is scheduled at once with the
//    creation order Granted would have given it (see grant()).
//  * Future events only need their creation order relative to each other,
//    and they are created by events run in FIFO order; so an event that
//    will create future events reserves its places in that order when it
//    is queued.
//  * Duplicate edges (which the reference keeps as separate, redundant
//    processes) are merged by the Graph; the redundant events never wake
//    anything, so merging changes no timing.
//  * With no zero-time node, the FIFO of one instant always holds the same
//    five levels of events, which runReference runs as plain loops
//    (runReferenceFifo is the general FIFO version).
//
// runExtended is a separate, plainer event loop for the extended modes.
//
//===----------------------------------------------------------------------===//

#include "Doppler/Placement/Simulator.h"

#include "NumberFormat.h"

#include <algorithm>
#include <cassert>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

using namespace doppler::placement;

namespace {

/// What an event does when it runs (METHOD section 2, steps 2-8).
enum EventKind : uint32_t {
  InputsReady,      // node: joins its device's FIFO
  Granted,          // node: starts computing
  Done,             // node: stops computing
  ReleaseAndFinish, // node: its device may grant its queue head (Release),
                    // then the node sends its output along its out-edges
                    // (Finished). The reference schedules these two events
                    // back to back, so one event can do both in order.
  Arrived,          // edge: the transfer (possibly of 0 time) is over
  TransferComplete, // edge: counts towards its target's inputs
  ArrivalBatch,     // node: Arrived for each of its cross-device edges
};

constexpr uint32_t kKindShift = 29;
constexpr uint32_t kIdMask = (1u << kKindShift) - 1;

inline uint32_t packEvent(EventKind kind, int32_t id) {
  return (static_cast<uint32_t>(kind) << kKindShift) |
         static_cast<uint32_t>(id);
}

constexpr double kInfinity = std::numeric_limits<double>::infinity();

using detail::formatNumber;

} // namespace

//===----------------------------------------------------------------------===//
// Schedule and validation
//===----------------------------------------------------------------------===//

std::string Schedule::describeFailure() const {
  switch (status) {
  case SimulationStatus::Ok:
    return {};
  case SimulationStatus::MemoryExceeded:
    return "memory exceeded: node " + std::to_string(failedNode) + " needs " +
           formatNumber(failedRequestBytes) + " bytes on device " +
           std::to_string(failedDevice) + ", which has " +
           formatNumber(failedLiveBytes) + " of " +
           formatNumber(failedCapacity) + " bytes in use";
  case SimulationStatus::MemoryDeadlock:
    return "memory deadlock: device " + std::to_string(failedDevice) +
           " waits to run node " + std::to_string(failedNode) + " (needs " +
           formatNumber(failedRequestBytes) + " bytes, " +
           formatNumber(failedLiveBytes) + " of " +
           formatNumber(failedCapacity) +
           " in use) but nothing left to run can free memory there";
  }
  return {};
}

bool doppler::placement::validateAssignment(const Graph &graph,
                                            int32_t numDevices,
                                            ArrayView<DeviceId> assignment,
                                            std::string *error) {
  auto fail = [&](std::string message) {
    if (error)
      *error = std::move(message);
    return false;
  };
  if (numDevices < 1)
    return fail("device count " + std::to_string(numDevices) +
                " is less than 1");
  if (assignment.size() != static_cast<size_t>(graph.numNodes()))
    return fail("assignment has " + std::to_string(assignment.size()) +
                " entries, expected " + std::to_string(graph.numNodes()) +
                " (one per node)");
  for (size_t v = 0; v < assignment.size(); ++v)
    if (assignment[v] < 0 || assignment[v] >= numDevices)
      return fail("node " + std::to_string(v) + ": device " +
                  std::to_string(assignment[v]) + " out of range [0, " +
                  std::to_string(numDevices) + ")");
  return true;
}

//===----------------------------------------------------------------------===//
// Construction
//===----------------------------------------------------------------------===//

Simulator::Simulator(const Graph &graph, int32_t numDevices,
                     SimulatorOptions options)
    : Simulator(graph, System::uniform(numDevices), options) {
  assert(numDevices >= 1 && "a simulator needs at least one device");
}

Simulator::Simulator(const Graph &graph, const System &system,
                     SimulatorOptions options)
    : graph_(&graph), system_(system), options_(options) {
  assert(static_cast<uint32_t>(std::max(graph.numNodes(), graph.numEdges())) <
             (1u << kKindShift) &&
         "graph too large for the packed event encoding");
  referenceMode_ = !options_.linkContention &&
                   options_.transferModel == TransferModel::EdgeCost &&
                   !options_.deviceSpeeds && !options_.trackMemory &&
                   !options_.recordTransfers;

  const int32_t numNodes = graph.numNodes();
  const int32_t numEdges = graph.numEdges();
  const int32_t numDevices = system_.numDevices();

  nodes_.resize(numNodes);
  for (NodeId v = 0; v < numNodes; ++v) {
    NodeInfo &node = nodes_[v];
    node.compute = graph.computeCost(v);
    node.firstEdge = graph.succBegin(v);
    node.lastEdge = graph.succEnd(v);
    node.inDegree = graph.inDegree(v);
    node.uniformOutCost = 1;
    for (int32_t e = node.firstEdge + 1; e < node.lastEdge; ++e)
      if (graph.edgeCost(e) != graph.edgeCost(node.firstEdge))
        node.uniformOutCost = 0;
  }
  edges_.resize(numEdges);
  for (int32_t e = 0; e < numEdges; ++e)
    edges_[e] = {graph.edgeTarget(e), graph.edgeCost(e)};
  nodeState_.resize(numNodes);
  deviceState_.resize(numDevices);

  // Each node causes at most 5 events and each edge 2, all of which may
  // fall on one instant.
  nowEvents_.resize(5 * static_cast<size_t>(numNodes) + 2 * numEdges + 1);
  future_.reserve(static_cast<size_t>(numNodes) + numEdges + 1);
  arrivals_.reserve(static_cast<size_t>(numNodes) + numEdges + 1);
  hasZeroCompute_ = false;
  for (const NodeInfo &node : nodes_)
    hasZeroCompute_ |= node.compute == 0;
  roots_.resize(static_cast<size_t>(numNodes) + numEdges + 1);
  localEdges_.resize(numEdges + 1);
  readyFromRemote_.resize(numNodes + 1);
  readyFromLocal_.resize(numNodes + 1);

  schedule_.start.assign(numNodes, 0.0);
  schedule_.end.assign(numNodes, 0.0);
  schedule_.deviceBusy.assign(numDevices, 0.0);

  if (referenceMode_)
    return;
  // The extended engine's state.
  assert((!options_.trackMemory &&
          options_.transferModel != TransferModel::LinkBandwidth) ||
         graph.hasOutputBytes());
  outputBytes_ = graph.hasOutputBytes() ? graph.outputBytesList()
                                        : std::vector<double>(numNodes, 0.0);
  duration_.resize(numNodes);
  consumersLeft_.resize(numNodes);
  liveBytes_.resize(numDevices);
  stalled_.resize(numDevices);
  linkFreeAt_.resize(static_cast<size_t>(numDevices) * numDevices);
  lastSenderTo_.resize(numDevices);
  lastArrivalTo_.resize(numDevices);
  if (options_.trackMemory)
    schedule_.peakMemory.assign(numDevices, 0.0);
  if (options_.recordTransfers)
    schedule_.transfers.reserve(numEdges);
}

std::optional<Simulator> Simulator::create(const Graph &graph,
                                           const System &system,
                                           SimulatorOptions options,
                                           std::string *error) {
  auto fail = [&](std::string message) -> std::optional<Simulator> {
    if (error)
      *error = std::move(message);
    return std::nullopt;
  };
  if (system.numDevices() < 1)
    return fail("the system has no devices");
  if (options.trackMemory && !graph.hasOutputBytes())
    return fail("memory tracking needs the output size of every node, and "
                "the graph has none");
  if (options.enforceMemoryCapacity && !options.trackMemory)
    return fail("enforcing memory capacities needs trackMemory");
  if (options.transferModel == TransferModel::LinkBandwidth &&
      !graph.hasOutputBytes())
    return fail("the link-bandwidth transfer model needs the output size of "
                "every node, and the graph has none");
  if (std::max(graph.numNodes(), graph.numEdges()) >=
      static_cast<int32_t>(1u << kKindShift))
    return fail("graph too large: the simulator supports fewer than " +
                std::to_string(1u << kKindShift) + " nodes and edges");
  return Simulator(graph, system, options);
}

//===----------------------------------------------------------------------===//
// The future-event queue
//===----------------------------------------------------------------------===//

namespace {
inline uint64_t timeToBits(double time) {
  assert(time >= 0 && "times are non-negative");
  uint64_t bits;
  std::memcpy(&bits, &time, sizeof(bits));
  return bits;
}
} // namespace

double Simulator::FutureQueue::topTime() const {
  double time;
  std::memcpy(&time, &entries_[begin_].timeBits, sizeof(time));
  return time;
}

inline void Simulator::FutureQueue::push(double time, uint64_t order) {
  const Entry entry{timeToBits(time), order};
  Entry *entries = entries_.data();
  if (!isHeap_) {
    if (end_ - begin_ < kSortedLimit) {
      // Insertion from the back: new events tend to be the latest.
      size_t i = end_++;
      while (i > begin_ && entry < entries[i - 1]) {
        entries[i] = entries[i - 1];
        --i;
      }
      entries[i] = entry;
      return;
    }
    // Too many for insertion: the sorted range, moved to the front, is a
    // valid heap as it stands.
    std::copy(entries + begin_, entries + end_, entries);
    end_ -= begin_;
    begin_ = 0;
    isHeap_ = true;
  }
  size_t i = end_++;
  while (i > 0) {
    size_t parent = (i - 1) / 2;
    if (!(entry < entries[parent]))
      break;
    entries[i] = entries[parent];
    i = parent;
  }
  entries[i] = entry;
}

inline uint64_t Simulator::FutureQueue::pop() {
  Entry *entries = entries_.data();
  if (!isHeap_)
    return entries[begin_++].order;
  const uint64_t top = entries[0].order;
  const Entry last = entries[--end_];
  const size_t size = end_;
  size_t i = 0;
  for (;;) {
    size_t child = 2 * i + 1;
    if (child >= size)
      break;
    if (child + 1 < size && entries[child + 1] < entries[child])
      ++child;
    if (!(entries[child] < last))
      break;
    entries[i] = entries[child];
    i = child;
  }
  entries[i] = last;
  return top;
}

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

double Simulator::run(ArrayView<DeviceId> assignment) {
  assert(assignment.size() == static_cast<size_t>(graph_->numNodes()));
  return referenceMode_ ? runReference(assignment) : runExtended(assignment);
}

// The reference's events at one instant run in FIFO order, starting with
// the future events due then (the "roots"), and each event appends the
// events it creates. So they run level by level: the roots, then their
// children, then theirs. With no zero-time node, the levels always look
// like this:
//   0  roots: Done(v); ArrivalBatch(v) or Arrived(e) of cross-device edges
//   1  ReleaseAndFinish(v) per Done(v) root; TransferComplete(e) per
//      cross-device arrival
//   2  Arrived(e) of each finished node's zero-delay edges;
//      InputsReady(w) for nodes whose last input arrived from afar
//   3  TransferComplete(e) of those zero-delay edges
//   4  InputsReady(w) for nodes whose last input came from nearby
// (Granted is folded into grant(), as in runReferenceFifo.) Only the order
// of effects on shared state matters: a TransferComplete only counts its
// target's inputs, and only InputsReady and ReleaseAndFinish touch device
// queues. So a few plain loops over lists give the same effects in the same
// order without dispatching on every event. A zero-time node would add
// levels; then the run is redone by runReferenceFifo, which handles
// anything.
double Simulator::runReference(ArrayView<DeviceId> assignment) {
  if (hasZeroCompute_)
    return runReferenceFifo(assignment);
  const int32_t numNodes = graph_->numNodes();
  const int32_t numDevices = system_.numDevices();

  const DeviceId *device = assignment.data();
  const NodeInfo *nodes = nodes_.data();
  const EdgeInfo *edges = edges_.data();
  NodeState *state = nodeState_.data();
  DeviceState *devices = deviceState_.data();
  uint32_t *roots = roots_.data();
  int32_t *localEdges = localEdges_.data();
  NodeId *readyFromRemote = readyFromRemote_.data();
  NodeId *readyFromLocal = readyFromLocal_.data();
  double *start = schedule_.start.data();
  // Dones and arrivals in two queues: each stays shorter, and new entries
  // of one kind mostly land at its back.
  FutureQueue &dones = future_;
  FutureQueue &arrivals = arrivals_;

  for (NodeId v = 0; v < numNodes; ++v)
    state[v].pendingInputs = nodes[v].inDegree;
  for (DeviceId d = 0; d < numDevices; ++d)
    devices[d] = {-1, -1, 0};
  dones.clear();
  arrivals.clear();
  auto earliest = [&]() -> FutureQueue * {
    if (dones.empty())
      return arrivals.empty() ? nullptr : &arrivals;
    if (arrivals.empty() || dones.topPrecedes(arrivals))
      return &dones;
    return &arrivals;
  };

  uint64_t created = 0; // creation order of future events
  double now = 0;
  bool zeroTime = false;

  auto grant = [&](DeviceState &dev, NodeId v) {
    dev.running = 1;
    const double finish = now + nodes[v].compute;
    zeroTime |= finish == now;
    start[v] = now;
    dones.push(finish, (created++ << 32) | packEvent(Done, v));
  };
  auto grantHead = [&](DeviceState &dev) {
    const NodeId v = dev.head;
    dev.head = state[v].nextInQueue;
    if (dev.head < 0)
      dev.tail = -1;
    grant(dev, v);
  };
  // InputsReady(v): join the device's FIFO; an idle device starts its head.
  auto inputsReady = [&](NodeId v) {
    DeviceState &dev = devices[device[v]];
    if (!dev.running && dev.head < 0) {
      grant(dev, v);
      return;
    }
    state[v].nextInQueue = -1;
    if (dev.tail < 0)
      dev.head = v;
    else
      state[dev.tail].nextInQueue = v;
    dev.tail = v;
    if (!dev.running)
      grantHead(dev);
  };

  // Time 0: the sources become ready in id order (their InputsReady events
  // are the first ordinary events).
  for (NodeId v = 0; v < numNodes; ++v)
    if (nodes[v].inDegree == 0)
      inputsReady(v);
  if (zeroTime)
    return runReferenceFifo(assignment);

  while (FutureQueue *queue = earliest()) {
    now = queue->topTime();
    const uint64_t nowBits = queue->topTimeBits();
    // Level 0: the roots, in order. A Done frees its device and reserves
    // the creation order of the arrivals its ReleaseAndFinish will create.
    size_t numRoots = 0;
    do {
      const auto root = static_cast<uint32_t>(queue->pop());
      roots[numRoots++] = root;
      if ((root >> kKindShift) == Done) {
        const NodeId v = static_cast<NodeId>(root & kIdMask);
        devices[device[v]].running = 0;
        state[v].finishOrder = static_cast<uint32_t>(created);
        created += nodes[v].lastEdge - nodes[v].firstEdge;
      }
    } while ((queue = earliest()) && queue->topTimeBits() == nowBits);

    // Level 1, in root order.
    size_t numLocal = 0, numRemote = 0;
    for (size_t r = 0; r < numRoots; ++r) {
      const uint32_t event = roots[r];
      const int32_t id = static_cast<int32_t>(event & kIdMask);
      const auto kind = static_cast<EventKind>(event >> kKindShift);
      if (kind == Done) {
        // ReleaseAndFinish(id).
        const DeviceId from = device[id];
        DeviceState &dev = devices[from];
        if (!dev.running && dev.head >= 0)
          grantHead(dev);
        const NodeInfo &node = nodes[id];
        uint64_t order = state[id].finishOrder;
        bool batched = false;
        for (int32_t e = node.firstEdge; e < node.lastEdge; ++e) {
          if (device[edges[e].target] == from) {
            localEdges[numLocal++] = e;
            continue;
          }
          const double arrival = now + edges[e].cost;
          if (arrival == now) {
            localEdges[numLocal++] = e;
          } else if (!node.uniformOutCost) {
            arrivals.push(arrival, (order++ << 32) | packEvent(Arrived, e));
          } else if (!batched) {
            arrivals.push(arrival,
                          (order++ << 32) | packEvent(ArrivalBatch, id));
            batched = true;
          }
        }
      } else if (kind == ArrivalBatch) {
        const DeviceId from = device[id];
        for (int32_t e = nodes[id].firstEdge; e < nodes[id].lastEdge; ++e) {
          const NodeId target = edges[e].target;
          if (device[target] != from && --state[target].pendingInputs == 0)
            readyFromRemote[numRemote++] = target;
        }
      } else { // Arrived(e) of a node whose edges cost differently
        const NodeId target = edges[id].target;
        if (--state[target].pendingInputs == 0)
          readyFromRemote[numRemote++] = target;
      }
    }

    // Level 2: nodes whose last input came from another device.
    for (size_t i = 0; i < numRemote; ++i)
      inputsReady(readyFromRemote[i]);
    // Levels 3 and 4: zero-delay arrivals complete, then those nodes.
    size_t numReady = 0;
    for (size_t i = 0; i < numLocal; ++i) {
      const NodeId target = edges[localEdges[i]].target;
      if (--state[target].pendingInputs == 0)
        readyFromLocal[numReady++] = target;
    }
    for (size_t i = 0; i < numReady; ++i)
      inputsReady(readyFromLocal[i]);

    if (zeroTime)
      return runReferenceFifo(assignment);
  }

  finishReferenceSchedule(assignment, now);
  return now;
}

double Simulator::runReferenceFifo(ArrayView<DeviceId> assignment) {
  const int32_t numNodes = graph_->numNodes();
  const int32_t numDevices = system_.numDevices();

  // Few base pointers, all in locals, and one dispatch site: the loop then
  // fits in registers.
  const DeviceId *device = assignment.data();
  const NodeInfo *nodes = nodes_.data();
  const EdgeInfo *edges = edges_.data();
  NodeState *state = nodeState_.data();
  DeviceState *devices = deviceState_.data();
  uint32_t *nowEvents = nowEvents_.data();
  double *start = schedule_.start.data();
  FutureQueue &future = future_;

  for (NodeId v = 0; v < numNodes; ++v)
    state[v].pendingInputs = nodes[v].inDegree;
  for (DeviceId d = 0; d < numDevices; ++d)
    devices[d] = {-1, -1, 0};
  future.clear();

  // Creation order of future events, as SimPy's sequence numbers rank them.
  uint64_t created = 0;
  size_t nowBegin = 0, nowEnd = 0;
  double now = 0;

  // Device d starts node v now. The reference queues a Granted(v) event at
  // the back of the FIFO, which records the start and schedules Done(v).
  // As Granted creates nothing at the current instant, Done(v) is
  // scheduled right away with the creation order Granted would give it.
  // Only a zero-time node, whose Done lands in the FIFO, needs the real
  // event.
  auto grant = [&](DeviceState &dev, NodeId v) {
    dev.running = 1;
    const double finish = now + nodes[v].compute;
    if (finish == now) {
      nowEvents[nowEnd++] = packEvent(Granted, v);
      return;
    }
    start[v] = now;
    future.push(finish, (created++ << 32) | packEvent(Done, v));
  };
  auto grantHead = [&](DeviceState &dev) {
    const NodeId v = dev.head;
    dev.head = state[v].nextInQueue;
    if (dev.head < 0)
      dev.tail = -1;
    grant(dev, v);
  };

  // Start-up: sources become ready in id order.
  for (NodeId v = 0; v < numNodes; ++v)
    if (nodes[v].inDegree == 0)
      nowEvents[nowEnd++] = packEvent(InputsReady, v);

  for (;;) {
    if (nowBegin == nowEnd) {
      if (future.empty())
        break;
      // Advance the clock. Future events of this instant predate every
      // zero-delay event they will create, so they all go first.
      nowBegin = nowEnd = 0;
      now = future.topTime();
      do
        nowEvents[nowEnd++] = static_cast<uint32_t>(future.pop());
      while (!future.empty() && future.topTime() == now);
    }
    const uint32_t event = nowEvents[nowBegin++];
    const int32_t id = static_cast<int32_t>(event & kIdMask);
    switch (static_cast<EventKind>(event >> kKindShift)) {
    case InputsReady: {
      DeviceState &dev = devices[device[id]];
      if (!dev.running && dev.head < 0) {
        grant(dev, id); // idle with nobody waiting
        break;
      }
      state[id].nextInQueue = -1;
      if (dev.tail < 0)
        dev.head = id;
      else
        state[dev.tail].nextInQueue = id;
      dev.tail = id;
      // Idle between a Done and its Release: the head is granted now.
      if (!dev.running)
        grantHead(dev);
      break;
    }
    case Granted: // zero-time nodes only
      start[id] = now;
      nowEvents[nowEnd++] = packEvent(Done, id);
      break;
    case Done: {
      devices[device[id]].running = 0;
      // Its arrivals are created when ReleaseAndFinish runs; reserve their
      // places in the creation order now, as the FIFO fixes them.
      state[id].finishOrder = static_cast<uint32_t>(created);
      created += nodes[id].lastEdge - nodes[id].firstEdge;
      nowEvents[nowEnd++] = packEvent(ReleaseAndFinish, id);
      break;
    }
    case ReleaseAndFinish: {
      const DeviceId from = device[id];
      DeviceState &dev = devices[from];
      if (!dev.running && dev.head >= 0)
        grantHead(dev);
      const NodeInfo &node = nodes[id];
      uint64_t order = state[id].finishOrder;
      bool batched = false;
      for (int32_t e = node.firstEdge; e < node.lastEdge; ++e) {
        if (device[edges[e].target] == from) {
          nowEvents[nowEnd++] = packEvent(Arrived, e);
          continue;
        }
        const double arrival = now + edges[e].cost;
        if (arrival == now) {
          nowEvents[nowEnd++] = packEvent(Arrived, e);
        } else if (!node.uniformOutCost) {
          future.push(arrival, (order++ << 32) | packEvent(Arrived, e));
        } else if (!batched) {
          future.push(arrival, (order++ << 32) | packEvent(ArrivalBatch, id));
          batched = true;
        }
      }
      break;
    }
    case Arrived:
      nowEvents[nowEnd++] = packEvent(TransferComplete, id);
      break;
    case TransferComplete: {
      const NodeId target = edges[id].target;
      if (--state[target].pendingInputs == 0)
        nowEvents[nowEnd++] = packEvent(InputsReady, target);
      break;
    }
    case ArrivalBatch: {
      const DeviceId from = device[id];
      for (int32_t e = nodes[id].firstEdge; e < nodes[id].lastEdge; ++e)
        if (device[edges[e].target] != from)
          nowEvents[nowEnd++] = packEvent(TransferComplete, e);
      break;
    }
    }
  }

  finishReferenceSchedule(assignment, now);
  return now;
}

void Simulator::finishReferenceSchedule(ArrayView<DeviceId> assignment,
                                        double now) {
  // Ends and busy times follow from the starts: each Done event fired at
  // exactly start + c.
  const double *start = schedule_.start.data();
  double *end = schedule_.end.data();
  double *busy = schedule_.deviceBusy.data();
  std::fill(busy, busy + system_.numDevices(), 0.0);
  for (NodeId v = 0; v < graph_->numNodes(); ++v) {
    end[v] = start[v] + nodes_[v].compute;
    busy[assignment[v]] += nodes_[v].compute;
  }
  schedule_.makespan = now;
}

double Simulator::runExtended(ArrayView<DeviceId> assignment) {
  const Graph &graph = *graph_;
  const int32_t numNodes = graph.numNodes();
  const int32_t numDevices = system_.numDevices();
  const bool trackMemory = options_.trackMemory;
  const bool enforceMemory = trackMemory && options_.enforceMemoryCapacity;
  const bool stallOnMemory =
      enforceMemory && options_.memoryPolicy == MemoryLimitPolicy::Stall;
  const bool byteModel = options_.transferModel == TransferModel::LinkBandwidth;

  const DeviceId *device = assignment.data();
  for (NodeId v = 0; v < numNodes; ++v)
    nodeState_[v].pendingInputs = nodes_[v].inDegree;
  std::fill(deviceState_.begin(), deviceState_.end(), DeviceState{-1, -1, 0});
  std::fill(schedule_.deviceBusy.begin(), schedule_.deviceBusy.end(), 0.0);
  // Nodes that never run (after a failure) keep NaN times.
  std::fill(schedule_.start.begin(), schedule_.start.end(),
            std::numeric_limits<double>::quiet_NaN());
  std::fill(schedule_.end.begin(), schedule_.end.end(),
            std::numeric_limits<double>::quiet_NaN());
  std::fill(liveBytes_.begin(), liveBytes_.end(), 0.0);
  std::fill(stalled_.begin(), stalled_.end(), 0);
  std::fill(linkFreeAt_.begin(), linkFreeAt_.end(), 0.0);
  std::fill(lastSenderTo_.begin(), lastSenderTo_.end(), -1);
  std::fill(schedule_.peakMemory.begin(), schedule_.peakMemory.end(), 0.0);
  schedule_.transfers.clear();
  schedule_.status = SimulationStatus::Ok;
  schedule_.failedNode = schedule_.failedDevice = -1;
  schedule_.failedLiveBytes = schedule_.failedRequestBytes =
      schedule_.failedCapacity = 0;
  for (NodeId v = 0; v < numNodes; ++v) {
    consumersLeft_[v] = graph.outDegree(v);
    duration_[v] = options_.deviceSpeeds
                       ? graph.computeCost(v) / system_.speed(device[v])
                       : graph.computeCost(v);
  }
  future_.clear();
  uint64_t created = 0; // creation order of future events

  size_t nowBegin = 0, nowEnd = 0;
  double now = 0;
  bool failed = false;
  auto pushNow = [&](EventKind kind, int32_t id) {
    nowEvents_[nowEnd++] = packEvent(kind, id);
  };
  auto fits = [&](DeviceId d, NodeId v) {
    return liveBytes_[d] + outputBytes_[v] <= system_.memoryCapacity(d);
  };
  auto recordMemoryFailure = [&](SimulationStatus status, DeviceId d,
                                 NodeId v) {
    schedule_.status = status;
    schedule_.failedNode = v;
    schedule_.failedDevice = d;
    schedule_.failedLiveBytes = liveBytes_[d];
    schedule_.failedRequestBytes = outputBytes_[v];
    schedule_.failedCapacity = system_.memoryCapacity(d);
  };
  // Starts device d's queue head if its output fits (or memory is not
  // enforced); otherwise stalls or fails, as the policy says.
  auto tryGrantHead = [&](DeviceId d) {
    DeviceState &dev = deviceState_[d];
    const NodeId v = dev.head;
    if (enforceMemory && !fits(d, v)) {
      if (stallOnMemory) {
        stalled_[d] = 1;
        return;
      }
      recordMemoryFailure(SimulationStatus::MemoryExceeded, d, v);
      failed = true;
      return;
    }
    stalled_[d] = 0;
    dev.head = nodeState_[v].nextInQueue;
    if (dev.head < 0)
      dev.tail = -1;
    dev.running = 1;
    if (trackMemory) {
      // The output buffer is allocated as the node starts (this instant).
      liveBytes_[d] += outputBytes_[v];
      schedule_.peakMemory[d] =
          std::max(schedule_.peakMemory[d], liveBytes_[d]);
    }
    pushNow(Granted, v);
  };
  auto freeOutput = [&](NodeId u) {
    const DeviceId d = device[u];
    liveBytes_[d] -= outputBytes_[u];
    // A device waiting for memory retries as soon as some is freed.
    if (stalled_[d] && !deviceState_[d].running)
      tryGrantHead(d);
  };
  auto transferTime = [&](int32_t e, DeviceId from, DeviceId to) {
    if (!byteModel)
      return graph.edgeCost(e);
    const Link &link = system_.link(from, to);
    return link.latency + outputBytes_[graph.edgeSource(e)] / link.bandwidth;
  };

  auto process = [&](uint32_t event) {
    const int32_t id = static_cast<int32_t>(event & kIdMask);
    switch (static_cast<EventKind>(event >> kKindShift)) {
    case InputsReady: {
      const DeviceId d = device[id];
      DeviceState &dev = deviceState_[d];
      nodeState_[id].nextInQueue = -1;
      if (dev.tail < 0)
        dev.head = id;
      else
        nodeState_[dev.tail].nextInQueue = id;
      dev.tail = id;
      if (!dev.running)
        tryGrantHead(d);
      break;
    }
    case Granted: {
      schedule_.start[id] = now;
      const double finish = now + duration_[id];
      if (finish == now)
        pushNow(Done, id);
      else
        future_.push(finish, (created++ << 32) | packEvent(Done, id));
      break;
    }
    case Done: {
      schedule_.end[id] = now;
      const DeviceId d = device[id];
      deviceState_[d].running = 0;
      schedule_.deviceBusy[d] += duration_[id];
      pushNow(ReleaseAndFinish, id);
      if (trackMemory)
        for (NodeId u : graph.predecessors(id))
          if (--consumersLeft_[u] == 0)
            freeOutput(u);
      break;
    }
    case ReleaseAndFinish: {
      const DeviceId from = device[id];
      if (!deviceState_[from].running && deviceState_[from].head >= 0)
        tryGrantHead(from);
      for (int32_t e = graph.succBegin(id), last = graph.succEnd(id); e < last;
           ++e) {
        const DeviceId to = device[graph.edgeTarget(e)];
        if (to == from) {
          pushNow(Arrived, e);
          continue;
        }
        double sent = now, arrival;
        if (!options_.linkContention) {
          arrival = now + transferTime(e, from, to);
        } else if (lastSenderTo_[to] == id) {
          // One transfer per (value, destination device): this edge rides
          // on the copy already sent there.
          arrival = lastArrivalTo_[to];
          sent = -1;
        } else {
          // FIFO link: each transfer starts when the previous one ends.
          double &linkFree =
              linkFreeAt_[static_cast<size_t>(from) * numDevices + to];
          sent = std::max(now, linkFree);
          arrival = sent + transferTime(e, from, to);
          linkFree = arrival;
          lastSenderTo_[to] = id;
          lastArrivalTo_[to] = arrival;
        }
        if (options_.recordTransfers && sent >= 0)
          schedule_.transfers.push_back({e, from, to, sent, arrival});
        if (arrival == now)
          pushNow(Arrived, e);
        else
          future_.push(arrival, (created++ << 32) | packEvent(Arrived, e));
      }
      break;
    }
    case Arrived:
      pushNow(TransferComplete, id);
      break;
    case TransferComplete: {
      const NodeId target = graph.edgeTarget(id);
      if (--nodeState_[target].pendingInputs == 0)
        pushNow(InputsReady, target);
      break;
    }
    case ArrivalBatch:
      assert(false && "the extended engine does not batch arrivals");
      break;
    }
  };

  for (NodeId v = 0; v < numNodes; ++v)
    if (nodes_[v].inDegree == 0)
      pushNow(InputsReady, v);

  for (;;) {
    while (nowBegin < nowEnd && !failed)
      process(nowEvents_[nowBegin++]);
    if (failed || future_.empty())
      break;
    nowBegin = nowEnd = 0;
    now = future_.topTime();
    do
      process(static_cast<uint32_t>(future_.pop()));
    while (!failed && !future_.empty() && future_.topTime() == now);
  }

  if (!failed) {
    // Work left in a queue with nothing in flight: only a memory stall can
    // cause that.
    for (DeviceId d = 0; d < numDevices; ++d) {
      if (deviceState_[d].head >= 0) {
        recordMemoryFailure(SimulationStatus::MemoryDeadlock, d,
                            deviceState_[d].head);
        failed = true;
        break;
      }
    }
  }
  schedule_.makespan = failed ? kInfinity : now;
  return schedule_.makespan;
}
