//===- SimulatorReference.cpp - The reference engines of the simulator ----===//
//
// runReference and runReferenceFifo replay the reference simulator's event
// cascade exactly (Simulator.cpp says how).
//
//===----------------------------------------------------------------------===//

#include "Doppler/Placement/Simulator.h"

#include "SimulatorEvents.h"

#include <algorithm>
#include <cassert>

using namespace doppler::placement;
using namespace doppler::placement::detail;

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
// Long on purpose: the simulator's fused hot loop, kept in one piece.
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

// Long on purpose: one fused hot loop over the event queue, like runReference.
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
    case TransferStart:
      assert(false && "only the extended engine tracks memory");
      break;
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
