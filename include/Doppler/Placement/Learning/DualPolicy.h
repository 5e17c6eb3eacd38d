//===- DualPolicy.h - The learned SEL + PLC placement policy ----*- C++ -*-===//
//
// The learned dual policy of shared/METHOD.md section 5, as exported by
// libDopplerLearning.so: an MPNN encoder over the undirected graph, SEL (which
// candidate to place next) and PLC (on which device). This header has no
// LibTorch includes and every function is noexcept: failures come back as
// std::nullopt / nullptr / false with a one-line message in `error`.
//
// Tools that only *use* the policy should call placeWithLearnedPolicy()
// (LearnedPolicy.h), which loads this library on demand. Code that trains or
// inspects models (doppler-train, tests, benchmarks) links it directly.
//
// Threads: one LearnedPolicy must not be used by two threads at once. All
// LibTorch work runs on one intra-op thread (at::set_num_threads(1)), which
// makes every result a function of (model, graph, devices, options) alone.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_PLACEMENT_LEARNING_DUALPOLICY_H
#define DOPPLER_PLACEMENT_LEARNING_DUALPOLICY_H

#include "Doppler/Placement/Environment.h"
#include "Doppler/Placement/Graph.h"
#include "Doppler/Placement/Learning/Export.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace doppler::placement {

/// How the encoder turns an edge feature into its hidden x hidden matrix.
enum class EdgeNetworkKind : int32_t {
  /// The reference (Gilmer et al.'s edge network): feature -> MLP ->
  /// hidden*hidden values per edge.
  Full = 0,
  /// A constant matrix plus a rank-r part whose r gains come from the
  /// feature: W(e) = C + U diag(g(e)) V. About 3x cheaper per training
  /// episode; models/README.md compares how the two place.
  LowRank = 1,
};

/// Architecture of a model; stored in the model file.
struct DOPPLER_LEARNING_API ModelConfig {
  int32_t hiddenSize = 128;
  int32_t headHiddenSize = 64;
  int32_t messagePassingRounds = 6;
  EdgeNetworkKind edgeNetwork = EdgeNetworkKind::LowRank;
  int32_t edgeRank = 8; ///< LowRank only
  /// One encoder for both policies (true) or one each, as the reference.
  bool sharedEncoder = true;
  /// How the episode's estimated schedule dates a placed node (device
  /// features and the imitation teacher depend on it).
  StartEstimate startEstimate = StartEstimate::EarliestStart;
  /// The critical-path heuristic's choice as a prior: a learned scalar per
  /// policy is added to the score of the candidate (largest b-level, the
  /// oldest among equals) and of the device (smallest est, lowest id) the
  /// heuristic would pick. Imitation makes it large, so greedy rollouts
  /// start out as the heuristic; reinforcement learns where to leave it.
  bool heuristicPrior = false;
  /// PLC also reads the join-split device feature (kJoinSplitFeature in
  /// Environment.h): the forward transfer cost of placing a node away from
  /// the already-placed inputs of its successors. With it comes a second
  /// learned prior, on the *join-aware* device (smallest est + split),
  /// which only reinforcement moves: imitation episodes leave it out, so
  /// imitation trains the network on the heuristic alone; when RL follows
  /// imitation the trainer starts the prior at the value (of 4) whose
  /// greedy placements score best, and RL then weighs the two heuristics
  /// against each other. Off: the five device features of METHOD section 4
  /// (and the default model).
  bool joinFeature = false;
  /// How SEL's path sums and PLC's per-device embedding sums reach the
  /// head. Off (METHOD section 5): standardised within the step at width
  /// hidden, then a Linear(hidden -> head) block, per candidate (device)
  /// row. On: projected by that block once per node, then standardised
  /// within the step at width head and scaled by a learned gain per head
  /// unit. Scores stay relative within the step; a row costs O(head)
  /// instead of O(hidden * head), which is most of a training episode in
  /// critical-path order (thousands of candidate rows on 200 nodes).
  bool projectSums = false;
  /// PLC also reads the memory pressure of each device
  /// (kMemoryPressureFeature in Environment.h: the estimated peak of its
  /// live bytes if the node goes there, over its capacity; unstandardised,
  /// capped at kMemoryPressureCap, 0 without limits) as its last device
  /// feature, and a third learned prior is added to the score of every
  /// device that placing the node would overflow by that estimate. The
  /// prior starts at -2 x the heuristic prior's start (a device that
  /// overflows loses against one that does not), only reinforcement moves
  /// it, and the trainer's memory-tight pairs (TrainerOptions::memoryTight)
  /// with their overflow penalty are what teach the feature. Placement
  /// passes capacities with PlaceOptions::memoryCapacities; without them
  /// the feature is 0 and the prior never applies.
  bool memoryFeature = false;
  /// PLC also reads what each device leads to: for every device d, the
  /// simulated makespan of the placement that puts the node on d and
  /// completes the rest with the better heuristic on the graph (critical
  /// path or join-aware, completePlacement() in Heuristics.h, every node
  /// placed so far kept where it is), standardised across the devices. With
  /// it comes a fourth learned prior, on the device whose completion is
  /// shortest (the lowest id among equals). A policy that follows that
  /// prior is the rollout algorithm over the better heuristic, and its
  /// placement is never worse than that heuristic's: at the first step the
  /// heuristic's own device completes to the heuristic's placement, and at
  /// every later step the device the chosen completion gives the node
  /// completes to that same placement, so the best never gets worse. It
  /// costs D - 1 completions a step, O(D n (n + e)) a placement; a graph
  /// whose completions would cost more than RolloutOptions::lookaheadVisits
  /// gets none: the column reads 0 and the prior goes to the device the
  /// better heuristic's rule picks at each step, given joinFeature and a
  /// budget for the two heuristic runs that choose the rule (otherwise the
  /// prior never applies). The
  /// completions judge the makespan alone, not memory (with memoryFeature
  /// the memory prior still applies). Imitation episodes leave them out
  /// (they teach the heuristic); the trainer starts the prior, as the join
  /// prior, at the value whose greedy placements score best before RL.
  bool lookahead = false;

