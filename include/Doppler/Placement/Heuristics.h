//===- Heuristics.h - Non-learned placement policies ------------*- C++ -*-===//
//
// The baselines of shared/METHOD.md section 7 behind one interface:
//
//   critical-path            SEL: the candidate with the largest b-level;
//                            among equals, the one that can start soonest
//                            (min over d of est(v, d), of the first 16 tied
//                            candidates), then the one that became a
//                            candidate first. PLC: the device with the
//                            smallest est(v, d); among equals, the one that
//                            became free last (best fit), then the lowest
//                            id. Deterministic. Against the median of 5
//                            critical-path-reference episodes (reference
//                            simulator, D = 2..8; CriticalPathTiesTest),
//                            geomean 0.934 on 280 unseen generated pairs
//                            and 0.933 on the shared graphs, where the
//                            earlier rule (oldest candidate, lowest id)
//                            had 0.946 and 0.972; Heuristics.cpp says why.
//   join-aware               SEL as critical-path; PLC: the device with the
//                            smallest est(v, d) + join split(v, d) (what v's
//                            successors will wait for if their inputs end
//                            up apart; PlacementEnvironment::joinSplitCosts),
//                            lowest id among equals. Deterministic. Not in
//                            METHOD: the join-aware prior of the learned
//                            policy (ModelConfig::joinFeature) as a rule.
//   rollout                  One pass of the rollout algorithm (Bertsekas)
//                            over the better of join-aware and critical
//                            path on the graph (by the simulator): in its
//                            placement order, each node tries every other
//                            device, the rest completed by that rule with
//                            the earlier choices kept, each completion
//                            judged by the simulator; the best is kept.
//                            Never worse than either heuristic. 2 + (D - 1)
//                            x n simulator runs, each costing
//                            rolloutRunVisits(), at most kRolloutVisitBudget
//                            visits in all (later nodes keep the rule's
//                            device once it is spent). Deterministic.
//   critical-path-reference  The reference code's version, slip included: it
//                            picks uniformly among the *first k* candidates
//                            of its list (k = how many candidates share the
//                            largest b-level), dates nodes by device load,
//                            and breaks device ties at random. Seeded; for
//                            comparisons only.
//   heft                     Topcuoglu et al.: nodes by decreasing upward
//                            rank, each on the device giving the earliest
//                            finish, inserted into idle gaps. Deterministic.
//   round-robin              node v on device v mod D.
//   random                   uniform device per node. Seeded.
//   single                   everything on device 0.
//
// Same seed, same graph, same device count => same placement, on every
// platform (the generator below is specified, not std::).
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_PLACEMENT_HEURISTICS_H
#define DOPPLER_PLACEMENT_HEURISTICS_H

#include "Doppler/Placement/Environment.h"
#include "Doppler/Placement/Graph.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace doppler::placement {

/// A small, portable pseudo-random generator (SplitMix64). Results depend
/// only on the seed, unlike std:: distributions whose output varies between
/// standard libraries.
class SeededRandom {
public:
  explicit SeededRandom(uint64_t seed) : state_(seed) {}
  uint64_t next();
  /// Uniform integer in [0, bound); bound must be >= 1.
  uint32_t below(uint32_t bound);
  /// Uniform double in [0, 1).
  double uniform();

private:
  uint64_t state_;
};

struct PolicyOptions {
  /// Seed of the randomised policies (random, critical-path-reference).
  uint64_t seed = 0;
  /// Start estimate of the critical-path policy (critical-path-reference
  /// always uses DeviceLoad, as the reference does).
  StartEstimate estimate = StartEstimate::EarliestStart;
  /// Pair-aware transfer costs for critical-path, join-aware and heft
  /// (PlacementEnvironment::setSystem): with a system of the placement's
  /// device count and a graph with output bytes, an input from another
  /// device costs that pair's link (the network between nodes) instead of
  /// the edge cost. Null: the edge costs, as before. Must outlive place().
  const System *system = nullptr;
};

