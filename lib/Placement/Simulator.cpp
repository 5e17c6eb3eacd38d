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
// The reference engines (runReference, runReferenceFifo) are in
// SimulatorReference.cpp; runExtended, a separate, plainer event loop for the
// extended modes, is in SimulatorExtended.cpp.
//
//===----------------------------------------------------------------------===//

#include "Doppler/Placement/Simulator.h"
#include "Doppler/Support/NumberFormat.h"

#include "SimulatorEvents.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

using namespace doppler::placement;
using doppler::formatShortest;
using detail::kKindShift;

//===----------------------------------------------------------------------===//
// Schedule and validation
//===----------------------------------------------------------------------===//

std::string Schedule::describeFailure() const {
  switch (status) {
  case SimulationStatus::Ok:
    return {};
  case SimulationStatus::MemoryExceeded:
    return "memory exceeded: node " + std::to_string(failedNode) + " needs " +
           formatShortest(failedRequestBytes) + " bytes on device " +
           std::to_string(failedDevice) + ", which has " +
           formatShortest(failedLiveBytes) + " of " +
           formatShortest(failedCapacity) + " bytes in use";
  case SimulationStatus::MemoryDeadlock:
    return "memory deadlock: device " + std::to_string(failedDevice) +
           " waits to run node " + std::to_string(failedNode) + " (needs " +
           formatShortest(failedRequestBytes) + " bytes, " +
           formatShortest(failedLiveBytes) + " of " +
           formatShortest(failedCapacity) +
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
                   !options_.deviceSpeeds && !options_.handOff &&
                   !options_.trackMemory &&
                   !options_.recordTransfers && options_.priorities.empty();

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
  // Extended runs add at most one TransferStart per edge.
  future_.reserve(static_cast<size_t>(numNodes) + 2 * numEdges + 1);
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
  assert((options_.priorities.empty() ||
          options_.priorities.size() == static_cast<size_t>(numNodes)) &&
         "one priority per node");
  assert((!options_.trackMemory &&
          options_.transferModel != TransferModel::LinkBandwidth) ||
         graph.hasOutputBytes());
  outputBytes_ = graph.hasOutputBytes() ? graph.outputBytesList()
                                        : std::vector<double>(numNodes, 0.0);
  duration_.resize(numNodes);
  if (options_.handOff) {
    readyAt_.resize(numNodes);
    readyFrom_.resize(numNodes);
    freeAt_.resize(numDevices);
    emptyAtFree_.resize(numDevices);
  }
  if (options_.trackMemory)
    copyHolders_.resize(static_cast<size_t>(numNodes) * numDevices);
  copySentFor_.resize(numDevices);
  liveBytes_.resize(numDevices);
  stalled_.resize(numDevices);
  grantDue_.resize(numDevices);
  linkFreeAt_.resize(static_cast<size_t>(numDevices) * numDevices);
  nicFreeAt_.resize(system_.numNics());
  lastSenderTo_.resize(numDevices);
  lastArrivalTo_.resize(numDevices);
  if (options_.trackMemory) {
    schedule_.peakMemory.assign(numDevices, 0.0);
    schedule_.peakMemoryTime.assign(numDevices, 0.0);
  }
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
  if (!options.priorities.empty() &&
      options.priorities.size() != static_cast<size_t>(graph.numNodes()))
    return fail("expected " + std::to_string(graph.numNodes()) +
                " priorities (one per node), got " +
                std::to_string(options.priorities.size()));
  for (size_t v = 0; v < options.priorities.size(); ++v)
    if (std::isnan(options.priorities[v]))
      return fail("node " + std::to_string(v) + ": priority is not a number");
  if (std::max(graph.numNodes(), graph.numEdges()) >=
      static_cast<int32_t>(1u << kKindShift))
    return fail("graph too large: the simulator supports fewer than " +
                std::to_string(1u << kKindShift) + " nodes and edges");
  return Simulator(graph, system, options);
}

//===----------------------------------------------------------------------===//
// The future-event queue
//===----------------------------------------------------------------------===//


//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

double Simulator::run(ArrayView<DeviceId> assignment) {
  assert(assignment.size() == static_cast<size_t>(graph_->numNodes()));
  return referenceMode_ ? runReference(assignment) : runExtended(assignment);
}
