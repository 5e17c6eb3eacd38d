//===- Rollout.h - One episode of the dual policy, without LibTorch -*- C++ -*-//
//
// The per-step scoring of SEL and PLC in plain C++ over float tables that
// the network computed once per episode (encoder outputs, path sums, the
// head contributions of per-node inputs) and the head weights. A step
// costs O(|candidates| * hidden * head + devices * hidden * head) with no
// allocation and no LibTorch dispatch, which is what keeps an episode fast.
//
// When training, the rollout records its decisions (EpisodeRecord) and the
// loss is recomputed from the record in one batched, differentiable pass
// (PolicyNetwork.h): scores here only choose actions.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_LIB_PLACEMENT_LEARNING_ROLLOUT_H
#define DOPPLER_LIB_PLACEMENT_LEARNING_ROLLOUT_H

#include "Horizon.h"
#include "Random.h"

#include "Doppler/Placement/Environment.h"
#include "Doppler/Placement/Graph.h"
#include "Doppler/Placement/Simulator.h"

#include <cstdint>
#include <memory>
#include <vector>

// For loops whose leaky ReLU selects between two slopes: GCC vectorises
// such a select only without -ftrapping-math (no effect on values; no FP
// traps are enabled).
#if defined(__GNUC__) && !defined(__clang__)
#define DOPPLER_NO_TRAPPING_MATH __attribute__((optimize("no-trapping-math")))
#else
#define DOPPLER_NO_TRAPPING_MATH
#endif

