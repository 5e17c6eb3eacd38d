//===- Offload.cpp - Evicting values to host memory and back --------------===//
//
// buildOffloadGraph rewrites the graph as Offload.h states, and
// simulateOffloadPlan simulates the rewrite (every plan planOffload judges
// goes through it). planOffload chooses an order first, evictions second:
//  A. orders: readiness order (no priorities), a depth-first order (each
//     graph output's ancestors before the next output's), and two
//     memory-aware list orders (repeatedly the ready node that allocates
//     the fewest net bytes / whose inputs were made most recently, ties by
//     the longest path to an output; on graphs up to 20000 nodes, as each
//     step scans the ready nodes); each simulated with no eviction and
//     ranked by (fits, overflow bytes, overflow integral, makespan);
//  B. from the best order (then the next, while none fits and budget is
//     left), a greedy descent of evictions with that order kept:
//  1. simulate the graph with the evictions chosen so far; take the device
//     with the largest overflow and the instant of its peak
//     (Schedule::peakMemoryTime) (when the capacity-enforcing run
//     deadlocks, in the same run without capacities);
//  2. candidates, new evictions: the values produced on that device whose
//     buffer is live there at that instant, not running nor read by the node
//     running then, and with readers there that start after the instant
//     (the gap spans the peak). The readers split by id: the late readers
//     are the longest id-suffix of them that all start after the instant,
//     the rest are early. A value already evicted is a candidate again when
//     this split gives it more late readers (its eviction is replaced).
//     Candidates whose original can be freed by then (early readers and
//     outgoing transfers done, the host copy made) come first, each group
//     largest first; the first six are tried;
//  3. triggers for each: a node on the device, not the value, not a graph
//     output, with an id below the first late reader: the one ending last
//     before the late readers are ready (less the reload time) but after
//     the instant (no reader then moves in its device's FIFO queue, so the
//     schedule stays); the one ending last while leaving the reload time
//     before the first late reader starts; the first one ending after the
//     instant; the last one to end;
//  4. candidates, new triggers: a reload under way at the instant whose
//     readers have not started is triggered by the first node ending after
//     the instant instead;
//  5. every candidate is simulated; the best by (overflow bytes, overflow
//     integral, makespan) is kept if it lowers (overflow bytes, overflow
//     integral); the integral (bytes over capacity times how long) makes
//     progress on a plateau of equal peaks visible;
//  6. stop when every device fits, when no candidate lowers the overflow,
//     or at the evaluation or eviction budget.
//  C. a fitting plan with priorities takes the planned start times of its
//     prediction as priorities (what the pass writes for the runtime) when
//     they predict no worse.
// The plan's figures come from one more simulateOffloadPlan of the final
// plan.
// Nothing is random: the same inputs give the same plan.
//
// Received copies are candidates too with OffloadOptions::evictReceivedCopies
// (their early readers alone keep them; Offload.h says how the prediction
// approximates their host copy).
//
// What it cannot do, by the model: reload one value twice on a device (one
// eviction per value and device: a reloaded copy stays from its reload to
// its last late reader), or, in
// readiness order, keep a late reader's place in its device's FIFO queue
// when the reload arrives after it was ready (the reader then queues behind
// what became ready before, and its other inputs stay live meanwhile; with
// priorities it keeps its rank).
//
//===----------------------------------------------------------------------===//

#include "OffloadInternal.h"

#include "Doppler/Placement/MemoryFit.h"
#include "Doppler/Placement/Simulator.h"
#include "Doppler/Support/NumberFormat.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <utility>

