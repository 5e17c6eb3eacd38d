//===- Trainer.h - Training the learned dual policy -------------*- C++ -*-===//
//
// The three training stages of shared/METHOD.md section 6:
//
//   il       imitation of the critical-path heuristic: SEL raises the
//            log-probability of the candidates with the largest b-level,
//            PLC that of the devices with the smallest est; actions are
//            explored epsilon-greedily, epsilon decays linearly to 0; an
//            entropy bonus.
//   sim-rl   REINFORCE on the simulator's makespan: the reward of an
//            episode is (running average of earlier costs - this cost),
//            given at the last step and discounted back with gamma.
//   real-rl  the same with the cost measured by a CostOracle (the runtime,
//            through an adapter in the tool).
//
// Deviations from the reference, each for a reason:
//  - The reward is divided by the running average, so graphs whose costs
//    differ by orders of magnitude weigh alike when one policy trains on
//    many; Adam makes the one-graph case nearly insensitive to the scale.
//    Running averages are kept per (graph, device count) and per stage.
//  - The learning rate really decays (the reference sets an attribute Adam
//    ignores).
//  - Episodes run without autograd, recording their decisions; the loss is
//    then computed for all steps in one batched pass. This is the same
//    gradient (the parameters do not change within an episode), an order
//    of magnitude faster.
//
// Determinism: every random draw comes from one seeded generator whose
// state is checkpointed; LibTorch runs on one thread. The same options and
// seed give the same model, and a run resumed from a checkpoint continues
// exactly as the uninterrupted run would.
//
// No LibTorch includes; every function is noexcept.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_PLACEMENT_LEARNING_TRAINER_H
#define DOPPLER_PLACEMENT_LEARNING_TRAINER_H