namespace doppler::placement::learning {

constexpr int32_t kFeatureCount = 5; // node features (METHOD section 3)
/// RolloutOptions::lookaheadVisits' default: about 2 s of completions on
/// one core (rolloutRunVisits() runs about 6 million visits a second on
/// the shared graphs), which covers graphs up to about 500 nodes at D = 8
/// (a 240-node graph at D = 8: 2 million), 1,000 at D = 4.
constexpr int64_t kLookaheadVisitBudget = 12'500'000;
constexpr float kLeakySlope = 0.1f;
/// The scorers' leaky ReLU on one value, under their optimisation attribute:
/// GCC inlines a function only into callers with the same attributes, and
/// a call per element cost a sixth of a greedy pass at D = 64.
DOPPLER_NO_TRAPPING_MATH
inline float leakyRelu(float x) { return x > 0 ? x : kLeakySlope * x; }
constexpr double kStandardizeEpsilon = 1e-6;

/// Head weights, stored [in][out] (transposed from LibTorch's [out][in]) so
/// that inner loops run along contiguous outputs.
struct ScorerWeights {
  int32_t hidden = 0;     // H
  int32_t headHidden = 0; // K
  // SEL: feature MLP [5][H] + [H]; the head's input blocks for the feature
  // MLP, b-level and t-level sums as one [3H][K] matrix; output [K].
  const float *selFeatureWeight = nullptr;
  const float *selFeatureBias = nullptr;
  const float *selHeadFeature = nullptr;
  const float *selOutWeight = nullptr;
  float selOutBias = 0;
  // PLC: device MLP [F][H] + [H] over the first F device features
  // (ModelConfig::deviceFeatureCount()); head input blocks [H][K]; output [K].
  int32_t deviceFeatures = kNumMethodDeviceFeatures; // F
  // Which of our own columns follow METHOD's five, in this order:
  // ModelConfig::joinFeature's split, ModelConfig::lookahead's completion
  // makespan, ModelConfig::memoryFeature's pressure (unstandardised, the
  // last column).
  bool joinColumn = false;
  bool lookaheadColumn = false;
  bool memoryColumn = false;
  const float *plcDeviceWeight = nullptr;
  const float *plcDeviceBias = nullptr;
  const float *plcHeadDevice = nullptr;
  const float *plcHeadSum = nullptr; // [H][K]; null with projected sums
  const float *plcOutWeight = nullptr;
  float plcOutBias = 0;
  // ModelConfig::heuristicPrior (0 without it): added to the score of the
  // heuristic's candidate and device.
  float selPrior = 0;
  float plcPrior = 0;
  // ModelConfig::projectSums: the path and device sums are S = K wide,
  // already projected, and reach the head through these gains [K] (null
  // otherwise: S = H, through the head's blocks).
  int32_t sumWidth = 0; // S
  const float *selBottomGain = nullptr;
  const float *selTopGain = nullptr;
  const float *plcSumGain = nullptr;
  // ModelConfig::joinFeature (0 without it): added to the score of the
  // join-aware device, the smallest est(v, d) + join split(v, d).
  float joinPrior = 0;
  // ModelConfig::memoryFeature (0 without it): added to the score of every
  // device whose memory pressure exceeds 1.
  float memoryPrior = 0;
  // ModelConfig::lookahead (0 without it): added to the score of the device
  // whose completion is shortest, at steps that have completions.
  float lookaheadPrior = 0;
  // PLC's Lipschitz bound (DeviceBound.cpp; prepareRollout computes it):
  // for two devices d, r of one step, with dz and ds the differences of
  // their standardised feature rows [F] and sum rows [S],
  //   |score(d) - score(r)| <= plcFeatureGain * sqrt(dz' G dz)
  //                            + sum_k plcSumBound[k] |ds_k|
  //                            + plcSumNorm * |ds|_2,
  // G = plcFeatureGram [F][F] (the device MLP's W'W; the leaky ReLU is
  // 1-Lipschitz), plcFeatureGain = |out|_2 sigma_max(head's device block),
  // plcSumBound[k] = |out_k gain_k| with projected sums (else null, and
  // plcSumNorm = |out|_2 sigma_max(head's sum block)). Null gram: no bound.
  const double *plcFeatureGram = nullptr;
  double plcFeatureGain = 0;
  const double *plcSumBound = nullptr;
  double plcSumNorm = 0;
};

/// What one greedy rollout decided and what it scored (RolloutEngine::
/// stats()): how often the network's choice left the critical-path rule's,
/// and how much of PLC the bound spared.
struct RolloutStats {
  int64_t steps = 0;
  int64_t selDecisions = 0; ///< steps with >= 2 candidates
  int64_t selOffRule = 0;   ///< ... where SEL's pick was not the rule's
  int64_t plcDecisions = 0; ///< steps with >= 2 devices
  int64_t plcOffRule = 0;   ///< device != critical path's (earliest start)
  int64_t plcOffPrior = 0;  ///< device != the lookahead prior's device
  int64_t plcScored = 0;    ///< devices whose score was computed
  int64_t plcCertified = 0; ///< steps decided by the priors' devices alone
  int64_t plcHiddenBounds =
      0; ///< devices the cheap bound left to the hidden one
};

/// The memory-pressure column's cap: past 4x its capacity a device is as
/// overfull as it gets, to the network.
constexpr double kMemoryPressureCap = 4.0;

/// Per-node tables of one graph (rows = nodes).
struct NodeTables {
  int32_t numNodes = 0;
  const float *features = nullptr;       // [N][5], graph-standardised
  const float *bottomPathSums = nullptr; // [N][S] (see ScorerWeights)
  const float *topPathSums = nullptr;    // [N][S]
  /// Head pre-activation terms that depend on the node alone (embedding
  /// blocks and the head bias): [N][K].
  const float *selNodeTerm = nullptr;
  const float *plcNodeTerm = nullptr;
  const float *deviceSummands = nullptr; // [N][S], summed per device
  const double *bottomLevels = nullptr;  // [N], the SEL teacher's key
};

/// The decisions of one episode, enough to recompute every probability.
struct EpisodeRecord {
  int32_t numNodes = 0;
  int32_t numDevices = 0;
  std::vector<NodeId> node;       // per step
  std::vector<DeviceId> device;   // per step

