//===- SimulatorExtended.cpp - The simulator's extended engine ------------===//
//
// A plainer event loop than the reference engines, for the extended modes:
// memory tracking and limits, link (and, between nodes, NIC) contention,
// byte-based transfer times, device speeds and the runtime's hand-off
// (SimulatorOptions::handOff). The same events (METHOD
// section 2) in the same order; an ExtendedRun holds one run's flags, clock
// and event handlers.
//
//===----------------------------------------------------------------------===//

#include "Doppler/Placement/Simulator.h"

#include "SimulatorEvents.h"

#include <algorithm>
#include <cassert>
#include <limits>

using namespace doppler::placement;
using namespace doppler::placement::detail;

/// One run of the extended engine over the simulator's extended-mode state.
struct Simulator::ExtendedRun {
  ExtendedRun(Simulator &sim, ArrayView<DeviceId> assignment)
      : sim(sim), graph(*sim.graph_), device(assignment.data()),
        numNodes(graph.numNodes()), numDevices(sim.system_.numDevices()),
        trackMemory(sim.options_.trackMemory),
        enforceMemory(trackMemory && sim.options_.enforceMemoryCapacity),
        stallOnMemory(enforceMemory &&
                      sim.options_.memoryPolicy == MemoryLimitPolicy::Stall),
        skipOnMemory(enforceMemory &&
                     sim.options_.memoryPolicy == MemoryLimitPolicy::Skip),
        priority(sim.options_.priorities.empty()
                     ? nullptr
                     : sim.options_.priorities.data()),
        deferGrants(priority != nullptr),
        byteModel(sim.options_.transferModel == TransferModel::LinkBandwidth),
        handOff(sim.options_.handOff),
        nicContention(sim.options_.linkContention &&
                      sim.system_.hasNetwork()) {}

  /// Clears the per-run state and the schedule; sets every node's duration.
  void reset();
  /// Runs the events until none is left or the run fails.
  void runEvents();
  /// Records a deadlock if work is left; the makespan.
  double finish();

  void pushNow(EventKind kind, int32_t id) {
    sim.nowEvents_[nowEnd++] = packEvent(kind, id);
  }
  size_t holderIndex(NodeId u, DeviceId d) const {
    return static_cast<size_t>(u) * numDevices + d;
  }
  bool fits(DeviceId d, NodeId v) const {
    return sim.liveBytes_[d] + sim.outputBytes_[v] <=
           sim.system_.memoryCapacity(d);
  }
  void recordMemoryFailure(SimulationStatus status, DeviceId d, NodeId v);
  /// Starts device d's queue head if its output fits (or memory is not
  /// enforced); otherwise stalls, fails, or (Skip) starts the first queued
  /// node that fits, as the policy says.
  void tryGrantHead(DeviceId d);
  /// Device d (idle) may start a node: now, or at the end of the instant
  /// (deferGrants).
  void requestGrant(DeviceId d) {
    if (!deferGrants) {
      tryGrantHead(d);
      return;
    }
    sim.grantDue_[d] = 1;
    anyGrantDue = true;
  }
  /// Grants the deferred requests: each idle device with work starts its
  /// best ready node (in device order).
  void grantDue() {
    anyGrantDue = false;
    for (DeviceId d = 0; d < numDevices && !failed; ++d) {
      if (!sim.grantDue_[d])
        continue;
      sim.grantDue_[d] = 0;
      if (!sim.deviceState_[d].running && sim.deviceState_[d].head >= 0)
        tryGrantHead(d);
    }
  }
  /// Adds `u`'s buffer on `d` to the live bytes.
  void allocateCopy(NodeId u, DeviceId d);
  /// One use of `u`'s buffer on `d` is over; frees it after the last one.
  void releaseCopy(NodeId u, DeviceId d);
  /// The end of an instant: every buffer freed and allocated at `now` is
  /// accounted for, so the live bytes are those over [now, next event).
  void samplePeaks();
  double transferTime(int32_t e, DeviceId from, DeviceId to) const;
  /// The NIC of `node` that is free soonest (the lowest number among
  /// equals), as an index into nicFreeAt_.
  size_t soonestNic(int32_t node) const;
  /// With linkContention: when edge e's transfer from `from` to `to`
  /// starts, given that it is requested now; reserves what carries it (the
  /// link, or a NIC on each side between nodes) until `arrival`.
  double reserveTransfer(int32_t e, DeviceId from, DeviceId to,
                         double &arrival);
  void process(uint32_t event);
  /// InputsReady: `v` joins its device's FIFO.
  void enqueueReady(NodeId v);
  /// ReleaseAndFinish: `v`'s device may start its next node, and `v`'s
  /// output leaves along its out-edges.
  void releaseAndSend(NodeId v);

