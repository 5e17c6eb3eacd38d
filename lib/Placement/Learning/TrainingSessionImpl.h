//===- TrainingSessionImpl.h - TrainingSession's hidden state ---*- C++ -*-===//
//
// Internal to the learning library: the session's state, defined by
// Trainer.cpp (set-up and the public API), TrainerEpisodes.cpp,
// TrainerEvaluation.cpp, TrainerCheckpoint.cpp and TrainerLog.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_LIB_PLACEMENT_LEARNING_TRAININGSESSIONIMPL_H
#define DOPPLER_LIB_PLACEMENT_LEARNING_TRAININGSESSIONIMPL_H

#include "Doppler/Placement/Learning/Trainer.h"

#include "PolicyNetwork.h"
#include "Random.h"
#include "Rollout.h"

#include "Doppler/Placement/Environment.h"
#include "Doppler/Placement/Simulator.h"
#include "Doppler/Support/ErrorString.h"
#include "Doppler/Support/Stopwatch.h"

#include <chrono>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace doppler::placement {

namespace learning::detail {

using Clock = std::chrono::steady_clock;

using doppler::setError;

using doppler::secondsSince;

} // namespace learning::detail

class TrainingSession::Impl {
public:
  bool initialize(std::string *error);
  std::optional<EpisodeStats> runEpisode(std::string *error);
  std::optional<EvaluationStats> evaluate(std::string *error);
  bool saveCheckpoint(std::string *error);
  bool saveModel(const std::string &path, std::string *error);
  bool finished() const {
    return stageIndex_ >= static_cast<int32_t>(options.stages.size());
  }
  /// Whether costs came from the real-rl oracle after `afterEpisodes`
  /// episodes: the stage that ran the last of them is real-rl (before any
  /// episode, no).
  bool measuredAfter(int64_t afterEpisodes) const {
    int64_t end = 0;
    for (const StageOptions &stage : options.stages) {
      end += stage.episodes;
      if (afterEpisodes > 0 && afterEpisodes <= end)
        return stage.stage == TrainingStage::RealRL;
    }
    return false;
  }
  /// Whether costs come from the real-rl oracle now.
  bool measuring() const { return measuredAfter(episode); }
  /// Where the best placements' costs come from (they restart when it
  /// changes).
  std::string bestCostSource() const {
    return measuring() ? options.realOracle->costSource() : "simulator";
  }
  std::vector<BestPlacement> bestPlacements() const {
    std::vector<BestPlacement> out;
    const std::string source = bestCostSource();
    for (size_t q = 0; q < pairs_.size(); ++q)
      if (!bestPlacement_[q].empty())
        out.push_back({options.graphs[pairs_[q].graph].name,
                       pairs_[q].devices, bestCost_[q], source,
                       bestPlacement_[q]});
    return out;
  }

  TrainerOptions options;
  learning::DualPolicyNetwork network{nullptr};
  learning::DualPolicyNetwork best{nullptr};
  int64_t episode = 0;
  int64_t totalEpisodes = 0;
  std::optional<EvaluationStats> lastEvaluation, bestEvaluation;

private:
  struct Pair {
    int32_t graph;
    int32_t devices;
  };

