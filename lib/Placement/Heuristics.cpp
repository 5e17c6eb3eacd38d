//===- Heuristics.cpp - Non-learned placement policies -------------------===//

#include "Doppler/Placement/Heuristics.h"

#include "Doppler/Placement/Analysis.h"
#include "Doppler/Placement/Simulator.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace doppler::placement {

//===----------------------------------------------------------------------===//
// SeededRandom
//===----------------------------------------------------------------------===//

uint64_t SeededRandom::next() {
  // SplitMix64 (Steele, Lea, Flood 2014): a Weyl sequence through a mixer.
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint32_t SeededRandom::below(uint32_t bound) {
  // Multiply-shift with rejection of the few biased low products (Lemire).
  uint64_t product = (next() >> 32) * bound;
  uint32_t low = static_cast<uint32_t>(product);
  if (low < bound) {
    uint32_t threshold = static_cast<uint32_t>(-bound) % bound;
    while (low < threshold) {
      product = (next() >> 32) * bound;
      low = static_cast<uint32_t>(product);
    }
  }
  return static_cast<uint32_t>(product >> 32);
}

double SeededRandom::uniform() {
  return static_cast<double>(next() >> 11) * 0x1.0p-53;
}

//===----------------------------------------------------------------------===//
// The policies as functions
//===----------------------------------------------------------------------===//

// Critical-path SEL (here and in join-aware): the candidate with the
// largest b-level, CandidateOrder::first(). Among equal b-levels (the
// blocks of a split tensor are symmetric, so ties are the rule on
// decomposed graphs) the one that can start soonest, min over d of
// est(v, d): a candidate whose inputs are all at hand goes before one that
// would wait for a transfer, as in earliest-task-first list scheduling;
// equal starts keep the oldest candidate, as a FIFO engine would serve it.
// Only the first kTieWindow tied candidates (in the environment's order)
// are dated, so a pick stays O(log ready + window * (D + in-degree)) on
// graphs whose ready sets grow with their size, and the search stops at a
// candidate that can start as soon as the first device is free (none can
// start sooner). On generated 20k-node graphs the rule costs 1.03-1.3x the
// previous one on random layered DAGs (about 30 ms) and 1.35-1.6x on a
// 40-layer transformer (3.5 -> 4.8 ms at D = 4, 4.4 -> 7 ms at D = 8).
//
// Critical-path PLC: the smallest est(v, d). Devices tie when they are all
// idle before v's inputs arrive (or all empty); among them the one that
// became free last (best fit: the shortest idle gap), which keeps the
// devices idle longest for candidates that are ready sooner; then the
// lowest id.
//
// Measured with unittests/Placement/CriticalPathTiesTest.cpp (ratios to the
// median of 5 critical-path-reference episodes, D = 2..8, reference
// simulator): the previous rule (oldest candidate, lowest device id) had
// geomeans 0.949 on the tuning set (336 pairs, 40-320 nodes), 0.975 with
// slow links (210 pairs) and 0.972 on the shared graphs; this one 0.943,
// 0.956 and 0.933, with the same figures on the shared graphs at D = 4, and
// also better with link contention (1.004 -> 0.994 on the tuning set). The
// soonest-start SEL tie alone made the transformer block at D = 4 2.9%
// worse through its lowest-id device ties; least load, earliest free and
// most input bytes already local as PLC ties each lost on some set.
namespace {

constexpr size_t kTieWindow = 16;

/// The hierarchical placement's restriction: node v may go only to the
/// devices of system node stage[v]; and its locality rule (placeHierarchical).
struct NodeRestriction {
  const System *system;
  const std::vector<int32_t> *stage;
  double localitySlack = 0;
};

/// placeHierarchical's device rule: among the devices that can start v
/// within localitySlack x c(v) of the critical-path rule's choice `device`,
/// the one already holding the most bytes of v's inputs (`device` among
/// equals, then the lowest id). `local` is a buffer of numDevices values.
DeviceId localDevice(const PlacementEnvironment &env, NodeId v,
                     DeviceId device, const double *est, double slack,
                     std::vector<double> &local) {
  const Graph &graph = env.graph();
  if (slack <= 0 || !graph.hasOutputBytes() || graph.inDegree(v) == 0)
    return device;
  std::fill(local.begin(), local.end(), 0.0);
  for (NodeId u : graph.predecessors(v))
    local[env.deviceOf(u)] += graph.outputBytes(u);
  const double limit = est[device] + slack * graph.computeCost(v);
  DeviceId best = device;
  for (DeviceId d = 0; d < env.numDevices(); ++d)
    if (est[d] <= limit && local[d] > local[best])
      best = d;
  return best;
}

/// est(v, d) for every device; +infinity on the devices `restriction`
/// (when given) rules out for v.
void datedStarts(const PlacementEnvironment &env, NodeId v, double *row,
                 const NodeRestriction *restriction) {
  env.earliestStarts(v, row);
  if (!restriction)
    return;
  const int32_t node = (*restriction->stage)[v];
  for (DeviceId d = 0; d < env.numDevices(); ++d)
    if (restriction->system->nodeOf(d) != node)
      row[d] = std::numeric_limits<double>::infinity();
}

/// The critical-path SEL choice (see above). Leaves est(picked, d) for every
/// device in `est`; `window` and `scratch` are reused buffers.
NodeId selectCriticalPath(const PlacementEnvironment &env,
                          CandidateOrder &order,
                          const std::vector<double> &bottom,
                          std::vector<NodeId> &window,
                          std::vector<double> &est,
                          std::vector<double> &scratch,
                          const NodeRestriction *restriction) {
  NodeId first = order.first();
  datedStarts(env, first, est.data(), restriction);
  if (order.size() < 2)
    return first;
  // No candidate starts before the first device is free: a candidate that
  // can start then ends the search (exact, and the common case).
  double firstFree = env.deviceFreeTime(0);
  for (DeviceId d = 1; d < env.numDevices(); ++d)
    firstFree = std::min(firstFree, env.deviceFreeTime(d));
  if (*std::min_element(est.begin(), est.end()) <= firstFree)
    return first;
  order.firstInEnvironmentOrder(kTieWindow, window);
  NodeId picked = -1;
  double soonest = 0;
  for (NodeId v : window) {
    if (picked >= 0 && soonest <= firstFree)
      break;
    if (bottom[v] != bottom[first])
      continue;
    double *row = v == first ? est.data() : scratch.data();
    if (v != first)
      datedStarts(env, v, row, restriction);
    double start = *std::min_element(row, row + env.numDevices());
    if (picked < 0 || start < soonest) {
      picked = v;
      soonest = start;
      if (v != first)
        std::swap(est, scratch);
    }
  }
  return picked;
}

/// The device rules that follow the critical-path SEL (earliestStartDevice
/// and joinAwareDevice).
enum class DeviceRule { EarliestStart, JoinAware };

/// Places `graph` with the critical-path SEL and `rule`, except that nodes
/// with a device in `forced` (>= 0) go there. Returns the assignment; the
/// placement order goes to `placementOrder` when given.
/// `reuse`, when given, is the environment to place in (one that placed
/// before keeps its buffers' capacity; placeCriticalPathAndJoinAware).
std::vector<DeviceId> placeByRule(const Graph &graph, int32_t numDevices,
                                  const std::vector<double> &bottom,
                                  DeviceRule rule, StartEstimate estimate,
                                  const std::vector<DeviceId> *forced,
                                  std::vector<NodeId> *placementOrder,
                                  const System *system = nullptr,
                                  const NodeRestriction *restriction = nullptr,
                                  PlacementEnvironment *reuse = nullptr) {
  PlacementEnvironment own;
  PlacementEnvironment &env = reuse ? *reuse : own;
  env.setSystem(system);
  env.reset(graph, numDevices, estimate);
  std::vector<double> est(numDevices), scratch(numDevices), split;
  if (rule == DeviceRule::JoinAware)
    split.resize(numDevices);
  std::vector<NodeId> window;
  std::vector<double> local(restriction ? numDevices : 0);
  CandidateOrder order;
  order.reset(graph.numNodes(), bottom.data());
  while (!env.done()) {
    order.sync(env);
    NodeId picked =
        selectCriticalPath(env, order, bottom, window, est, scratch,
                           restriction);
    DeviceId device = forced ? (*forced)[picked] : -1;
    if (device < 0 && rule == DeviceRule::JoinAware) {
      env.joinSplitCosts(picked, split.data());
      device = joinAwareDevice(numDevices, est.data(), split.data());
    } else if (device < 0) {
      device = earliestStartDevice(env, est.data());
      if (restriction)
        device = localDevice(env, picked, device, est.data(),
                             restriction->localitySlack, local);
    }
    env.step(picked, device);
    order.remove(picked);
  }
  if (placementOrder) {
    ArrayView<NodeId> placed = env.placementOrder();
    placementOrder->assign(placed.begin(), placed.end());
  }
  ArrayView<DeviceId> placed = env.assignment();
  return {placed.begin(), placed.end()};
}

} // namespace

NodeId selectCriticalPathNode(const PlacementEnvironment &env,
                              CandidateOrder &order,
                              const std::vector<double> &bottom,
                              std::vector<NodeId> &window,
                              std::vector<double> &est,
                              std::vector<double> &scratch) {
  return selectCriticalPath(env, order, bottom, window, est, scratch,
                            /*restriction=*/nullptr);
}

DeviceId earliestStartDevice(const PlacementEnvironment &env, const double *est,
                             int32_t stride) {
  DeviceId device = 0;
  for (DeviceId d = 1; d < env.numDevices(); ++d) {
    const double start = est[d * stride], best = est[device * stride];
    if (start < best ||
        (start == best && env.deviceFreeTime(d) > env.deviceFreeTime(device)))
      device = d;
  }
  return device;
}

DeviceId joinAwareDevice(int32_t numDevices, const double *est,
                         const double *split, int32_t stride) {
  DeviceId device = 0;
  for (DeviceId d = 1; d < numDevices; ++d)
    if (est[d * stride] + split[d * stride] <
        est[device * stride] + split[device * stride])
      device = d;
  return device;
}

std::vector<DeviceId> placeCriticalPath(const Graph &graph,
                                        int32_t numDevices,
                                        StartEstimate estimate,
                                        const System *system) {
  const std::vector<double> bottom = computeBottomLevels(graph).value;
  return placeByRule(graph, numDevices, bottom, DeviceRule::EarliestStart,
                     estimate, nullptr, nullptr, system);
}

std::vector<DeviceId> placeJoinAware(const Graph &graph, int32_t numDevices,
                                     const System *system) {
  const std::vector<double> bottom = computeBottomLevels(graph).value;
  return placeByRule(graph, numDevices, bottom, DeviceRule::JoinAware,
                     StartEstimate::EarliestStart, nullptr, nullptr, system);
}

CriticalPathAndJoinAware placeCriticalPathAndJoinAware(const Graph &graph,
                                                       int32_t numDevices,
                                                       StartEstimate estimate,
                                                       const System *system) {
  const std::vector<double> bottom = computeBottomLevels(graph).value;
  PlacementEnvironment env;
  CriticalPathAndJoinAware placed;
  placed.criticalPath =
      placeByRule(graph, numDevices, bottom, DeviceRule::EarliestStart,
                  estimate, nullptr, nullptr, system, nullptr, &env);
  placed.joinAware =
      placeByRule(graph, numDevices, bottom, DeviceRule::JoinAware,
                  StartEstimate::EarliestStart, nullptr, nullptr, system,
                  nullptr, &env);
  return placed;
}

std::vector<int32_t> pipelineStages(const Graph &graph, int32_t numStages) {
  // A node's stage is where the middle of its compute falls in the running
  // total along the topological order: monotone in that order, so stages
  // are contiguous, and each holds about total / numStages of compute.
  std::vector<int32_t> stage(graph.numNodes(), 0);
  const double total = graph.totalCompute();
  if (numStages < 2 || !(total > 0))
    return stage;
  double before = 0;
  for (NodeId v : graph.topologicalOrder()) {
    const double middle = before + graph.computeCost(v) / 2;
    before += graph.computeCost(v);
    stage[v] = std::min(numStages - 1,
                        static_cast<int32_t>(middle / total * numStages));
  }
  return stage;
}

std::vector<DeviceId> placeHierarchical(const Graph &graph,
                                        const System &system, int32_t stages,
                                        double localitySlack) {
  const int32_t numStages =
      stages > 0 ? std::min(stages, system.numNodes()) : system.numNodes();
  const std::vector<int32_t> stage = pipelineStages(graph, numStages);
  const std::vector<double> bottom = computeBottomLevels(graph).value;
  const NodeRestriction restriction{&system, &stage, localitySlack};
  std::vector<DeviceId> placed =
      placeByRule(graph, system.numDevices(), bottom,
                  DeviceRule::EarliestStart, StartEstimate::EarliestStart,
                  nullptr, nullptr, &system, &restriction);
  // A source has no input to wait for, so the rule puts it on whichever
  // device is free: it goes with its first consumer instead, whose input it
  // is (on the 7B stack of docs/SystemDescription.md, 0.8% shorter).
  for (NodeId v = 0; v < graph.numNodes(); ++v)
    if (graph.inDegree(v) == 0 && graph.outDegree(v) > 0)
      placed[v] = placed[graph.edgeTarget(graph.succBegin(v))];
  return placed;
}

std::vector<DeviceId> completePlacement(const Graph &graph, int32_t numDevices,
                                        const std::vector<double> &bottom,
                                        bool joinAware,
                                        const std::vector<DeviceId> &forced) {
  return placeByRule(graph, numDevices, bottom,
                     joinAware ? DeviceRule::JoinAware
                               : DeviceRule::EarliestStart,
                     StartEstimate::EarliestStart, &forced, nullptr);
}

int64_t rolloutRunVisits(const Graph &graph, int32_t numDevices) {
  const int64_t work = int64_t(graph.numNodes()) + graph.numEdges();
  return std::max<int64_t>(1, work + work * std::max(0, numDevices) / 16);
}

std::vector<DeviceId> placeRollout(const Graph &graph, int32_t numDevices,
                                   int64_t visitBudget, int64_t *runs) {
  const std::vector<double> bottom = computeBottomLevels(graph).value;
  const int32_t N = graph.numNodes();
  // The base rule: the better of join-aware and critical path here.
  const StartEstimate estimate = StartEstimate::EarliestStart;
  std::vector<NodeId> order, otherOrder;
  DeviceRule rule = DeviceRule::JoinAware;
  std::vector<DeviceId> best =
      placeByRule(graph, numDevices, bottom, rule, estimate, nullptr, &order);
  Simulator simulator(graph, numDevices);
  double bestMakespan = simulator.run(best);
  std::vector<DeviceId> critical =
      placeByRule(graph, numDevices, bottom, DeviceRule::EarliestStart,
                  estimate, nullptr, &otherOrder);
  const double criticalMakespan = simulator.run(critical);
  if (criticalMakespan < bestMakespan) {
    rule = DeviceRule::EarliestStart;
    best.swap(critical);
    order.swap(otherOrder);
    bestMakespan = criticalMakespan;
  }
  int64_t made = 2;
  // Each try costs a pass of the rule and a simulation (rolloutRunVisits).
  const int64_t perRun = rolloutRunVisits(graph, numDevices);
  const int64_t maxRuns = std::max<int64_t>(1, visitBudget / perRun);
  std::vector<DeviceId> forced(N, -1), tried;
  std::vector<NodeId> triedOrder;
  for (int32_t t = 0; t < N && numDevices > 1; ++t) {
    // The node the current best placement places t-th: the earlier ones
    // are forced to their devices, so the prefix of the order is the same
    // in every completion.
    const NodeId v = order[t];
    const DeviceId kept = best[v];
    for (DeviceId d = 0; d < numDevices && made < maxRuns; ++d) {
      if (d == kept)
        continue;
      forced[v] = d;
      tried = placeByRule(graph, numDevices, bottom, rule, estimate, &forced,
                          &triedOrder);
      const double makespan = simulator.run(tried);
      ++made;
      if (makespan < bestMakespan) {
        bestMakespan = makespan;
        best.swap(tried);
        order.swap(triedOrder);
      }
    }
    forced[v] = best[v];
    if (made >= maxRuns)
      break;
  }
  if (runs)
    *runs = made;
  return best;
}

std::vector<DeviceId> placeCriticalPathReference(const Graph &graph,
                                                 int32_t numDevices,
                                                 uint64_t seed) {
  const std::vector<double> bottom = computeBottomLevels(graph).value;
  SeededRandom random(seed);
  PlacementEnvironment env;
  env.reset(graph, numDevices, StartEstimate::DeviceLoad);
  std::vector<double> est(numDevices);
  std::vector<DeviceId> fastest;
  fastest.reserve(numDevices);
  while (!env.done()) {
    ArrayView<NodeId> candidates = env.candidates();
    double largest = bottom[candidates[0]];
    for (NodeId v : candidates)
      largest = std::max(largest, bottom[v]);
    uint32_t sharing = 0;
    for (NodeId v : candidates)
      sharing += bottom[v] == largest;
    // The slip: the index drawn among the k best is used on the whole list.
    NodeId picked = candidates[random.below(sharing)];

    env.earliestStarts(picked, est.data());
    double earliest = *std::min_element(est.begin(), est.end());
    fastest.clear();
    for (DeviceId d = 0; d < numDevices; ++d)
      if (est[d] == earliest)
        fastest.push_back(d);
    env.step(picked, fastest[random.below(fastest.size())]);
  }
  ArrayView<DeviceId> placed = env.assignment();
  return {placed.begin(), placed.end()};
}

std::vector<double> upwardRanks(const Graph &graph) {
  std::vector<double> rank(graph.numNodes(), 0.0);
  const std::vector<NodeId> &order = graph.topologicalOrder();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    NodeId v = *it;
    double tail = 0;
    for (int32_t e = graph.succBegin(v); e < graph.succEnd(v); ++e)
      tail = std::max(tail, graph.edgeCost(e) + rank[graph.edgeTarget(e)]);
    rank[v] = graph.computeCost(v) + tail;
  }
  return rank;
}