#include "Doppler/Placement/Graph.h"
#include "Doppler/Placement/Learning/DualPolicy.h"
#include "Doppler/Placement/Learning/Export.h"
#include "Doppler/Placement/Simulator.h"

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace doppler::placement {

/// Measures the cost (e.g. wall time) of running a placed graph. The
/// real-rl stage calls it once per episode; it must not throw.
struct DOPPLER_LEARNING_API CostOracle {
  virtual ~CostOracle();
  /// The cost of `assignment` (device per node), or std::nullopt with a
  /// reason in `error`.
  virtual std::optional<double> measure(const Graph &graph,
                                        ArrayView<DeviceId> assignment,
                                        std::string *error) = 0;
  /// Where the cost comes from, for the log's "cost_source" (e.g.
  /// "simulator", "runtime-cpu"): real-rl costs may be simulated or measured.
  virtual const char *costSource() const noexcept { return "oracle"; }
};

/// An oracle backed by the simulator (any of its modes), for tests and for
/// real-rl without a runtime. It keeps one simulator per graph and device
/// count; `numDevices` is fixed at construction.
class DOPPLER_LEARNING_API SimulatorCostOracle : public CostOracle {
public:
  explicit SimulatorCostOracle(int32_t numDevices,
                               SimulatorOptions options = {});
  ~SimulatorCostOracle() override;
  std::optional<double> measure(const Graph &graph,
                                ArrayView<DeviceId> assignment,
                                std::string *error) override;
  const char *costSource() const noexcept override;
  /// How many times measure() ran.
  int64_t calls() const { return calls_; }

private:
  int32_t numDevices_;
  SimulatorOptions options_;
  const Graph *lastGraph_ = nullptr;
  std::unique_ptr<Simulator> simulator_;
  int64_t calls_ = 0;
};

enum class TrainingStage : int32_t { Imitation = 0, SimulationRL = 1, RealRL = 2 };

/// "il", "sim-rl", "real-rl".
DOPPLER_LEARNING_API const char *stageName(TrainingStage stage) noexcept;

/// For a process whose main work is training: keeps freed memory in the
/// heap instead of handing it back to the OS. An episode allocates and
/// frees the same few-MB tensors every time, and glibc's defaults unmap
/// and re-fault them (10% of a 200-node episode, doppler-bench-learning).
/// Changes no result. Global to the process, so the library never calls
/// it itself: doppler-train and the benchmarks do.
DOPPLER_LEARNING_API void keepFreedMemoryForTraining() noexcept;
DOPPLER_LEARNING_API std::optional<TrainingStage>
parseStage(const std::string &name) noexcept;

struct DOPPLER_LEARNING_API StageOptions {
  TrainingStage stage = TrainingStage::Imitation;
  int64_t episodes = 0;
  double learningRate = 1e-3;    ///< decays linearly to 0 over the stage
  double epsilon = 1.0;          ///< decays linearly to 0 over the stage
  double entropyWeight = 1e-3;
  double imitationWeight = 1.0;
  double policyGradientWeight = 0.0;
  /// Average the gradients of this many consecutive episodes into one
  /// optimiser step (1: a step per episode, as the reference). Larger
  /// values cut the variance of REINFORCE updates.
  int32_t episodesPerUpdate = 1;

  /// The reference's settings for `stage` (METHOD section 6).
  static StageOptions defaults(TrainingStage stage, int64_t episodes) noexcept;
};

struct TrainingGraph {
  std::string name;
  Graph graph;
};

struct TrainerOptions {
  /// One graph: per-graph training as in the paper. Several: one policy for
  /// all of them (each episode draws a graph and a device count).
  std::vector<TrainingGraph> graphs;
  std::vector<int32_t> deviceCounts = {4};
  std::vector<StageOptions> stages;

  /// Architecture of a new model (ignored with initModelPath or resume).
  ModelConfig model = ModelConfig::slim();
  /// Start from this model instead of a fresh one.
  std::string initModelPath;
  uint64_t seed = 0;
  double gamma = 0.99;
  /// Explore by sampling the policy's distributions (with probability
  /// 1 - epsilon) instead of taking its argmax, as the reference does.
  bool sampleActions = false;
  /// Count the critical-path heuristic's cost as one earlier cost of every
  /// (graph, device count) pair, so that rewards are meaningful from a
  /// pair's first episode on (off: the reference, whose first reward is 0).
  bool criticalPathBaseline = false;
  /// Imitation episodes imitate, on each (graph, device count) pair, the
  /// better of the critical-path and join-aware heuristics there (by the
  /// simulator): PLC's target is the join-aware device on pairs where
  /// join-aware wins, with the join prior part of rollout and loss on every
  /// pair, so that the network learns from the graph when to trust which
  /// prior. Needs ModelConfig::joinFeature. Off: critical path everywhere,
  /// the join prior left out of imitation.
  bool imitateBetterHeuristic = false;

  /// Where the final model goes (written atomically). Empty: not written.
  std::string outputPath;
  /// Checkpoint file; empty: outputPath + ".ckpt".
  std::string checkpointPath;
  /// Write a checkpoint every this many episodes (0: only at the end).
  int64_t checkpointEvery = 500;
  /// Continue from checkpointPath.
  bool resume = false;

  /// JSON-lines log, one line per episode; empty: none.
  std::string logPath;
  /// A progress bar on stderr (only drawn when stderr is a terminal).
  bool progress = true;

  /// Every this many episodes (and at the end) the greedy policy is
  /// evaluated on up to evaluationPairs (graph, device count) pairs; with
  /// keepBest the best evaluated parameters are the output. 0: never.
  /// Costs are simulated, and measured by realOracle once a real-rl stage
  /// has run an episode; then only measured evaluations compete.
  int64_t evaluateEvery = 100;
  int32_t evaluationPairs = 64;
  bool keepBest = true;
  /// How the best evaluation is chosen: the smallest mean over pairs of
  /// log(greedy / critical path) (for a model with the join feature, on the
  /// simulator: log(greedy / the better of critical path and join-aware)),
  /// with regressions (ratio > 1) counted
  /// `regressionWeight` times. 1: the geometric-mean ratio; larger values
  /// prefer policies that rarely lose to the heuristic.
  double regressionWeight = 1.0;
  /// The heuristic priors' (selPrior, plcPrior, joinPrior) learning rate in
  /// RL stages, as a multiple of the stage's. Adam moves a scalar by about its
  /// learning rate per update, so at 1 a few hundred RL updates cannot
  /// undo an imitated prior of ~8; a larger factor lets RL decide how far
  /// to trust each heuristic (per-graph training).
  double priorLearningRateScale = 1.0;

  /// Memory-tight training (for models with ModelConfig::memoryFeature; the
  /// others train on the same costs without seeing memory). This share of
  /// the (graph, device count) pairs with 2 or more devices on graphs with
  /// output bytes, drawn with the seed, gets a memory capacity per device:
  /// (1 + U[0, 0.1]) times the smallest peak that round robin, critical
  /// path, join-aware or HEFT reach on their busiest device (simulated), so
  /// that fitting is possible but not what the makespan heuristics do. The
  /// rollouts see the capacities, and every simulated cost of such a pair
  /// (rewards, evaluations, the critical-path baseline) is the makespan
  /// times 1 + memoryOverflowWeight x sum over devices of (peak - capacity)
  /// / capacity where positive. Real-rl costs are the oracle's.
  double memoryTightFraction = 0;
  double memoryOverflowWeight = 2.0;

  /// Cost of real-rl episodes; required when a real-rl stage is present.
  CostOracle *realOracle = nullptr;
};

struct EpisodeStats {
  int64_t episode = 0;      ///< over all stages, from 0
  int64_t stageEpisode = 0; ///< within its stage
  TrainingStage stage = TrainingStage::Imitation;
  std::string graph;
  int32_t devices = 0;
  double makespan = 0;
  double runningAverage = 0; ///< of earlier costs (this pair, this stage)
  double reward = 0;         ///< relative: (average - cost) / average
  double loss = 0;
  double imitationLoss = 0;
  double policyLoss = 0;
  double entropy = 0;        ///< mean per decision
  double selectionMatch = 0; ///< share of SEL choices in the teacher's set
  double placementMatch = 0; ///< share of PLC choices in the teacher's set
  double learningRate = 0;
  double epsilon = 0;
  double seconds = 0;        ///< wall time of this episode
  /// The heuristic priors after this episode's update (ModelConfig::
  /// heuristicPrior / joinFeature; NaN where the model has none).
  double selectionPrior = std::numeric_limits<double>::quiet_NaN();
  double placementPrior = std::numeric_limits<double>::quiet_NaN();
  double joinPrior = std::numeric_limits<double>::quiet_NaN();
  double memoryPrior = std::numeric_limits<double>::quiet_NaN();
  double lookaheadPrior = std::numeric_limits<double>::quiet_NaN();
  /// On a memory-tight pair: the placement's sum over devices of (peak -
  /// capacity) / capacity where positive (0: it fits); NaN on other pairs.
  double memoryOverflow = std::numeric_limits<double>::quiet_NaN();
};

struct EvaluationStats {
  int64_t episode = 0;
  /// Geometric mean over the evaluated pairs of greedy makespan divided by
  /// the critical-path heuristic's makespan (< 1: better than it).
  double ratioToCriticalPath = 0;
  /// The same against the better of the critical-path and join-aware
  /// heuristics on each pair (simulated; equal to ratioToCriticalPath for
  /// measured evaluations). Models with the join feature are selected by
  /// it. Not kept in checkpoints (0 in a resumed run's restored best).
  double ratioToBetterHeuristic = 0;
  /// Pairs where the greedy makespan is <= the heuristic's, as a fraction.
  double noWorseFraction = 0;
  /// What the best evaluation minimises (TrainerOptions::regressionWeight).
  double selectionScore = 0;
  int32_t pairs = 0;
  bool best = false;
  /// "simulator", or the real-rl oracle's CostOracle::costSource() for
  /// evaluations after a real-rl stage has run.
  std::string costSource = "simulator";
};

/// The cheapest placement the training episodes of one (graph, device
/// count) pair produced: with per-graph training, the search result the
/// paper reports besides the policy. Once a real-rl stage has run, only its
/// measured costs count (the simulator's are in other units).
struct BestPlacement {
  std::string graph;
  int32_t devices = 0;
  double makespan = 0;
  /// "simulator", or the real-rl oracle's CostOracle::costSource().
  std::string costSource;
  std::vector<DeviceId> assignment;
};

/// A training run, one episode at a time.
class DOPPLER_LEARNING_API TrainingSession {
public:
  class Impl;

  ~TrainingSession();
  /// Validates the options, builds or loads the model, or (with resume)
  /// restores everything from the checkpoint.
  static std::unique_ptr<TrainingSession>
  create(TrainerOptions options, std::string *error = nullptr) noexcept;

  bool finished() const noexcept;
  int64_t episode() const noexcept;
  int64_t totalEpisodes() const noexcept;

  /// Runs the next episode (log line, checkpoint and evaluation included
  /// when due).
  std::optional<EpisodeStats> runEpisode(std::string *error = nullptr) noexcept;
  /// Evaluates the current policy now (see TrainerOptions::evaluateEvery).
  std::optional<EvaluationStats> evaluate(std::string *error = nullptr) noexcept;

  bool saveCheckpoint(std::string *error = nullptr) noexcept;
  /// Writes the output model (the best evaluated parameters with keepBest,
  /// else the current ones) to `path` (empty: options' outputPath).
  bool saveModel(const std::string &path = {},
                 std::string *error = nullptr) noexcept;
  /// The current parameters as a policy (a copy).
  std::unique_ptr<LearnedPolicy> currentPolicy(std::string *error = nullptr)
      const noexcept;
  const std::optional<EvaluationStats> &lastEvaluation() const noexcept;
  /// The evaluation whose parameters saveModel() writes with keepBest.
  const std::optional<EvaluationStats> &bestEvaluation() const noexcept;
  /// Per pair that has run an episode: the cheapest placement seen.
  std::vector<BestPlacement> bestPlacements() const noexcept;

private:
  explicit TrainingSession(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

struct TrainingSummary {
  int64_t episodes = 0;
  double seconds = 0;
  std::optional<EvaluationStats> finalEvaluation;
  std::optional<EvaluationStats> bestEvaluation;
  std::vector<BestPlacement> bestPlacements;
};

/// The least, over the round-robin, critical-path, join-aware and HEFT
/// placements of `graph` on `numDevices` devices, of the simulated peak on
/// the busiest device (SimulatorOptions::trackMemory): a capacity that some
/// heuristic fits while the others may not. 0 without output bytes. What
/// memory-tight training (TrainerOptions::memoryTightFraction) and
/// doppler-train --compare --capacity-factor scale their capacities from.
DOPPLER_LEARNING_API double leastHeuristicPeak(const Graph &graph,
                                               int32_t numDevices);

/// Runs a whole session: every episode, then the final checkpoint and the
/// output model.
DOPPLER_LEARNING_API std::optional<TrainingSummary>
trainPolicy(TrainerOptions options, std::string *error = nullptr) noexcept;

} // namespace doppler::placement

#endif // DOPPLER_PLACEMENT_LEARNING_TRAINER_H