  // SEL segments: the steps that had at least two candidates.
  std::vector<int32_t> selStep;         // step of each segment
  std::vector<int32_t> selOffsets;      // size segments + 1, into rows
  std::vector<NodeId> selCandidates;    // per row
  std::vector<float> selFeatures;       // [rows][5], standardised per step
  std::vector<int32_t> selChosenRow;    // per segment
  std::vector<int32_t> selTeacherRows;  // rows the teacher would pick
  std::vector<int32_t> selPriorRows;    // the heuristic's row, per segment

  // PLC rows: step * D + device, for every step (only when D >= 2).
  int32_t deviceFeatures = 0;           // F
  std::vector<float> plcFeatures;       // [steps][D][F], standardised
  std::vector<int32_t> plcTeacherRows;  // rows the teacher would pick
  std::vector<int32_t> plcPriorRows;    // the heuristic's row, per step
  std::vector<int32_t> plcJoinRows;     // the join-aware device's row
  std::vector<int32_t> plcMemoryRows;   // rows whose device would overflow
  std::vector<int32_t> plcLookaheadRows; // the shortest completion's row

  int32_t selDecisions = 0, selMatches = 0;
  int32_t plcDecisions = 0, plcMatches = 0;

  void clear(int32_t nodes, int32_t devices, int32_t features);
  int32_t numSelSegments() const {
    return static_cast<int32_t>(selStep.size());
  }
};

struct RolloutOptions {
  /// Probability of a uniformly random action (each decision apart).
  double epsilon = 0;
  /// Otherwise: sample from the softmax (true) or take the argmax (false;
  /// ties go to the earliest candidate / lowest device).
  bool sample = false;
  /// Sampling divides SEL's and PLC's scores by these (> 1: flatter
  /// distributions).
  double selectionTemperature = 1.0;
  double placementTemperature = 1.0;
  /// SEL scores at most this many ready nodes per step: those with the
  /// largest bottom levels (the critical-path prior's order; ties by
  /// readiness order), kept in readiness order. Scoring is linear in the
  /// candidates SEL sees, so this bounds a step's cost and makes an episode
  /// linear in the node count; graphs whose ready sets never exceed it are
  /// placed exactly as without it. 0: no window.
  int32_t candidateWindow = 32;
  /// Per-device memory capacities for the environment's memory estimate
  /// (PlacementEnvironment::setMemoryCapacities), or null for none.
  const std::vector<double> *memoryCapacities = nullptr;
  /// ModelConfig::lookahead: the visits (rolloutRunVisits() per completion,
  /// Heuristics.h) the completions of one run may cost, the two heuristic
  /// placements that pick the completing rule included: 2 + n (D - 1)
  /// runs. A graph whose runs cost more gets none: the column reads 0 and
  /// the prior goes to the better rule's device (Lookahead::followRule),
  /// if its two runs fit. 0: none at all (imitation).
  int64_t lookaheadVisits = kLookaheadVisitBudget;
  /// Past the budget (where the prior follows the better rule): > 0 adds
  /// bounded-horizon completions (Horizon.h) of this many nodes, and the
  /// prior goes to the device they estimate shortest when that is shorter
  /// than the rule's device's estimate (the column still reads 0). 0 (the
  /// default): none. An experiment (docs/Method.md section 11): mixed on
  /// the held-out real programs, so off by default.
  int32_t horizonNodes = 0;
};

/// Judges placements on `numDevices` identical devices: the reference
/// makespan and, given per-device capacities on a graph with output bytes,
/// the bytes by which the simulated peaks exceed them (summed over the
/// devices; SimulatorOptions::trackMemory says what is live when). Without
/// capacities only the makespan is measured.
class PlacementJudge {
public:
  /// `capacities`: numDevices values (infinity: unlimited), or empty.
  PlacementJudge(const Graph &graph, int32_t numDevices,
                 const std::vector<double> &capacities);
  /// The makespan of `assignment`; overflowBytes() is then its overflow.
  double run(ArrayView<DeviceId> assignment);
  double overflowBytes() const { return overflow_; }
  /// The sum over devices of (peak - capacity) / capacity where positive
  /// (a capacity below one byte counts as one byte).
  double relativeOverflow() const { return relative_; }
  /// Whether overflowBytes() is measured (capacities and output bytes).
  bool tracksMemory() const { return !capacities_.empty(); }

private:
  std::vector<double> capacities_; // empty when memory is not judged
  Simulator simulator_;
  double overflow_ = 0;
  double relative_ = 0;
};

/// Optional per-step distributions (for LearnedPolicy::trace).
struct StepTrace {
  std::vector<NodeId> candidates;
  std::vector<double> candidateProbability;
  NodeId node = -1;
  std::vector<double> deviceProbability;
  DeviceId device = -1;
};

/// Runs episodes; keeps its scratch space between them.
class RolloutEngine {
public:
  /// Places every node of `graph` on `numDevices` devices; the assignment
  /// is env.assignment() afterwards. `record` and `trace` may be null.
  void run(PlacementEnvironment &env, const Graph &graph, int32_t numDevices,
           StartEstimate estimate, const ScorerWeights &weights,
           const NodeTables &tables, const RolloutOptions &options,
           Random &random, EpisodeRecord *record,
           std::vector<StepTrace> *trace);

private:
  int32_t chooseAction(const float *scores, int32_t count, bool sample,
                       double temperature, Random &random);
  void scoreCandidates(ArrayView<NodeId> candidates,
                       const ScorerWeights &weights, const NodeTables &tables);
  void scoreDevices(NodeId v, int32_t numDevices, const ScorerWeights &w,
                    const NodeTables &tables);
  /// SEL at `step`: the index of the chosen candidate (0 without a choice),
  /// recorded in `record` and `stepTrace` when they are not null.
  int32_t selectNode(const PlacementEnvironment &env, int32_t step,
                     ArrayView<NodeId> candidates,
                     const ScorerWeights &weights, const NodeTables &tables,
                     const RolloutOptions &options, Random &random,
                     EpisodeRecord *record, StepTrace *stepTrace);
  /// PLC at `step`: the device chosen for `v` (0 without a choice).
  DeviceId placeNode(PlacementEnvironment &env, int32_t step, NodeId v,
                     int32_t numDevices, const ScorerWeights &weights,
                     const NodeTables &tables, const RolloutOptions &options,
                     Random &random, EpisodeRecord *record,
                     StepTrace *stepTrace);