  Simulator &sim;
  const Graph &graph;
  const DeviceId *device;
  const int32_t numNodes;
  const int32_t numDevices;
  const bool trackMemory;
  const bool enforceMemory;
  const bool stallOnMemory;
  const bool skipOnMemory;
  const double *priority; // per node, or null: readiness order
  /// With priorities, a device chooses its next node once every node that
  /// becomes ready at the current instant has joined its queue.
  const bool deferGrants;
  bool anyGrantDue = false;
  const bool byteModel;
  const bool handOff;
  /// linkContention on a System with nodes: cross-node transfers hold NICs.
  const bool nicContention;

  uint64_t created = 0; // creation order of future events
  size_t nowBegin = 0, nowEnd = 0;
  double now = 0;
  bool failed = false;
};

void Simulator::ExtendedRun::reset() {
  Schedule &schedule = sim.schedule_;
  for (NodeId v = 0; v < numNodes; ++v)
    sim.nodeState_[v].pendingInputs = sim.nodes_[v].inDegree;
  std::fill(sim.deviceState_.begin(), sim.deviceState_.end(),
            DeviceState{-1, -1, 0});
  std::fill(schedule.deviceBusy.begin(), schedule.deviceBusy.end(), 0.0);
  // Nodes that never run (after a failure) keep NaN times.
  std::fill(schedule.start.begin(), schedule.start.end(),
            std::numeric_limits<double>::quiet_NaN());
  std::fill(schedule.end.begin(), schedule.end.end(),
            std::numeric_limits<double>::quiet_NaN());
  std::fill(sim.liveBytes_.begin(), sim.liveBytes_.end(), 0.0);
  std::fill(sim.stalled_.begin(), sim.stalled_.end(), 0);
  std::fill(sim.grantDue_.begin(), sim.grantDue_.end(), 0);
  std::fill(sim.linkFreeAt_.begin(), sim.linkFreeAt_.end(), 0.0);
  std::fill(sim.nicFreeAt_.begin(), sim.nicFreeAt_.end(), 0.0);
  std::fill(sim.lastSenderTo_.begin(), sim.lastSenderTo_.end(), -1);
  std::fill(sim.copySentFor_.begin(), sim.copySentFor_.end(), -1);
  std::fill(schedule.peakMemory.begin(), schedule.peakMemory.end(), 0.0);
  std::fill(schedule.peakMemoryTime.begin(), schedule.peakMemoryTime.end(),
            0.0);
  schedule.transfers.clear();
  schedule.status = SimulationStatus::Ok;
  schedule.failedNode = schedule.failedDevice = -1;
  schedule.failedLiveBytes = schedule.failedRequestBytes =
      schedule.failedCapacity = 0;
  if (trackMemory) {
    // Every reader holds the copy on its own device; a cross-device edge
    // also holds the producer's buffer until its transfer has arrived.
    std::fill(sim.copyHolders_.begin(), sim.copyHolders_.end(), 0);
    for (int32_t e = 0, last = graph.numEdges(); e < last; ++e) {
      const NodeId u = graph.edgeSource(e);
      const DeviceId from = device[u], to = device[graph.edgeTarget(e)];
      ++sim.copyHolders_[holderIndex(u, to)];
      if (to != from)
        ++sim.copyHolders_[holderIndex(u, from)];
    }
  }
  for (NodeId v = 0; v < numNodes; ++v) {
    sim.duration_[v] = sim.options_.deviceSpeeds
                           ? graph.computeCost(v) / sim.system_.speed(device[v])
                           : graph.computeCost(v);
  }
  if (handOff) {
    std::fill(sim.readyFrom_.begin(), sim.readyFrom_.end(), -1);
    std::fill(sim.freeAt_.begin(), sim.freeAt_.end(), -kInfinity);
    std::fill(sim.emptyAtFree_.begin(), sim.emptyAtFree_.end(), 0);
  }
  sim.future_.clear();
  created = 0;
}