  /// Device features PLC reads: the five of METHOD section 4, then the join
  /// split (joinFeature), the completion makespan (lookahead), the memory
  /// pressure (memoryFeature).
  int32_t deviceFeatureCount() const noexcept {
    return 5 + (joinFeature ? 1 : 0) + (lookahead ? 1 : 0) +
           (memoryFeature ? 1 : 0);
  }

  /// The reference architecture: two encoders with full edge matrices.
  static ModelConfig reference() noexcept;
  /// The default: one shared encoder with low-rank edge matrices and 4
  /// rounds, the heuristic prior, projected sums.
  static ModelConfig slim() noexcept;
  /// "hidden=128 head=64 rounds=6 edge=low-rank/8 encoders=shared
  /// estimate=earliest-start prior=off join=off project=off".
  std::string describe() const;
};

/// Parses "reference", "slim" (= "default"), optionally followed by
/// ",key=value" overrides: hidden, head, rounds, edge (full | low-rank),
/// rank, shared (0 | 1), estimate (earliest-start | device-load),
/// prior (0 | 1: ModelConfig::heuristicPrior), join (0 | 1:
/// ModelConfig::joinFeature), project (0 | 1: ModelConfig::projectSums),
/// memory (0 | 1: ModelConfig::memoryFeature), lookahead (0 | 1:
/// ModelConfig::lookahead).
/// Example: "slim,rank=16,rounds=4".
DOPPLER_LEARNING_API std::optional<ModelConfig>
parseModelConfig(const std::string &text, std::string *error) noexcept;