  /// PLC's standardised device sums (deviceSumsStd_) and one device's
  /// network score (no priors) from them and deviceFeatures_.
  void standardizeDeviceSums(int32_t numDevices, const ScorerWeights &w);
  float deviceScore(const float *nodeTerm, int32_t d, const ScorerWeights &w);
  /// The argmax over devices of the network's score plus `priors` (added
  /// in placeNode's order), scoring only the devices that PLC's Lipschitz
  /// bound (ScorerWeights) cannot rule out; the same device as scoring all
  /// of them (DeviceBound.cpp).
  DeviceId bestDeviceBounded(NodeId v, int32_t numDevices,
                             const ScorerWeights &w, const NodeTables &tables,
                             DeviceId heuristicDevice, DeviceId joinDevice,
                             DeviceId lookaheadDevice);
  /// The score placeNode adds to the network's for device d: its priors,
  /// in placeNode's order.
  float withPriors(float score, DeviceId d, const ScorerWeights &w,
                   DeviceId heuristicDevice, DeviceId joinDevice,
                   DeviceId lookaheadDevice) const;

  /// ModelConfig::lookahead's completions for `v`: fills
  /// lookaheadMakespans_ and returns the device with the shortest (the
  /// lowest id among equals).
  DeviceId lookAhead(const PlacementEnvironment &env, NodeId v);
  void setUpLookahead(const Graph &graph, int32_t numDevices,
                      const ScorerWeights &weights,
                      const RolloutOptions &options);
  /// Keeps the chosen device's completion, which the next step's
  /// completions contain (see lookAhead).
  void keepCompletion(DeviceId device);