HeftSchedule scheduleHeft(const Graph &graph, int32_t numDevices,
                          const System *system) {
  const int32_t numNodes = graph.numNodes();
  // Pair-aware readiness (PlacementEnvironment::setSystem's rule); the
  // ranks keep the edge costs, HEFT's average communication cost.
  const bool pairAware = system && graph.hasOutputBytes() &&
                         system->numDevices() == numDevices;
  const std::vector<double> rank = upwardRanks(graph);
  // Decreasing rank; equal ranks (zero-cost links) keep topological order so
  // that producers are always scheduled before consumers.
  std::vector<int32_t> topoIndex(numNodes);
  const std::vector<NodeId> &topo = graph.topologicalOrder();
  for (int32_t i = 0; i < numNodes; ++i)
    topoIndex[topo[i]] = i;
  std::vector<NodeId> order(topo.begin(), topo.end());
  std::stable_sort(order.begin(), order.end(), [&](NodeId a, NodeId b) {
    if (rank[a] != rank[b])
      return rank[a] > rank[b];
    return topoIndex[a] < topoIndex[b];
  });

  HeftSchedule result;
  result.assignment.assign(numNodes, -1);
  result.start.assign(numNodes, 0.0);
  result.finish.assign(numNodes, 0.0);

  // Busy intervals per device, sorted by start (and so by end too).
  struct Interval {
    double start, end;
  };
  std::vector<std::vector<Interval>> busy(numDevices);
  // Earliest start of a node of length `duration`, ready at `ready`, on a
  // device: the first idle gap that fits, else after the last interval.
  auto earliestSlot = [](const std::vector<Interval> &intervals, double ready,
                         double duration, size_t *position) {
    // Intervals ending before `ready` cannot bound a usable gap.
    auto first = std::lower_bound(
        intervals.begin(), intervals.end(), ready,
        [](const Interval &interval, double t) { return interval.end < t; });
    size_t i = first - intervals.begin();
    double gapStart = i == 0 ? ready : std::max(ready, intervals[i - 1].end);
    for (; i < intervals.size(); ++i) {
      if (gapStart + duration <= intervals[i].start)
        break;
      gapStart = std::max(ready, intervals[i].end);
    }
    *position = i;
    return gapStart;
  };

  for (NodeId v : order) {
    const double duration = graph.computeCost(v);
    DeviceId bestDevice = -1;
    double bestStart = 0, bestFinish = 0;
    size_t bestPosition = 0;
    for (DeviceId d = 0; d < numDevices; ++d) {
      double ready = 0;
      ArrayView<NodeId> preds = graph.predecessors(v);
      ArrayView<int32_t> edges = graph.predecessorEdges(v);
      for (size_t i = 0; i < preds.size(); ++i) {
        NodeId u = preds[i];
        double arrival = result.finish[u];
        const DeviceId du = result.assignment[u];
        if (du != d)
          arrival += pairAware ? pairTransferCost(graph, *system, edges[i], du, d)
                               : graph.edgeCost(edges[i]);
        ready = std::max(ready, arrival);
      }
      size_t position;
      double start = earliestSlot(busy[d], ready, duration, &position);
      // Earliest finish time; strict, so equal finishes keep the lowest id.
      double finish = start + duration;
      if (bestDevice < 0 || finish < bestFinish) {
        bestDevice = d;
        bestStart = start;
        bestFinish = finish;
        bestPosition = position;
      }
    }
    result.assignment[v] = bestDevice;
    result.start[v] = bestStart;
    result.finish[v] = bestFinish;
    result.makespan = std::max(result.makespan, result.finish[v]);
    busy[bestDevice].insert(busy[bestDevice].begin() + bestPosition,
                            Interval{bestStart, bestStart + duration});
  }
  return result;
}