/// A policy that places a whole graph.
class PlacementPolicy {
public:
  virtual ~PlacementPolicy();
  /// The name createPolicy() knows it by.
  virtual std::string_view name() const = 0;
  /// Device of every node by id. Fails only for numDevices < 1.
  virtual std::optional<std::vector<DeviceId>>
  place(const Graph &graph, int32_t numDevices,
        std::string *error = nullptr) = 0;
};

/// The names createPolicy() accepts, in the order listed in --help texts.
const std::vector<std::string> &heuristicPolicyNames();

/// Creates a policy by name; on an unknown name returns nullptr and sets
/// `error` to "unknown policy 'x' (valid: critical-path, heft, ...)".
std::unique_ptr<PlacementPolicy> createPolicy(std::string_view name,
                                              const PolicyOptions &options = {},
                                              std::string *error = nullptr);

/// Convenience: createPolicy(name, options)->place(graph, numDevices).
std::optional<std::vector<DeviceId>>
placeWithPolicy(std::string_view name, const Graph &graph, int32_t numDevices,
                const PolicyOptions &options = {},
                std::string *error = nullptr);

// The two device rules, as the heuristics apply them and as the learned
// policy's priors point at them (Rollout.cpp). `est` holds est(v, d) of
// device d at est[d * stride], `split` the join split likewise.
/// Critical path's: the smallest est; among equals (devices idle by then)
/// the one that became free last, then the lowest id.
DeviceId earliestStartDevice(const PlacementEnvironment &env, const double *est,
                             int32_t stride = 1);
/// Join-aware's: the smallest est + join split, the lowest id among equals.
DeviceId joinAwareDevice(int32_t numDevices, const double *est,
                         const double *split, int32_t stride = 1);

/// Critical path's SEL: among the ready nodes of `order` (by b-level
/// `bottom`), the first, or among the first few tied with it on b-level the
/// one that can start soonest. Leaves est(picked, d) for every device in
/// `est`; `window` and `scratch` are reused buffers.
NodeId selectCriticalPathNode(const PlacementEnvironment &env,
                              CandidateOrder &order,
                              const std::vector<double> &bottom,
                              std::vector<NodeId> &window,
                              std::vector<double> &est,
                              std::vector<double> &scratch);

// The policies as plain functions. Precondition: numDevices >= 1.
// `system`: pair-aware transfer costs (PolicyOptions::system).
std::vector<DeviceId>
placeCriticalPath(const Graph &graph, int32_t numDevices,
                  StartEstimate estimate = StartEstimate::EarliestStart,
                  const System *system = nullptr);
std::vector<DeviceId> placeJoinAware(const Graph &graph, int32_t numDevices,
                                     const System *system = nullptr);
/// Both placements above from one call, for a caller that runs both (the
/// learned moves start from the better): the same placements as
/// placeCriticalPath(graph, numDevices, estimate, system) and
/// placeJoinAware(graph, numDevices, system), with the b-levels they share
/// computed once and one environment's buffers placing both.
struct CriticalPathAndJoinAware {
  std::vector<DeviceId> criticalPath, joinAware;
};
CriticalPathAndJoinAware
placeCriticalPathAndJoinAware(const Graph &graph, int32_t numDevices,
                              StartEstimate estimate = StartEstimate::EarliestStart,
                              const System *system = nullptr);
/// The stage of every node when the topological order is cut into
/// `numStages` contiguous pieces of about equal compute (a node belongs
/// where the middle of its compute falls); all 0 for numStages < 2.
std::vector<int32_t> pipelineStages(const Graph &graph, int32_t numStages);
/// A placement for a system of several nodes (machines): the graph cut
/// into `stages` pipeline stages (pipelineStages; 0 or more than the
/// system's nodes: one per node), stage s on node s, then the critical-path
/// rule inside each node, pair-aware (the stages' boundary values cross
/// the network, nothing else does). With `localitySlack` > 0, a node goes
/// to the device of its node holding the most bytes of its inputs among
/// those that can start it within localitySlack x its compute cost of the
/// earliest (owner computes: the blocks of one decomposed op follow the
/// blocks they read, as tensor parallelism places them). Sources go with
/// their first consumer. Starts of the budgeted placement (Budget.h) on
/// systems with nodes; deterministic.
std::vector<DeviceId> placeHierarchical(const Graph &graph,
                                        const System &system,
                                        int32_t stages = 0,
                                        double localitySlack = 0);