struct PlaceOptions {
  /// 0: one greedy rollout. K > 0: K rollouts (the greedy one and K-1 drawn
  /// from the policy's distributions, SEL's at temperatures rising from 1 to
  /// 24),
  /// the best by the simulator is kept.
  int32_t samples = 0;
  uint64_t seed = 0;
  /// Wall-clock seconds the sampled rollouts may take, counted from the
  /// start of the greedy one (which always runs); 0: no limit. Sampling
  /// stops at the first rollout that would begin past it, so a budget in
  /// time bounds `samples` as it bounds refinement.
  double samplingSeconds = 0;
  /// SEL scores at most this many ready nodes per step, those with the
  /// largest bottom levels (see RolloutOptions::candidateWindow); 0: all.
  int32_t candidateWindow = 32;
  /// Memory capacity of each device in bytes (numDevices values; infinity:
  /// unlimited), or empty for none. A model with ModelConfig::memoryFeature
  /// reads them (on a graph with output bytes); every model reports its
  /// placement's overflow (PlacementResult::memoryOverflowBytes). Sampled
  /// rollouts are still ranked by makespan (see LearnedPolicy::Impl::place
  /// for why).
  std::vector<double> memoryCapacities;
  /// A model with ModelConfig::lookahead: the visits each rollout's
  /// completions may cost, all or none (RolloutOptions::lookaheadVisits);
  /// -1: the default, kLookaheadVisitBudget.
  int64_t lookaheadVisits = -1;
  /// Where the completions do not fit: nodes of the bounded-horizon
  /// completions that may overrule the better rule's device
  /// (RolloutOptions::horizonNodes, an experiment); -1: the default, 0
  /// (none).
  int32_t horizonNodes = -1;
};

struct PlacementResult {
  std::vector<DeviceId> assignment;
  /// Simulated makespan (reference semantics) of `assignment`.
  double makespan = 0;
  /// Which rollout won (0 = greedy).
  int32_t bestRollout = 0;
  /// With PlaceOptions::memoryCapacities: the bytes by which `assignment`'s
  /// simulated peaks exceed them, summed over the devices (0: it fits).
  double memoryOverflowBytes = 0;
};

/// One step of a greedy rollout, for inspection and tests.
struct PolicyStep {
  std::vector<NodeId> candidates;          ///< in environment order
  std::vector<double> candidateProbability; ///< SEL, same order
  NodeId node = -1;                        ///< chosen (argmax)
  std::vector<double> deviceProbability;   ///< PLC, one per device
  DeviceId device = -1;                    ///< chosen (argmax)
};

class DOPPLER_LEARNING_API LearnedPolicy {
public:
  class Impl;

  ~LearnedPolicy();
  LearnedPolicy(const LearnedPolicy &) = delete;
  LearnedPolicy &operator=(const LearnedPolicy &) = delete;

  /// A freshly initialised model (orthogonal weights, zero biases).
  static std::unique_ptr<LearnedPolicy>
  create(const ModelConfig &config, uint64_t seed,
         std::string *error = nullptr) noexcept;
  /// Reads a model file written by save() (or doppler-train).
  static std::unique_ptr<LearnedPolicy>
  load(const std::string &path, std::string *error = nullptr) noexcept;
  static std::unique_ptr<LearnedPolicy>
  loadFromMemory(const void *data, size_t size, const std::string &name,
                 std::string *error = nullptr) noexcept;
  /// The model embedded in the library (models/doppler-default.pt when it
  /// was built).
  static std::unique_ptr<LearnedPolicy>
  loadDefault(std::string *error = nullptr) noexcept;
  static bool hasDefaultModel() noexcept;

  /// Writes the model atomically (a temporary file, then a rename).
  bool save(const std::string &path, std::string *error = nullptr) const
      noexcept;

  const ModelConfig &config() const noexcept;
  int64_t numParameters() const noexcept;

  /// Places every node of `graph` on one of `numDevices` devices.
  std::optional<PlacementResult> place(const Graph &graph, int32_t numDevices,
                                       const PlaceOptions &options = {},
                                       std::string *error = nullptr) noexcept;

  /// The greedy rollout step by step with the full distributions.
  std::optional<std::vector<PolicyStep>>
  trace(const Graph &graph, int32_t numDevices,
        std::string *error = nullptr) noexcept;

  Impl &impl() noexcept { return *impl_; }
  const Impl &impl() const noexcept { return *impl_; }

private:
  explicit LearnedPolicy(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace doppler::placement

#endif // DOPPLER_PLACEMENT_LEARNING_DUALPOLICY_H