std::vector<DeviceId> placeHeft(const Graph &graph, int32_t numDevices,
                                const System *system) {
  return scheduleHeft(graph, numDevices, system).assignment;
}

std::vector<DeviceId> placeRoundRobin(const Graph &graph, int32_t numDevices) {
  std::vector<DeviceId> assignment(graph.numNodes());
  for (NodeId v = 0; v < graph.numNodes(); ++v)
    assignment[v] = v % numDevices;
  return assignment;
}

std::vector<DeviceId> placeRandom(const Graph &graph, int32_t numDevices,
                                  uint64_t seed) {
  SeededRandom random(seed);
  std::vector<DeviceId> assignment(graph.numNodes());
  for (DeviceId &device : assignment)
    device = static_cast<DeviceId>(random.below(numDevices));
  return assignment;
}

std::vector<DeviceId> placeSingle(const Graph &graph, int32_t numDevices) {
  (void)numDevices;
  return std::vector<DeviceId>(graph.numNodes(), 0);
}

//===----------------------------------------------------------------------===//
// The policies as objects
//===----------------------------------------------------------------------===//

PlacementPolicy::~PlacementPolicy() = default;

namespace {

enum class HeuristicKind {
  CriticalPath,
  Heft,
  RoundRobin,
  Random,
  Single,
  CriticalPathReference,
  JoinAware,
  Rollout,
};

struct HeuristicEntry {
  const char *name;
  HeuristicKind kind;
};

// The order of the --help listing.
constexpr HeuristicEntry kHeuristics[] = {
    {"critical-path", HeuristicKind::CriticalPath},
    {"join-aware", HeuristicKind::JoinAware},
    {"rollout", HeuristicKind::Rollout},
    {"heft", HeuristicKind::Heft},
    {"round-robin", HeuristicKind::RoundRobin},
    {"random", HeuristicKind::Random},
    {"single", HeuristicKind::Single},
    {"critical-path-reference", HeuristicKind::CriticalPathReference},
};

class HeuristicPolicy final : public PlacementPolicy {
public:
  HeuristicPolicy(const HeuristicEntry &entry, const PolicyOptions &options)
      : entry_(entry), options_(options) {}