void Simulator::ExtendedRun::recordMemoryFailure(SimulationStatus status,
                                                 DeviceId d, NodeId v) {
  Schedule &schedule = sim.schedule_;
  schedule.status = status;
  schedule.failedNode = v;
  schedule.failedDevice = d;
  schedule.failedLiveBytes = sim.liveBytes_[d];
  schedule.failedRequestBytes = sim.outputBytes_[v];
  schedule.failedCapacity = sim.system_.memoryCapacity(d);
}

void Simulator::ExtendedRun::tryGrantHead(DeviceId d) {
  DeviceState &dev = sim.deviceState_[d];
  NodeId v = dev.head, previous = -1;
  if (enforceMemory && !fits(d, v)) {
    if (skipOnMemory) {
      // The best queued node that fits; the others keep their places.
      do {
        previous = v;
        v = sim.nodeState_[v].nextInQueue;
      } while (v >= 0 && !fits(d, v));
      if (v < 0) {
        sim.stalled_[d] = 1;
        return;
      }
    } else if (stallOnMemory) {
      sim.stalled_[d] = 1;
      return;
    } else {
      recordMemoryFailure(SimulationStatus::MemoryExceeded, d, v);
      failed = true;
      return;
    }
  }
  sim.stalled_[d] = 0;
  const NodeId next = sim.nodeState_[v].nextInQueue;
  if (previous < 0)
    dev.head = next;
  else
    sim.nodeState_[previous].nextInQueue = next;
  if (next < 0)
    dev.tail = previous;
  dev.running = 1;
  // The output buffer is allocated as the node starts (this instant).
  if (trackMemory)
    allocateCopy(v, d);
  pushNow(Granted, v);
}

void Simulator::ExtendedRun::allocateCopy(NodeId u, DeviceId d) {
  sim.liveBytes_[d] += sim.outputBytes_[u];
}

void Simulator::ExtendedRun::releaseCopy(NodeId u, DeviceId d) {
  if (--sim.copyHolders_[holderIndex(u, d)] != 0)
    return;
  sim.liveBytes_[d] -= sim.outputBytes_[u];
  // A device waiting for memory retries as soon as some is freed.
  if (sim.stalled_[d] && !sim.deviceState_[d].running)
    requestGrant(d);
}

void Simulator::ExtendedRun::samplePeaks() {
  Schedule &schedule = sim.schedule_;
  for (DeviceId d = 0; d < numDevices; ++d) {
    if (sim.liveBytes_[d] > schedule.peakMemory[d]) {
      schedule.peakMemory[d] = sim.liveBytes_[d];
      schedule.peakMemoryTime[d] = now;
    }
  }
}

double Simulator::ExtendedRun::transferTime(int32_t e, DeviceId from,
                                            DeviceId to) const {
  if (!byteModel)
    return graph.edgeCost(e);
  const Link &link = sim.system_.link(from, to);
  return link.latency + sim.outputBytes_[graph.edgeSource(e)] / link.bandwidth;
}

size_t Simulator::ExtendedRun::soonestNic(int32_t node) const {
  const double *freeAt = sim.nicFreeAt_.data();
  size_t best = static_cast<size_t>(sim.system_.firstNic(node));
  const size_t last = best + static_cast<size_t>(sim.system_.nics(node));
  for (size_t nic = best + 1; nic < last; ++nic)
    if (freeAt[nic] < freeAt[best])
      best = nic;
  return best;
}