  /// One run's completions (ModelConfig::lookahead).
  struct Lookahead {
    bool on = false;
    // Past the budget (on == false) with a model that reads completions:
    // the lookahead prior goes to the device the better rule picks for the
    // node at this step (setUpLookahead).
    bool followRule = false;
    // Past the budget with horizonNodes > 0: bounded-horizon completions
    // (Horizon.h) instead of the rule.
    bool horizon = false;
    bool joinAware = false; // the completing (or followed) rule
    std::unique_ptr<Simulator> simulator;
    std::vector<double> bottom; // computeBottomLevels
    std::vector<DeviceId> forced;
    std::vector<std::vector<DeviceId>> completions; // [D]: this step's
    // The chosen device's completion at the last step (empty when it had
    // none) and its makespan.
    std::vector<DeviceId> kept;
    double keptMakespan = 0;
  };
  Lookahead lookahead_;
  HorizonLookahead horizon_;
  ArrayView<NodeId> stepCandidates_;       // what SEL saw at this step
  std::vector<double> lookaheadMakespans_; // [D]

  // Scratch.
  std::vector<double> rawCandidateFeatures_; // [C][5]
  std::vector<float> candidateFeatures_;     // [C][5], standardised
  std::vector<double> columnScratch_;
  std::vector<float> bottomMean_, bottomScale_, topMean_, topScale_;
  std::vector<float> hidden_, preActivation_;
  std::vector<float> scores_;
  std::vector<double> rawDeviceFeatures_; // [D][kNumDeviceFeatures]
  std::vector<float> deviceFeatures_;     // [D][F], standardised
  std::vector<double> pressure_;          // [D], memory pressure
  std::vector<double> startScratch_;      // [D], est of a SEL tie
  std::vector<char> overflows_;           // [D] with memoryColumn, or empty
  std::vector<double> deviceSums_;        // [D][S]
  std::vector<float> deviceSumsStd_;      // [D][S]
  std::vector<double> probabilities_;
  std::vector<float> scaledScores_;
  std::vector<float> candidateRows_;  // [C][3H or H]: SEL GEMM inputs
  CandidateOrder candidateOrder_;        // the ready set by bottom level
  std::vector<NodeId> windowCandidates_; // the window, readiness order
  std::vector<float> candidatePre_;   // [C][K]
  /// The bound's terms for devices d and r: the sum rows' (with the
  /// network's weights), and the hidden layers' Euclidean distance.
  double sumDistance(DeviceId d, DeviceId r, const ScorerWeights &w) const;
  double hiddenDistance(DeviceId d, DeviceId r, const ScorerWeights &w);
  /// PLC's hidden layer for device d: leaky(W z_d + b), [H].
  void deviceHidden(int32_t d, const ScorerWeights &w, std::vector<float> &out);
  std::vector<char> scored_; // [D]: bestDeviceBounded's
  std::vector<float> bestHidden_, otherHidden_;
  DeviceId hiddenOf_ = -1; // whose row bestHidden_ holds
  RolloutStats stats_;

public:
  /// The last run's counts.
  const RolloutStats &stats() const { return stats_; }
};

/// out[k] += sum_j x[j] * weight[j * outSize + k] (a vector times an
/// [in][out] matrix), vectorised for AVX2 where the CPU has it.
void accumulateVectorMatrix(const float *x, int32_t inSize,
                            const float *weight, int32_t outSize, float *out);

} // namespace doppler::placement::learning

#endif // DOPPLER_LIB_PLACEMENT_LEARNING_ROLLOUT_H