namespace doppler::placement {
namespace offload_detail {

bool isAscending(const std::vector<NodeId> &ids) {
  for (size_t i = 1; i < ids.size(); ++i)
    if (ids[i - 1] >= ids[i])
      return false;
  return true;
}

std::string checkOptions(const Graph &graph, const System &system,
                         ArrayView<DeviceId> assignment,
                         const OffloadOptions &options) {
  const int32_t numDevices = system.numDevices();
  if (!graph.hasOutputBytes() && graph.numNodes() > 0)
    return "offload planning needs the output size of every node, and the "
           "graph has none";
  std::string error;
  if (!validateAssignment(graph, numDevices, assignment, &error))
    return error;
  if (options.hostLinks.size() != static_cast<size_t>(numDevices))
    return "expected " + std::to_string(numDevices) + " host links, got " +
           std::to_string(options.hostLinks.size());
  for (size_t d = 0; d < options.hostLinks.size(); ++d) {
    const HostLink &link = options.hostLinks[d];
    if (!(link.bandwidth > 0) || std::isnan(link.bandwidth))
      return "device " + std::to_string(d) + ": host link bandwidth " +
             formatShortest(link.bandwidth) + " is not positive";
    if (!(link.latency >= 0) || !std::isfinite(link.latency))
      return "device " + std::to_string(d) + ": host link latency " +
             formatShortest(link.latency) +
             " is negative or not a finite number";
  }
  if (options.maxEvaluations < 1)
    return "offload planning needs an evaluation budget of at least 1, got " +
           std::to_string(options.maxEvaluations);
  if (options.maxEvictions < 0)
    return "the eviction limit " + std::to_string(options.maxEvictions) +
           " is negative";
  const std::vector<double> &resident = options.residentBytes;
  if (!resident.empty() && resident.size() != static_cast<size_t>(numDevices))
    return "expected " + std::to_string(numDevices) +
           " resident byte counts, got " + std::to_string(resident.size());
  for (size_t d = 0; d < resident.size(); ++d)
    if (!(resident[d] >= 0) || !std::isfinite(resident[d]))
      return "device " + std::to_string(d) + ": resident bytes " +
             formatShortest(resident[d]) +
             " is negative or not a finite number";
  return {};
}

std::string checkEviction(const Graph &graph, ArrayView<DeviceId> assignment,
                          int32_t numDevices, const Eviction &eviction,
                          size_t index, std::vector<uint8_t> &evicted) {
  const std::string where = "eviction " + std::to_string(index) + ": ";
  const int32_t numNodes = graph.numNodes();
  const NodeId v = eviction.value;
  if (v < 0 || v >= numNodes)
    return where + "value " + std::to_string(v) + " is not a node";
  const DeviceId d = eviction.device;
  if (d < 0 || d >= numDevices)
    return where + "device " + std::to_string(d) + " out of range [0, " +
           std::to_string(numDevices) + ")";
  const size_t key = static_cast<size_t>(v) * numDevices + d;
  if (evicted[key])
    return where + "value " + std::to_string(v) + " is evicted twice";
  evicted[key] = 1;
  if (d != assignment[v]) {
    // A received copy: v must have readers on d.
    bool read = false;
    for (NodeId w : graph.successors(v))
      read |= assignment[w] == d;
    if (!read)
      return where + "value " + std::to_string(v) + " is on device " +
             std::to_string(assignment[v]) + " and has no reader on device " +
             std::to_string(d);
  }
  if (eviction.lateReaders.empty())
    return where + "no late readers";
  if (!isAscending(eviction.earlyReaders) ||
      !isAscending(eviction.lateReaders))
    return where + "readers are not in ascending id order";
  // Early + late readers are exactly v's readers on d.
  std::vector<NodeId> readers;
  for (NodeId w : graph.successors(v))
    if (assignment[w] == d)
      readers.push_back(w);
  std::sort(readers.begin(), readers.end());
  std::vector<NodeId> named = eviction.earlyReaders;
  named.insert(named.end(), eviction.lateReaders.begin(),
               eviction.lateReaders.end());
  std::sort(named.begin(), named.end());
  if (named != readers)
    return where + "early and late readers are not exactly the readers of " +
           "node " + std::to_string(v) + " on device " + std::to_string(d);
  const NodeId firstLate = eviction.lateReaders.front();
  if (!eviction.earlyReaders.empty() &&
      eviction.earlyReaders.back() > firstLate)
    return where + "early reader " +
           std::to_string(eviction.earlyReaders.back()) +
           " comes after late reader " + std::to_string(firstLate);
  const NodeId trigger = eviction.trigger;
  if (trigger < 0 || trigger >= numNodes)
    return where + "trigger " + std::to_string(trigger) + " is not a node";
  if (trigger == v)
    return where + "the trigger is the evicted value itself";
  if (assignment[trigger] != d)
    return where + "trigger " + std::to_string(trigger) + " is on device " +
           std::to_string(assignment[trigger]) + ", not " + std::to_string(d);
  if (trigger >= firstLate)
    return where + "trigger " + std::to_string(trigger) +
           " does not come before late reader " + std::to_string(firstLate);
  return {};
}

double residentOf(const OffloadOptions &options, DeviceId d) {
  return options.residentBytes.empty() ? 0.0 : options.residentBytes[d];
}

/// The system of the rewritten graph: the input devices (with `capacities`)
/// and the host H last, unlimited, joined to each device by its host link.
std::optional<System> offloadSystem(const System &system,
                                    const std::vector<double> &capacities,
                                    const OffloadOptions &options,
                                    std::string *error) {
  const int32_t numDevices = system.numDevices();
  const DeviceId host = numDevices;
  SystemBuilder builder(numDevices + 1);
  for (DeviceId d = 0; d < numDevices; ++d) {
    builder.setSpeed(d, system.speed(d));
    builder.setMemoryCapacity(d, capacities[d]);
    for (DeviceId to = 0; to < numDevices; ++to)
      if (to != d)
        builder.setLink(d, to, system.link(d, to));
    // The host link both ways, for byte-model simulations.
    const HostLink &hostLink = options.hostLinks[d];
    Link link{hostLink.bandwidth, hostLink.latency};
    builder.setLink(d, host, link);
    builder.setLink(host, d, link);
  }
  return builder.build(error);
}

/// Each device's capacity less its resident bytes (at least 0): what the
/// enforcing simulation may fill.
std::vector<double> enforcedCapacities(const System &system,
                                       const OffloadOptions &options) {
  std::vector<double> capacities(system.numDevices());
  for (DeviceId d = 0; d < system.numDevices(); ++d)
    capacities[d] =
        std::max(0.0, system.memoryCapacity(d) - residentOf(options, d));
  return capacities;
}

/// simulateOffloadPlan on an already rewritten graph; `limited` is
/// offloadSystem with enforcedCapacities.
OffloadSimulation simulateRewritten(OffloadGraph offload,
                                    const std::vector<double> &priority,
                                    const System &system,
                                    const System &limited,
                                    const OffloadOptions &options) {
  OffloadSimulation result;
  const int32_t numDevices = system.numDevices();
  SimulatorOptions simulation;
  simulation.trackMemory = true;
  if (!priority.empty()) {
    // Stash and reload nodes (compute 0, on the host) come first there.
    simulation.priorities.assign(offload.graph.numNodes(),
                                 std::numeric_limits<double>::lowest());
    std::copy(priority.begin(), priority.end(),
              simulation.priorities.begin());
  }
  simulation.enforceMemoryCapacity = options.waitForMemory;
  simulation.memoryPolicy = MemoryLimitPolicy::Skip;
  Simulator enforced(offload.graph, limited, simulation);
  enforced.run(offload.assignment);
  if (enforced.schedule().ok()) {
    result.schedule = enforced.schedule();
  } else {
    result.deadlock = enforced.schedule().describeFailure();
    simulation.enforceMemoryCapacity = false;
    Simulator free(offload.graph, offload.system, simulation);
    free.run(offload.assignment);
    result.schedule = free.schedule();
  }
  result.peak = result.schedule.peakMemory;
  result.peak.resize(numDevices);
  result.fits = result.deadlock.empty();
  for (DeviceId d = 0; d < numDevices; ++d) {
    result.peak[d] += residentOf(options, d);
    result.fits &= result.peak[d] <= system.memoryCapacity(d);
  }
  result.offload = std::move(offload);
  return result;
}

} // namespace offload_detail

using namespace offload_detail;

double hostTransferTime(const HostLink &link, double bytes) {
  return link.latency + bytes / link.bandwidth;
}

std::optional<OffloadGraph>
buildOffloadGraph(const Graph &graph, const System &system,
                  ArrayView<DeviceId> assignment,
                  const std::vector<Eviction> &evictions,
                  const OffloadOptions &options, std::string *error) {
  auto fail = [&](std::string message) -> std::optional<OffloadGraph> {
    if (error)
      *error = std::move(message);
    return std::nullopt;
  };
  if (std::string why = checkOptions(graph, system, assignment, options);
      !why.empty())
    return fail(why);
  const int32_t numNodes = graph.numNodes();
  const int32_t numDevices = system.numDevices();
  std::vector<uint8_t> evicted(static_cast<size_t>(numNodes) * numDevices, 0);
  for (size_t i = 0; i < evictions.size(); ++i)
    if (std::string why = checkEviction(graph, assignment, numDevices,
                                        evictions[i], i, evicted);
        !why.empty())
      return fail(why);

  // Which edges the reloads replace: (value, late reader) pairs, the late
  // reader on the eviction's device.
  std::vector<std::vector<int32_t>> evictionsOf(numNodes);
  for (size_t i = 0; i < evictions.size(); ++i)
    evictionsOf[evictions[i].value].push_back(static_cast<int32_t>(i));

  GraphBuilder builder;
  for (NodeId v = 0; v < numNodes; ++v) {
    builder.addNode(graph.computeCost(v), graph.transferCost(v),
                    graph.opType(v));
    builder.setOutputBytes(v, graph.outputBytes(v));
  }
  OffloadGraph result;
  const DeviceId host = numDevices;
  result.assignment.assign(assignment.begin(), assignment.end());
  for (const Eviction &eviction : evictions) {
    const double bytes = graph.outputBytes(eviction.value);
    NodeId stash = builder.addNode(0, 0, "stash");
    builder.setOutputBytes(stash, bytes);
    NodeId reload = builder.addNode(0, 0, "reload");
    builder.setOutputBytes(reload, bytes);
    result.stashNode.push_back(stash);
    result.reloadNode.push_back(reload);
    result.assignment.push_back(host);
    result.assignment.push_back(host);
  }
  for (int32_t e = 0; e < graph.numEdges(); ++e) {
    const NodeId u = graph.edgeSource(e), w = graph.edgeTarget(e);
    bool reloaded = false;
    for (int32_t i : evictionsOf[u]) {
      const std::vector<NodeId> &late = evictions[i].lateReaders;
      reloaded |= evictions[i].device == assignment[w] &&
                  std::binary_search(late.begin(), late.end(), w);
    }
    if (!reloaded)
      builder.addEdge(u, w, graph.edgeCost(e));
  }
  for (size_t i = 0; i < evictions.size(); ++i) {
    const Eviction &eviction = evictions[i];
    const double time =
        hostTransferTime(options.hostLinks[eviction.device],
                         graph.outputBytes(eviction.value));
    builder.addEdge(eviction.value, result.stashNode[i], time);
    builder.addEdge(result.stashNode[i], result.reloadNode[i], 0.0);
    builder.addEdge(eviction.trigger, result.reloadNode[i], 0.0);
    for (NodeId w : eviction.lateReaders)
      builder.addEdge(result.reloadNode[i], w, time);
  }
  std::string why;
  std::optional<Graph> rewritten = builder.build(&why);
  if (!rewritten)
    return fail("the offload graph is invalid: " + why);
  result.graph = std::move(*rewritten);

  std::vector<double> capacities(numDevices);
  for (DeviceId d = 0; d < numDevices; ++d)
    capacities[d] = system.memoryCapacity(d);
  std::optional<System> rewrittenSystem =
      offloadSystem(system, capacities, options, &why);
  if (!rewrittenSystem)
    return fail("the offload system is invalid: " + why);
  result.system = std::move(*rewrittenSystem);
  return result;
}

std::optional<OffloadSimulation>
simulateOffloadPlan(const Graph &graph, const System &system,
                    ArrayView<DeviceId> assignment, const OffloadPlan &plan,
                    const OffloadOptions &options, std::string *error) {
  auto fail = [&](std::string message) -> std::optional<OffloadSimulation> {
    if (error)
      *error = std::move(message);
    return std::nullopt;
  };
  std::string why;
  std::optional<OffloadGraph> offload = buildOffloadGraph(
      graph, system, assignment, plan.evictions, options, &why);
  if (!offload)
    return fail(why);
  if (!plan.priority.empty() &&
      plan.priority.size() != static_cast<size_t>(graph.numNodes()))
    return fail("expected " + std::to_string(graph.numNodes()) +
                " priorities (one per node), got " +
                std::to_string(plan.priority.size()));
  for (size_t v = 0; v < plan.priority.size(); ++v)
    if (std::isnan(plan.priority[v]))
      return fail("node " + std::to_string(v) + ": priority is not a number");
  std::optional<System> limited = offloadSystem(
      system, enforcedCapacities(system, options), options, &why);
  if (!limited)
    return fail("the offload system is invalid: " + why);
  return simulateRewritten(std::move(*offload), plan.priority, system,
                           *limited, options);
}

std::optional<OffloadPlan> planOffload(const Graph &graph,
                                       const System &system,
                                       ArrayView<DeviceId> assignment,
                                       const OffloadOptions &options,
                                       std::string *error) {
  if (std::string why = checkOptions(graph, system, assignment, options);
      !why.empty()) {
    if (error)
      *error = std::move(why);
    return std::nullopt;
  }
  return runOffloadPlanner(graph, system, assignment, options);
}

} // namespace doppler::placement