  std::string_view name() const override { return entry_.name; }

  std::optional<std::vector<DeviceId>>
  place(const Graph &graph, int32_t numDevices, std::string *error) override {
    if (numDevices < 1) {
      if (error)
        *error = "device count must be at least 1, got " +
                 std::to_string(numDevices);
      return std::nullopt;
    }
    switch (entry_.kind) {
    case HeuristicKind::CriticalPath:
      return placeCriticalPath(graph, numDevices, options_.estimate,
                               options_.system);
    case HeuristicKind::JoinAware:
      return placeJoinAware(graph, numDevices, options_.system);
    case HeuristicKind::Rollout:
      return placeRollout(graph, numDevices);
    case HeuristicKind::Heft:
      return placeHeft(graph, numDevices, options_.system);
    case HeuristicKind::RoundRobin:
      return placeRoundRobin(graph, numDevices);
    case HeuristicKind::Random:
      return placeRandom(graph, numDevices, options_.seed);
    case HeuristicKind::Single:
      return placeSingle(graph, numDevices);
    case HeuristicKind::CriticalPathReference:
      return placeCriticalPathReference(graph, numDevices, options_.seed);
    }
    return std::nullopt;
  }

private:
  HeuristicEntry entry_;
  PolicyOptions options_;
};

} // namespace

const std::vector<std::string> &heuristicPolicyNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> list;
    for (const HeuristicEntry &entry : kHeuristics)
      list.emplace_back(entry.name);
    return list;
  }();
  return names;
}

std::unique_ptr<PlacementPolicy> createPolicy(std::string_view name,
                                              const PolicyOptions &options,
                                              std::string *error) {
  for (const HeuristicEntry &entry : kHeuristics)
    if (name == entry.name)
      return std::make_unique<HeuristicPolicy>(entry, options);
  if (error) {
    std::string message = "unknown policy '" + std::string(name) + "' (valid: ";
    const std::vector<std::string> &names = heuristicPolicyNames();
    for (size_t i = 0; i < names.size(); ++i)
      message += (i ? ", " : "") + names[i];
    *error = message + ")";
  }
  return nullptr;
}

std::optional<std::vector<DeviceId>>
placeWithPolicy(std::string_view name, const Graph &graph, int32_t numDevices,
                const PolicyOptions &options, std::string *error) {
  std::unique_ptr<PlacementPolicy> policy = createPolicy(name, options, error);
  if (!policy)
    return std::nullopt;
  return policy->place(graph, numDevices, error);
}

} // namespace doppler::placement