double Simulator::ExtendedRun::reserveTransfer(int32_t e, DeviceId from,
                                               DeviceId to, double &arrival) {
  const System &system = sim.system_;
  if (nicContention && !system.sameNode(from, to)) {
    // One NIC on each side, each the soonest free there (which also makes
    // the start, the later of the two, as early as it can be).
    const size_t out = soonestNic(system.nodeOf(from));
    const size_t in = soonestNic(system.nodeOf(to));
    const double sent =
        std::max(now, std::max(sim.nicFreeAt_[out], sim.nicFreeAt_[in]));
    arrival = sent + transferTime(e, from, to);
    sim.nicFreeAt_[out] = sim.nicFreeAt_[in] = arrival;
    return sent;
  }
  // FIFO link: each transfer starts when the previous one ends.
  double &linkFree =
      sim.linkFreeAt_[static_cast<size_t>(from) * numDevices + to];
  const double sent = std::max(now, linkFree);
  arrival = sent + transferTime(e, from, to);
  linkFree = arrival;
  return sent;
}

void Simulator::ExtendedRun::enqueueReady(NodeId v) {
  const DeviceId d = device[v];
  DeviceState &dev = sim.deviceState_[d];
  NodeState *state = sim.nodeState_.data();
  state[v].nextInQueue = -1;
  if (dev.tail < 0) {
    dev.head = dev.tail = v;
  } else if (!priority || priority[dev.tail] <= priority[v]) {
    state[dev.tail].nextInQueue = v;
    dev.tail = v;
  } else {
    // After every queued node of the same or a smaller priority.
    NodeId previous = -1, at = dev.head;
    while (priority[at] <= priority[v]) {
      previous = at;
      at = state[at].nextInQueue;
    }
    state[v].nextInQueue = at;
    if (previous < 0)
      dev.head = v;
    else
      state[previous].nextInQueue = v;
  }
  if (!dev.running)
    requestGrant(d);
}

void Simulator::ExtendedRun::releaseAndSend(NodeId v) {
  const DeviceId from = device[v];
  if (!sim.deviceState_[from].running && sim.deviceState_[from].head >= 0)
    requestGrant(from);
  for (int32_t e = graph.succBegin(v), last = graph.succEnd(v); e < last; ++e) {
    const DeviceId to = device[graph.edgeTarget(e)];
    if (to == from) {
      pushNow(Arrived, e);
      continue;
    }
    double sent = now, arrival;
    if (!sim.options_.linkContention) {
      arrival = now + transferTime(e, from, to);
    } else if (sim.lastSenderTo_[to] == v) {
      // One transfer per (value, destination device): this edge rides on
      // the copy already sent there.
      arrival = sim.lastArrivalTo_[to];
      sent = -1;
    } else {
      sent = reserveTransfer(e, from, to, arrival);
      sim.lastSenderTo_[to] = v;
      sim.lastArrivalTo_[to] = arrival;
    }
    if (sim.options_.recordTransfers && sent >= 0)
      sim.schedule_.transfers.push_back({e, from, to, sent, arrival});
    // The receiver's copy exists from the start of the first transfer that
    // brings the value there. Without link contention every edge is a
    // transfer of its own, all starting now; they share one copy.
    if (trackMemory && sim.copySentFor_[to] != v) {
      sim.copySentFor_[to] = v;
      if (sent <= now)
        allocateCopy(v, to);
      else
        sim.future_.push(sent,
                         (created++ << 32) | packEvent(TransferStart, e));
    }
    if (arrival == now)
      pushNow(Arrived, e);
    else
      sim.future_.push(arrival, (created++ << 32) | packEvent(Arrived, e));
  }
}