/// The locality slack of the budgeted placement's hierarchical starts: on
/// the 7B stack of docs/SystemDescription.md (19159 ops, 2-8 DGX H100
/// nodes) 0.5-0.75 all gave 1.5-3.5% shorter network makespans than 0 and
/// than 0.25-0.4; 0.6 the shortest.
constexpr double kHierarchicalLocalitySlack = 0.6;
/// The placement the critical-path SEL with critical path's device rule
/// (`joinAware` false) or join-aware's completes around `forced`: nodes
/// with forced[v] >= 0 go there, the rest where the rule puts them.
/// `bottom` is computeBottomLevels(graph). A rollout run: one pass of the
/// rule, rolloutRunVisits() with the simulation that judges it.
std::vector<DeviceId> completePlacement(const Graph &graph, int32_t numDevices,
                                        const std::vector<double> &bottom,
                                        bool joinAware,
                                        const std::vector<DeviceId> &forced);
/// The `rollout` policy's budget, in visits: a run (a pass of the rule and
/// a simulation) costs rolloutRunVisits(), (n + e) x (1 + D / 16), since
/// the rule dates every node on every device (per run, on the shared
/// graphs: 37-55 us at D = 2-4, 60-93 at 8, 104-226 at 32, 0.3-0.6 ms at
/// 128, 1.2-2.1 ms at 512). About 6 million visits a second on one core of
/// this project's machines, so this is about 10 s: the whole pass up to a
/// few thousand nodes at D = 4 (1,000 layered nodes: 1.8 s), the first
/// nodes of larger graphs or of many devices.
constexpr int64_t kRolloutVisitBudget = 62'500'000;
/// What one rollout run counts against kRolloutVisitBudget.
int64_t rolloutRunVisits(const Graph &graph, int32_t numDevices);
/// The `rollout` policy. `visitBudget` bounds its work as above; `runs`
/// (optional) receives the number of simulator runs made.
std::vector<DeviceId> placeRollout(const Graph &graph, int32_t numDevices,
                                   int64_t visitBudget = kRolloutVisitBudget,
                                   int64_t *runs = nullptr);
std::vector<DeviceId> placeCriticalPathReference(const Graph &graph,
                                                 int32_t numDevices,
                                                 uint64_t seed);
std::vector<DeviceId> placeHeft(const Graph &graph, int32_t numDevices,
                                const System *system = nullptr);
std::vector<DeviceId> placeRoundRobin(const Graph &graph, int32_t numDevices);
std::vector<DeviceId> placeRandom(const Graph &graph, int32_t numDevices,
                                  uint64_t seed);
std::vector<DeviceId> placeSingle(const Graph &graph, int32_t numDevices);

/// HEFT's own schedule estimate for its placement (insertion-based; not the
/// work-conserving simulator's result): per-node start and finish and the
/// resulting makespan. Exposed for tests and comparisons.
struct HeftSchedule {
  std::vector<DeviceId> assignment;
  std::vector<double> start, finish;
  double makespan = 0;
};
HeftSchedule scheduleHeft(const Graph &graph, int32_t numDevices,
                          const System *system = nullptr);

/// HEFT's upward rank: c(v) + max over out-edges e = (v, w) of
/// edgeCost(e) + rank(w).
std::vector<double> upwardRanks(const Graph &graph);

} // namespace doppler::placement

#endif // DOPPLER_PLACEMENT_HEURISTICS_H