  bool restore(std::string *error);
  void skipEmptyStages();
  /// ModelConfig::joinFeature, when reinforcement follows imitation: start
  /// RL from whichever join-aware prior gives the best greedy placements.
  /// Sets `prior` to the first of `candidates` whose greedy placements
  /// score best (the evaluation pairs), and logs what each scored.
  void choosePriorStart(torch::Tensor &prior, const std::string &name,
                        const std::vector<float> &candidates);
  /// The greedy policy on the evaluation pairs against the critical-path
  /// heuristic, simulated or measured by the real-rl oracle (nullopt and
  /// `error` when it fails).
  std::optional<EvaluationStats> evaluateGreedy(bool measured,
                                                std::string *error);
  std::string fingerprint() const;
  learning::PlacementJudge &judgeFor(int32_t pair);
  /// The simulated cost of `placement` on `pair`: its makespan, times the
  /// overflow penalty on memory-tight pairs (TrainerOptions::
  /// memoryTightFraction); `overflow`, when given, gets the relative
  /// overflow (0 on other pairs).
  double simulatedCost(int32_t pair, ArrayView<DeviceId> placement,
                       double *overflow = nullptr);
  /// Draws the memory-tight pairs and their capacities.
  void chooseMemoryCapacities();
  double criticalPathMakespan(int32_t pair);
  /// The join-aware heuristic's makespan, simulated; cached.
  double joinAwareMakespan(int32_t pair);
  /// min(critical path, join-aware), simulated.
  double betterHeuristicMakespan(int32_t pair);
  /// The greedy policy's placement of `pair`.
  std::vector<DeviceId> greedyPlacement(int32_t pair);
  /// Cost of `placement` on `pair` by the simulator or the real-rl oracle.
  std::optional<double> placementCost(int32_t pair,
                                      ArrayView<DeviceId> placement,
                                      bool measured, std::string *error);
  /// The critical-path heuristic's measured cost (measured once per pair).
  std::optional<double> measuredCriticalPath(int32_t pair, std::string *error);
  // The pieces of runEpisode, in order.
  /// Restarts the best placements when the cost source changes, picks the
  /// join-aware prior's start after imitation, sets the learning rates.
  void beginStageEpisode(const StageOptions &stage, double learningRate);
  /// The running average of earlier costs of `pair` in this stage (seeded
  /// with the critical-path heuristic's cost with criticalPathBaseline),
  /// then counts `cost` in it.
  std::optional<double> runningAverage(int32_t pair, double cost, bool measured,
                                       std::string *error);
  /// The episode's loss on record_; its gradients go into the optimizer
  /// (a step every episodesPerUpdate episodes).
  learning::LossTerms learnFromEpisode(const StageOptions &stage,
                                       const learning::GraphTensors &tensors,
                                       const learning::EncodedGraph &encoded,
                                       int32_t steps, double reward,
                                       bool imitation, bool imitateJoin);
  /// Keeps the placement just made if it is the cheapest yet for `pair`.
  void rememberIfBest(int32_t pair, double cost);
  EpisodeStats episodeStats(const StageOptions &stage, int32_t pair,
                            double cost, double average, double reward,
                            const learning::LossTerms &terms,
                            double learningRate, double epsilon) const;
  /// Counts the episode, logs it, evaluates and checkpoints when due.
  bool finishEpisode(EpisodeStats &stats,
                     learning::detail::Clock::time_point episodeStart,
                     std::string *error);
  void writeLog(const EpisodeStats &stats);
  void drawProgress(const EpisodeStats &stats);

  std::vector<Pair> pairs_;
  std::vector<learning::GraphTensors> tensors_;
  std::vector<std::unique_ptr<learning::PlacementJudge>> judges_;
  /// Per pair: per-device capacities on memory-tight pairs, else empty.
  std::vector<std::vector<double>> capacities_;
  std::vector<double> criticalPath_;
  std::vector<double> joinAware_;
  std::vector<double> measuredCriticalPath_; // < 0: not measured yet
  std::vector<int32_t> evaluationPairs_;
  std::unique_ptr<torch::optim::Adam> optimizer_;
  /// Adam over the network; with priorLearningRateScale != 1 the prior
  /// scalars form a second parameter group.
  void makeOptimizer();
  PlacementEnvironment environment_;
  learning::RolloutEngine engine_;
  learning::EpisodeRecord record_;
  learning::Random random_;
  int32_t stageIndex_ = 0;
  int64_t stageEpisode_ = 0;
  std::vector<double> runningSum_, runningCount_;
  // The cheapest placement seen so far per pair (any stage).
  std::vector<double> bestCost_;
  std::vector<std::vector<DeviceId>> bestPlacement_;
  double bestScore_ = std::numeric_limits<double>::infinity();
  bool haveBest_ = false;
  double previousSeconds_ = 0; // from before a resume
  learning::detail::Clock::time_point start_ = learning::detail::Clock::now();
  std::ofstream log_;
  bool progressBar_ = false;
  learning::detail::Clock::time_point lastDraw_;
};

} // namespace doppler::placement

#endif // DOPPLER_LIB_PLACEMENT_LEARNING_TRAININGSESSIONIMPL_H