void Simulator::ExtendedRun::process(uint32_t event) {
  const int32_t id = static_cast<int32_t>(event & kIdMask);
  switch (static_cast<EventKind>(event >> kKindShift)) {
  case InputsReady:
    enqueueReady(id);
    break;
  case Granted: {
    double start = now;
    const DeviceId d = device[id];
    // The node its device sat idle waiting for pays the hand-off: it
    // became ready as the device became free (by its local producer's end)
    // with nothing else queued, and the device has run nothing since.
    if (handOff && sim.readyFrom_[id] >= 0 && sim.emptyAtFree_[d] &&
        sim.readyAt_[id] >= sim.freeAt_[d]) {
      // After a producer smaller than handOffBytes, its share.
      const double full = sim.system_.handOffBytes(d);
      const double share =
          full > 0 ? std::min(1.0, sim.outputBytes_[sim.readyFrom_[id]] / full)
                   : 1.0;
      start += sim.system_.handOff(d) * share;
    }
    sim.schedule_.start[id] = start;
    const double finish = start + sim.duration_[id];
    if (finish == now)
      pushNow(Done, id);
    else
      sim.future_.push(finish, (created++ << 32) | packEvent(Done, id));
    break;
  }
  case Done: {
    sim.schedule_.end[id] = now;
    const DeviceId d = device[id];
    sim.deviceState_[d].running = 0;
    sim.schedule_.deviceBusy[d] += sim.duration_[id];
    if (handOff) {
      sim.freeAt_[d] = now;
      sim.emptyAtFree_[d] = sim.deviceState_[d].head < 0;
    }
    pushNow(ReleaseAndFinish, id);
    if (trackMemory)
      for (NodeId u : graph.predecessors(id))
        releaseCopy(u, d);
    break;
  }
  case ReleaseAndFinish:
    releaseAndSend(id);
    break;
  case Arrived: {
    // A cross-device transfer no longer needs the producer's buffer.
    const NodeId source = graph.edgeSource(id);
    if (trackMemory && device[source] != device[graph.edgeTarget(id)])
      releaseCopy(source, device[source]);
    pushNow(TransferComplete, id);
    break;
  }
  case TransferComplete: {
    const NodeId target = graph.edgeTarget(id);
    if (--sim.nodeState_[target].pendingInputs == 0) {
      if (handOff) {
        const NodeId source = graph.edgeSource(id);
        sim.readyAt_[target] = now;
        sim.readyFrom_[target] = device[source] == device[target] ? source : -1;
      }
      pushNow(InputsReady, target);
    }
    break;
  }
  case TransferStart:
    allocateCopy(graph.edgeSource(id), device[graph.edgeTarget(id)]);
    break;
  case ArrivalBatch:
    assert(false && "the extended engine does not batch arrivals");
    break;
  }
}

void Simulator::ExtendedRun::runEvents() {
  for (NodeId v = 0; v < numNodes; ++v)
    if (sim.nodes_[v].inDegree == 0)
      pushNow(InputsReady, v);

  FutureQueue &future = sim.future_;
  for (;;) {
    for (;;) {
      while (nowBegin < nowEnd && !failed)
        process(sim.nowEvents_[nowBegin++]);
      if (!anyGrantDue || failed)
        break;
      grantDue();
    }
    if (trackMemory)
      samplePeaks();
    if (failed || future.empty())
      break;
    nowBegin = nowEnd = 0;
    now = future.topTime();
    do
      process(static_cast<uint32_t>(future.pop()));
    while (!failed && !future.empty() && future.topTime() == now);
  }
}

double Simulator::ExtendedRun::finish() {
  if (!failed) {
    // Work left in a queue with nothing in flight: only a memory stall can
    // cause that.
    for (DeviceId d = 0; d < numDevices; ++d) {
      if (sim.deviceState_[d].head >= 0) {
        recordMemoryFailure(SimulationStatus::MemoryDeadlock, d,
                            sim.deviceState_[d].head);
        failed = true;
        break;
      }
    }
  }
  sim.schedule_.makespan = failed ? kInfinity : now;
  return sim.schedule_.makespan;
}

double Simulator::runExtended(ArrayView<DeviceId> assignment) {
  ExtendedRun run(*this, assignment);
  run.reset();
  run.runEvents();
  return run.finish();
}
