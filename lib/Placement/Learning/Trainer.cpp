//===- Trainer.cpp - Training the learned dual policy ---------------------===//

#include "Doppler/Placement/Learning/Trainer.h"

#include "PolicyImpl.h"
#include "PolicyNetwork.h"
#include "Random.h"
#include "Rollout.h"

#include "Doppler/Placement/Heuristics.h"
#include "Doppler/Placement/Simulator.h"

#include <nlohmann/json.hpp>

#include <unistd.h>
#if defined(__linux__)
#include <malloc.h>
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>

using namespace doppler::placement;
using namespace doppler::placement::learning;

namespace {

using Clock = std::chrono::steady_clock;

void setError(std::string *error, std::string message) {
  if (error)
    *error = std::move(message);
}

/// Archive keys cannot hold dots.
std::string mangleName(const std::string &name) {
  std::string out = name;
  std::replace(out.begin(), out.end(), '.', '_');
  return out;
}

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

int64_t bitsOf(uint64_t value) {
  int64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}
uint64_t valueOf(int64_t bits) {
  uint64_t value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

} // namespace

//===----------------------------------------------------------------------===//
// Cost oracles and stage options.
//===----------------------------------------------------------------------===//

CostOracle::~CostOracle() = default;

SimulatorCostOracle::SimulatorCostOracle(int32_t numDevices,
                                         SimulatorOptions options)
    : numDevices_(numDevices), options_(options) {}
SimulatorCostOracle::~SimulatorCostOracle() = default;

std::optional<double>
SimulatorCostOracle::measure(const Graph &graph, ArrayView<DeviceId> assignment,
                             std::string *error) {
  // Extra devices stay idle, so one oracle serves every smaller count.
  if (!validateAssignment(graph, numDevices_, assignment, error))
    return std::nullopt;
  if (lastGraph_ != &graph || !simulator_) {
    System system = System::uniform(numDevices_);
    std::optional<Simulator> created =
        Simulator::create(graph, system, options_, error);
    if (!created)
      return std::nullopt;
    simulator_ = std::make_unique<Simulator>(std::move(*created));
    lastGraph_ = &graph;
  }
  ++calls_;
  double cost = simulator_->run(assignment);
  if (!std::isfinite(cost)) {
    setError(error, simulator_->schedule().describeFailure());
    return std::nullopt;
  }
  return cost;
}

const char *SimulatorCostOracle::costSource() const noexcept {
  return options_.linkContention ? "simulator-contention" : "simulator";
}

void doppler::placement::keepFreedMemoryForTraining() noexcept {
#if defined(__GLIBC__)
  // Blocks below 256 MiB come from the heap, and up to 1 GiB of free heap
  // stays mapped.
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

const char *doppler::placement::stageName(TrainingStage stage) noexcept {
  switch (stage) {
  case TrainingStage::Imitation:
    return "il";
  case TrainingStage::SimulationRL:
    return "sim-rl";
  case TrainingStage::RealRL:
    return "real-rl";
  }
  return "?";
}

std::optional<TrainingStage>
doppler::placement::parseStage(const std::string &name) noexcept {
  if (name == "il")
    return TrainingStage::Imitation;
  if (name == "sim-rl")
    return TrainingStage::SimulationRL;
  if (name == "real-rl")
    return TrainingStage::RealRL;
  return std::nullopt;
}

StageOptions StageOptions::defaults(TrainingStage stage,
                                    int64_t episodes) noexcept {
  StageOptions options;
  options.stage = stage;
  options.episodes = episodes;
  if (stage == TrainingStage::Imitation) {
    options.learningRate = 1e-3;
    options.epsilon = 1.0;
    options.entropyWeight = 1e-3;
    options.imitationWeight = 1.0;
    options.policyGradientWeight = 0.0;
  } else {
    options.learningRate = 1e-4;
    options.epsilon = 0.2;
    options.entropyWeight = 0.0;
    options.imitationWeight = 0.0;
    options.policyGradientWeight = 1.0;
  }
  return options;
}

//===----------------------------------------------------------------------===//
// TrainingSession.
//===----------------------------------------------------------------------===//

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
  DualPolicyNetwork network{nullptr};
  DualPolicyNetwork best{nullptr};
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
  void chooseJoinPriorStart();
  /// The greedy policy on the evaluation pairs against the critical-path
  /// heuristic, simulated or measured by the real-rl oracle (nullopt and
  /// `error` when it fails).
  std::optional<EvaluationStats> evaluateGreedy(bool measured,
                                                std::string *error);
  std::string fingerprint() const;
  Simulator &simulatorFor(int32_t pair);
  double criticalPathMakespan(int32_t pair);
  /// The greedy policy's placement of `pair`.
  std::vector<DeviceId> greedyPlacement(int32_t pair);
  /// Cost of `placement` on `pair` by the simulator or the real-rl oracle.
  std::optional<double> placementCost(int32_t pair,
                                      ArrayView<DeviceId> placement,
                                      bool measured, std::string *error);
  /// The critical-path heuristic's measured cost (measured once per pair).
  std::optional<double> measuredCriticalPath(int32_t pair, std::string *error);
  void writeLog(const EpisodeStats &stats);
  void drawProgress(const EpisodeStats &stats);

  std::vector<Pair> pairs_;
  std::vector<GraphTensors> tensors_;
  std::vector<std::unique_ptr<Simulator>> simulators_;
  std::vector<double> criticalPath_;
  std::vector<double> measuredCriticalPath_; // < 0: not measured yet
  std::vector<int32_t> evaluationPairs_;
  std::unique_ptr<torch::optim::Adam> optimizer_;
  /// Adam over the network; with priorLearningRateScale != 1 the prior
  /// scalars form a second parameter group.
  void makeOptimizer();
  PlacementEnvironment environment_;
  RolloutEngine engine_;
  EpisodeRecord record_;
  Random random_;
  int32_t stageIndex_ = 0;
  int64_t stageEpisode_ = 0;
  std::vector<double> runningSum_, runningCount_;
  // The cheapest placement seen so far per pair (any stage).
  std::vector<double> bestCost_;
  std::vector<std::vector<DeviceId>> bestPlacement_;
  double bestScore_ = std::numeric_limits<double>::infinity();
  bool haveBest_ = false;
  double previousSeconds_ = 0; // from before a resume
  Clock::time_point start_ = Clock::now();
  std::ofstream log_;
  bool progressBar_ = false;
  Clock::time_point lastDraw_;
};

bool TrainingSession::Impl::initialize(std::string *error) {
  configureTorchThreads();
  if (options.graphs.empty()) {
    setError(error, "no training graphs");
    return false;
  }
  for (const TrainingGraph &g : options.graphs)
    if (g.graph.numNodes() == 0) {
      setError(error, "training graph '" + g.name + "' has no nodes");
      return false;
    }
  if (options.deviceCounts.empty()) {
    setError(error, "no device counts");
    return false;
  }
  for (int32_t d : options.deviceCounts)
    if (d < 1 || d > 4096) {
      setError(error, "device count " + std::to_string(d) +
                          " is out of range [1, 4096]");
      return false;
    }
  if (options.stages.empty()) {
    setError(error, "no training stages");
    return false;
  }
  for (const StageOptions &s : options.stages) {
    if (s.episodes < 0 || !(s.learningRate >= 0) || !(s.epsilon >= 0) ||
        s.epsilon > 1 || s.episodesPerUpdate < 1) {
      setError(error, std::string("stage ") + stageName(s.stage) +
                          ": episodes and learning rate must be >= 0, "
                          "epsilon in [0, 1] and episodes per update >= 1");
      return false;
    }
    if (s.stage == TrainingStage::RealRL && !options.realOracle) {
      setError(error, "the real-rl stage needs a cost oracle");
      return false;
    }
    totalEpisodes += s.episodes;
  }
  if (!(options.gamma >= 0 && options.gamma <= 1)) {
    setError(error, "gamma must be in [0, 1]");
    return false;
  }
  if (options.checkpointPath.empty() && !options.outputPath.empty())
    options.checkpointPath = options.outputPath + ".ckpt";
  if (options.resume && options.checkpointPath.empty()) {
    setError(error, "resuming needs a checkpoint (or output) path");
    return false;
  }

  for (size_t g = 0; g < options.graphs.size(); ++g)
    for (int32_t d : options.deviceCounts)
      pairs_.push_back({static_cast<int32_t>(g), d});
  for (const TrainingGraph &g : options.graphs)
    tensors_.push_back(buildGraphTensors(g.graph));
  simulators_.resize(pairs_.size());
  criticalPath_.assign(pairs_.size(), -1);
  measuredCriticalPath_.assign(pairs_.size(), -1);
  runningSum_.assign(pairs_.size(), 0);
  bestCost_.assign(pairs_.size(), std::numeric_limits<double>::infinity());
  bestPlacement_.assign(pairs_.size(), {});
  runningCount_.assign(pairs_.size(), 0);
  // Evaluate on evenly spread pairs (all of them when few).
  int32_t wanted = std::max(1, options.evaluationPairs);
  int32_t count = static_cast<int32_t>(pairs_.size());
  for (int32_t i = 0; i < std::min(wanted, count); ++i)
    evaluationPairs_.push_back(
        static_cast<int32_t>(static_cast<int64_t>(i) * count /
                             std::min(wanted, count)));

  random_ = Random(deriveSeed(options.seed, 1));
  if (options.resume) {
    if (!restore(error))
      return false;
  } else {
    if (!options.initModelPath.empty()) {
      torch::serialize::InputArchive archive;
      if (!openArchive(archive, options.initModelPath, error))
        return false;
      std::optional<DualPolicyNetwork> loaded =
          readNetwork(archive, "'" + options.initModelPath + "'", error);
      if (!loaded)
        return false;
      network = std::move(*loaded);
    } else {
      torch::manual_seed(options.seed);
      network = DualPolicyNetwork(options.model);
    }
    makeOptimizer();
  }
  skipEmptyStages();

  if (!options.logPath.empty()) {
    log_.open(options.logPath, options.resume ? std::ios::app : std::ios::trunc);
    if (!log_) {
      setError(error, "cannot write log '" + options.logPath + "': " +
                          std::strerror(errno));
      return false;
    }
  }
  progressBar_ = options.progress && ::isatty(STDERR_FILENO);
  return true;
}

void TrainingSession::Impl::skipEmptyStages() {
  while (!finished() && stageEpisode_ >= options.stages[stageIndex_].episodes) {
    ++stageIndex_;
    stageEpisode_ = 0;
    std::fill(runningSum_.begin(), runningSum_.end(), 0.0);
    std::fill(runningCount_.begin(), runningCount_.end(), 0.0);
  }
}

Simulator &TrainingSession::Impl::simulatorFor(int32_t pair) {
  if (!simulators_[pair])
    simulators_[pair] = std::make_unique<Simulator>(
        options.graphs[pairs_[pair].graph].graph, pairs_[pair].devices);
  return *simulators_[pair];
}

double TrainingSession::Impl::criticalPathMakespan(int32_t pair) {
  if (criticalPath_[pair] < 0) {
    const Pair &p = pairs_[pair];
    std::vector<DeviceId> placement = placeCriticalPath(
        options.graphs[p.graph].graph, p.devices, StartEstimate::EarliestStart);
    criticalPath_[pair] = simulatorFor(pair).run(placement);
  }
  return criticalPath_[pair];
}

std::vector<DeviceId> TrainingSession::Impl::greedyPlacement(int32_t pair) {
  c10::InferenceMode inference;
  const Pair &p = pairs_[pair];
  const Graph &graph = options.graphs[p.graph].graph;
  EncodedGraph encoded = encodeGraph(*network, tensors_[p.graph]);
  RolloutInputs inputs = prepareRollout(*network, encoded, tensors_[p.graph]);
  Random unused(0);
  engine_.run(environment_, graph, p.devices, network->config.startEstimate,
              inputs.weights, inputs.tables, RolloutOptions(), unused, nullptr,
              nullptr);
  ArrayView<DeviceId> placed = environment_.assignment();
  return std::vector<DeviceId>(placed.begin(), placed.end());
}

std::optional<double>
TrainingSession::Impl::placementCost(int32_t pair,
                                     ArrayView<DeviceId> placement,
                                     bool measured, std::string *error) {
  if (!measured)
    return simulatorFor(pair).run(placement);
  std::string reason;
  std::optional<double> cost = options.realOracle->measure(
      options.graphs[pairs_[pair].graph].graph, placement, &reason);
  if (!cost)
    setError(error, "cost oracle failed on '" +
                        options.graphs[pairs_[pair].graph].name +
                        "': " + reason);
  return cost;
}

std::optional<double>
TrainingSession::Impl::measuredCriticalPath(int32_t pair, std::string *error) {
  if (measuredCriticalPath_[pair] < 0) {
    const Pair &p = pairs_[pair];
    std::vector<DeviceId> placement = placeCriticalPath(
        options.graphs[p.graph].graph, p.devices, StartEstimate::EarliestStart);
    std::optional<double> cost =
        placementCost(pair, placement, /*measured=*/true, error);
    if (!cost)
      return std::nullopt;
    measuredCriticalPath_[pair] = *cost;
  }
  return measuredCriticalPath_[pair];
}

std::optional<EpisodeStats>
TrainingSession::Impl::runEpisode(std::string *error) {
  if (finished()) {
    setError(error, "training has finished");
    return std::nullopt;
  }
  Clock::time_point episodeStart = Clock::now();
  const StageOptions &stage = options.stages[stageIndex_];
  const double progress =
      static_cast<double>(stageEpisode_) / static_cast<double>(stage.episodes);
  // Measured and simulated costs are not comparable (units, and what they
  // model): the best placements restart when the cost source changes.
  if (episode > 0 && measuring() != (stage.stage == TrainingStage::RealRL)) {
    std::fill(bestCost_.begin(), bestCost_.end(),
              std::numeric_limits<double>::infinity());
    for (std::vector<DeviceId> &placement : bestPlacement_)
      placement.clear();
  }
  if (network->config.joinFeature && stageEpisode_ == 0 && stageIndex_ > 0 &&
      stage.stage != TrainingStage::Imitation &&
      options.stages[stageIndex_ - 1].stage == TrainingStage::Imitation)
    chooseJoinPriorStart();
  const double learningRate = stage.learningRate * (1 - progress);
  const double epsilon = stage.epsilon * (1 - progress);
  auto &groups = optimizer_->param_groups();
  for (size_t g = 0; g < groups.size(); ++g)
    static_cast<torch::optim::AdamOptions &>(groups[g].options())
        .lr(g == 0 || stage.stage == TrainingStage::Imitation
                ? learningRate
                : learningRate * options.priorLearningRateScale);

  const int32_t pair =
      pairs_.size() == 1
          ? 0
          : static_cast<int32_t>(
                random_.below(static_cast<uint32_t>(pairs_.size())));
  const Pair &p = pairs_[pair];
  const Graph &graph = options.graphs[p.graph].graph;
  const GraphTensors &tensors = tensors_[p.graph];

  network->train();
  EncodedGraph encoded = encodeGraph(*network, tensors);
  RolloutInputs inputs = prepareRollout(*network, encoded, tensors);
  // Imitation episodes leave the join-aware prior out: imitating the
  // critical-path heuristic says nothing about how far to trust the other
  // heuristic (and would teach the network to cancel it), so reinforcement
  // alone sets it, from the start chooseJoinPriorStart() picks.
  const bool imitation = stage.stage == TrainingStage::Imitation;
  if (imitation)
    inputs.weights.joinPrior = 0;
  RolloutOptions rollout;
  rollout.epsilon = epsilon;
  rollout.sample = options.sampleActions;
  engine_.run(environment_, graph, p.devices, network->config.startEstimate,
              inputs.weights, inputs.tables, rollout, random_, &record_,
              nullptr);

  std::optional<double> measuredCost =
      placementCost(pair, environment_.assignment(),
                    stage.stage == TrainingStage::RealRL, error);
  if (!measuredCost)
    return std::nullopt;
  const double cost = *measuredCost;

  // Reward: relative improvement over the running average of earlier
  // costs of this pair in this stage. Optionally the critical-path
  // heuristic's cost counts as one earlier cost, so that the first visit
  // of a pair (frequent when training on many graphs) already has a
  // baseline.
  if (runningCount_[pair] == 0 && options.criticalPathBaseline) {
    double prior = criticalPathMakespan(pair);
    if (stage.stage == TrainingStage::RealRL) {
      std::optional<double> measured = measuredCriticalPath(pair, error);
      if (!measured)
        return std::nullopt;
      prior = *measured;
    }
    runningSum_[pair] = prior;
    runningCount_[pair] = 1;
  }
  const double average =
      runningCount_[pair] > 0 ? runningSum_[pair] / runningCount_[pair] : cost;
  const double reward = average > 0 ? (average - cost) / average : 0.0;
  runningSum_[pair] += cost;
  runningCount_[pair] += 1;

  LossWeights weights;
  weights.imitation = stage.imitationWeight;
  weights.policyGradient = stage.policyGradientWeight;
  weights.entropy = stage.entropyWeight;
  weights.joinPrior = !imitation;
  if (weights.policyGradient != 0) {
    const int32_t steps = graph.numNodes();
    weights.returns.resize(steps);
    double discounted = reward;
    for (int32_t t = steps - 1; t >= 0; --t) {
      weights.returns[t] = discounted;
      discounted *= options.gamma;
    }
  }
  LossTerms terms =
      computeEpisodeLoss(*network, tensors, encoded, record_, weights);
  // Gradients of episodesPerUpdate consecutive episodes are averaged into
  // one Adam step (1: a step per episode, as the reference).
  const int64_t perUpdate = std::max<int32_t>(1, stage.episodesPerUpdate);
  if (terms.total.requires_grad()) {
    (terms.total / static_cast<double>(perUpdate)).backward();
    if ((stageEpisode_ + 1) % perUpdate == 0 ||
        stageEpisode_ + 1 == stage.episodes) {
      optimizer_->step();
      optimizer_->zero_grad();
    }
  }

  EpisodeStats stats;
  stats.episode = episode;
  stats.stageEpisode = stageEpisode_;
  stats.stage = stage.stage;
  stats.graph = options.graphs[p.graph].name;
  stats.devices = p.devices;
  stats.makespan = cost;
  if (network->config.heuristicPrior) {
    stats.selectionPrior = network->selPrior.item<double>();
    stats.placementPrior = network->plcPrior.item<double>();
  }
  if (network->config.joinFeature)
    stats.joinPrior = network->joinPrior.item<double>();
  if (cost < bestCost_[pair]) {
    bestCost_[pair] = cost;
    ArrayView<DeviceId> placed = environment_.assignment();
    bestPlacement_[pair].assign(placed.begin(), placed.end());
  }
  stats.runningAverage = average;
  stats.reward = reward;
  stats.loss = terms.total.item<double>();
  stats.imitationLoss = terms.imitation;
  stats.policyLoss = terms.policy;
  stats.entropy = terms.decisions ? terms.entropy / terms.decisions : 0.0;
  stats.selectionMatch =
      record_.selDecisions
          ? static_cast<double>(record_.selMatches) / record_.selDecisions
          : 1.0;
  stats.placementMatch =
      record_.plcDecisions
          ? static_cast<double>(record_.plcMatches) / record_.plcDecisions
          : 1.0;
  stats.learningRate = learningRate;
  stats.epsilon = epsilon;

  ++episode;
  ++stageEpisode_;
  skipEmptyStages();
  stats.seconds = secondsSince(episodeStart);
  writeLog(stats);
  drawProgress(stats);

  if (((options.evaluateEvery > 0 && episode % options.evaluateEvery == 0) ||
       (finished() && options.evaluateEvery > 0)) &&
      !evaluate(error))
    return std::nullopt;
  if (!options.checkpointPath.empty() &&
      ((options.checkpointEvery > 0 && episode % options.checkpointEvery == 0) ||
       finished())) {
    if (!saveCheckpoint(error))
      return std::nullopt;
  }
  if (finished() && progressBar_)
    std::fputc('\n', stderr);
  return stats;
}

void TrainingSession::Impl::chooseJoinPriorStart() {
  // Imitation never sees the join-aware prior, and the network it trains
  // can overrule any fixed start: with the ffnn graph, 1 seed in 3 started
  // RL where the critical-path choice always won, a plateau RL cannot
  // leave (the join-aware choices pay only when whole joins follow them).
  // So the start is picked by the greedy placements it gives (the
  // evaluation pairs and score of evaluate()): its current value first,
  // then none, then strong.
  const float candidates[] = {network->joinPrior.item<float>(), 0.0f,
                              4 * kInitialPrior, 8 * kInitialPrior};
  double bestScore = std::numeric_limits<double>::infinity();
  float bestValue = candidates[0];
  nlohmann::json tried = nlohmann::json::array();
  for (float value : candidates) {
    {
      torch::NoGradGuard noGrad;
      network->joinPrior.fill_(value);
    }
    // Simulated even before a real-rl stage: a start, not a model choice.
    const double score =
        evaluateGreedy(/*measured=*/false, nullptr)->selectionScore;
    tried.push_back({{"join_prior", value}, {"selection_score", score}});
    if (score < bestScore) {
      bestScore = score;
      bestValue = value;
    }
  }
  torch::NoGradGuard noGrad;
  network->joinPrior.fill_(bestValue);
  if (log_) {
    nlohmann::json line = {{"join_prior_start", bestValue}, {"tried", tried}};
    log_ << line.dump() << "\n";
    log_.flush();
  }
}

std::optional<EvaluationStats>
TrainingSession::Impl::evaluateGreedy(bool measured, std::string *error) {
  double logSum = 0, regressionSum = 0;
  int32_t noWorse = 0;
  for (int32_t pair : evaluationPairs_) {
    std::vector<DeviceId> placement = greedyPlacement(pair);
    std::optional<double> greedy =
        placementCost(pair, placement, measured, error);
    std::optional<double> heuristic =
        measured ? measuredCriticalPath(pair, error)
                 : std::optional<double>(criticalPathMakespan(pair));
    if (!greedy || !heuristic)
      return std::nullopt;
    double logRatio = std::log(*greedy / *heuristic);
    logSum += logRatio;
    regressionSum += std::max(logRatio, 0.0);
    noWorse += logRatio <= 0;
  }
  EvaluationStats stats;
  stats.episode = episode;
  stats.pairs = static_cast<int32_t>(evaluationPairs_.size());
  stats.ratioToCriticalPath = std::exp(logSum / stats.pairs);
  stats.noWorseFraction = static_cast<double>(noWorse) / stats.pairs;
  stats.selectionScore =
      (logSum + (options.regressionWeight - 1) * regressionSum) / stats.pairs;
  stats.costSource =
      measured ? options.realOracle->costSource() : "simulator";
  return stats;
}

std::optional<EvaluationStats>
TrainingSession::Impl::evaluate(std::string *error) {
  // After a real-rl stage has run, the greedy policy is judged by the
  // oracle's costs, and the kept model is chosen among those judgements
  // only (a simulated score says nothing about measured runs).
  const bool measured = measuring();
  if (haveBest_ && bestEvaluation &&
      measuredAfter(bestEvaluation->episode) != measured) {
    bestScore_ = std::numeric_limits<double>::infinity();
    haveBest_ = false;
    bestEvaluation.reset();
  }
  std::optional<EvaluationStats> evaluated = evaluateGreedy(measured, error);
  if (!evaluated)
    return std::nullopt;
  EvaluationStats stats = *evaluated;
  if (stats.selectionScore < bestScore_) {
    bestScore_ = stats.selectionScore;
    if (!best)
      best = DualPolicyNetwork(network->config);
    copyParameters(*network, *best);
    haveBest_ = true;
    stats.best = true;
    bestEvaluation = stats;
  }
  lastEvaluation = stats;
  if (log_) {
    nlohmann::json line = {{"evaluation", stats.episode},
                           {"ratio_to_critical_path", stats.ratioToCriticalPath},
                           {"no_worse_fraction", stats.noWorseFraction},
                           {"selection_score", stats.selectionScore},
                           {"pairs", stats.pairs},
                           {"cost_source", stats.costSource},
                           {"best", stats.best}};
    log_ << line.dump() << "\n";
    log_.flush();
  }
  return stats;
}

void TrainingSession::Impl::writeLog(const EpisodeStats &s) {
  if (!log_)
    return;
  nlohmann::json line = {{"episode", s.episode},
                         {"stage", stageName(s.stage)},
                         {"stage_episode", s.stageEpisode},
                         {"graph", s.graph},
                         {"devices", s.devices},
                         {"makespan", s.makespan},
                         {"cost_source", s.stage == TrainingStage::RealRL
                                             ? options.realOracle->costSource()
                                             : "simulator"},
                         {"running_average", s.runningAverage},
                         {"reward", s.reward},
                         {"loss", s.loss},
                         {"imitation_loss", s.imitationLoss},
                         {"policy_loss", s.policyLoss},
                         {"entropy", s.entropy},
                         {"sel_match", s.selectionMatch},
                         {"plc_match", s.placementMatch},
                         {"lr", s.learningRate},
                         {"epsilon", s.epsilon},
                         {"seconds", s.seconds}};
  if (!std::isnan(s.selectionPrior)) {
    line["sel_prior"] = s.selectionPrior;
    line["plc_prior"] = s.placementPrior;
  }
  if (!std::isnan(s.joinPrior))
    line["join_prior"] = s.joinPrior;
  log_ << line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
       << "\n";
  log_.flush();
}

void TrainingSession::Impl::drawProgress(const EpisodeStats &s) {
  if (!progressBar_)
    return;
  Clock::time_point now = Clock::now();
  if (!finished() && now - lastDraw_ < std::chrono::milliseconds(100))
    return;
  lastDraw_ = now;
  const int width = 30;
  double fraction = totalEpisodes ? static_cast<double>(episode) / totalEpisodes
                                  : 1.0;
  int filled = static_cast<int>(fraction * width);
  double elapsed = previousSeconds_ + secondsSince(start_);
  double remaining = fraction > 0 ? elapsed * (1 - fraction) / fraction : 0;
  std::fprintf(stderr, "\r[%.*s%.*s] %lld/%lld %-7s makespan %.4g  avg %.4g  "
                       "eta %.0fs ",
               filled, "##############################", width - filled,
               "..............................",
               static_cast<long long>(episode),
               static_cast<long long>(totalEpisodes), stageName(s.stage),
               s.makespan, s.runningAverage, remaining);
  std::fflush(stderr);
}

std::string TrainingSession::Impl::fingerprint() const {
  std::string text = "graphs";
  for (const TrainingGraph &g : options.graphs)
    text += " " + g.name + ":" + std::to_string(g.graph.numNodes()) + ":" +
            std::to_string(g.graph.numEdges());
  text += "; devices";
  for (int32_t d : options.deviceCounts)
    text += " " + std::to_string(d);
  text += "; stages";
  for (const StageOptions &s : options.stages)
    text += std::string(" ") + stageName(s.stage) + ":" +
            std::to_string(s.episodes);
  // One parameter group or two: the optimizer state must match.
  if (options.priorLearningRateScale != 1.0)
    text += "; prior-lr-scale " + std::to_string(options.priorLearningRateScale);
  return text;
}

bool TrainingSession::Impl::saveCheckpoint(std::string *error) {
  try {
    torch::serialize::OutputArchive archive;
    // The model keys come first, so a checkpoint also loads as a model.
    writeNetwork(*network, archive);
    torch::serialize::OutputArchive optimizerArchive;
    optimizer_->save(optimizerArchive);
    archive.write("optimizer", optimizerArchive);
    archive.write("trainer_fingerprint", c10::IValue(fingerprint()));
    std::vector<int64_t> state = {stageIndex_, stageEpisode_, episode,
                                  bitsOf(random_.state()), haveBest_ ? 1 : 0};
    archive.write("trainer_state",
                  torch::tensor(state, torch::kInt64));
    std::vector<double> running = runningSum_;
    running.insert(running.end(), runningCount_.begin(), runningCount_.end());
    archive.write("trainer_running", torch::tensor(running, torch::kFloat64));
    std::vector<int64_t> placements;
    for (size_t q = 0; q < pairs_.size(); ++q)
      if (!bestPlacement_[q].empty())
        placements.insert(placements.end(), bestPlacement_[q].begin(),
                          bestPlacement_[q].end());
    archive.write("trainer_best_costs", torch::tensor(bestCost_, torch::kFloat64));
    archive.write("trainer_best_placements",
                  torch::tensor(placements, torch::kInt64));
    std::vector<double> scalars = {
        bestScore_, previousSeconds_ + secondsSince(start_),
        bestEvaluation ? static_cast<double>(bestEvaluation->episode) : -1.0,
        bestEvaluation ? bestEvaluation->ratioToCriticalPath : 0.0,
        bestEvaluation ? bestEvaluation->noWorseFraction : 0.0};
    archive.write("trainer_scalars", torch::tensor(scalars, torch::kFloat64));
    if (haveBest_) {
      torch::serialize::OutputArchive bestArchive;
      writeNetwork(*best, bestArchive);
      archive.write("best", bestArchive);
    }
    // Gradients accumulated towards the next update (episodesPerUpdate).
    torch::serialize::OutputArchive gradients;
    for (const auto &item : network->named_parameters())
      if (item.value().grad().defined())
        gradients.write(mangleName(item.key()), item.value().grad());
    archive.write("gradients", gradients);
    return saveArchiveAtomically(archive, options.checkpointPath, error);
  } catch (const std::exception &e) {
    setError(error, "cannot write checkpoint '" + options.checkpointPath +
                        "': " + describeException(e));
    return false;
  }
}

void TrainingSession::Impl::makeOptimizer() {
  if (options.priorLearningRateScale == 1.0) {
    optimizer_ = std::make_unique<torch::optim::Adam>(
        network->parameters(), torch::optim::AdamOptions(1e-3));
    return;
  }
  std::vector<torch::Tensor> weights, priors;
  for (const auto &item : network->named_parameters())
    (item.key().find("Prior") != std::string::npos ? priors : weights)
        .push_back(item.value());
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(weights);
  groups.emplace_back(priors);
  optimizer_ = std::make_unique<torch::optim::Adam>(
      groups, torch::optim::AdamOptions(1e-3));
}

bool TrainingSession::Impl::restore(std::string *error) {
  const std::string &path = options.checkpointPath;
  torch::serialize::InputArchive archive;
  if (!openArchive(archive, path, error))
    return false;
  c10::IValue stored;
  if (!archive.try_read("trainer_fingerprint", stored) || !stored.isString()) {
    setError(error, "'" + path + "' is not a training checkpoint");
    return false;
  }
  if (stored.toStringRef() != fingerprint()) {
    setError(error, "checkpoint '" + path +
                        "' was written for a different training setup (" +
                        stored.toStringRef() + "; now " + fingerprint() + ")");
    return false;
  }
  std::optional<DualPolicyNetwork> loaded =
      readNetwork(archive, "'" + path + "'", error);
  if (!loaded)
    return false;
  network = std::move(*loaded);
  makeOptimizer();
  torch::serialize::InputArchive optimizerArchive;
  archive.read("optimizer", optimizerArchive);
  optimizer_->load(optimizerArchive);

  {
    torch::serialize::InputArchive gradients;
    archive.read("gradients", gradients);
    torch::NoGradGuard noGrad;
    for (auto &item : network->named_parameters()) {
      torch::Tensor grad;
      if (gradients.try_read(mangleName(item.key()), grad))
        item.value().mutable_grad() = grad.clone();
    }
  }
  torch::Tensor state, running, scalars;
  archive.read("trainer_state", state);
  archive.read("trainer_running", running);
  archive.read("trainer_scalars", scalars);
  if (state.numel() != 5 ||
      running.numel() != 2 * static_cast<int64_t>(pairs_.size()) ||
      (scalars.numel() != 3 && scalars.numel() != 5)) {
    setError(error, "checkpoint '" + path + "' has a malformed trainer state");
    return false;
  }
  const int64_t *s = state.data_ptr<int64_t>();
  stageIndex_ = static_cast<int32_t>(s[0]);
  stageEpisode_ = s[1];
  episode = s[2];
  random_.setState(valueOf(s[3]));
  haveBest_ = s[4] != 0;
  const double *r = running.data_ptr<double>();
  runningSum_.assign(r, r + pairs_.size());
  runningCount_.assign(r + pairs_.size(), r + 2 * pairs_.size());
  torch::Tensor bestCosts, placements;
  archive.read("trainer_best_costs", bestCosts);
  archive.read("trainer_best_placements", placements);
  if (bestCosts.numel() != static_cast<int64_t>(pairs_.size())) {
    setError(error, "checkpoint '" + path + "' has a malformed trainer state");
    return false;
  }
  const int64_t *placed = placements.data_ptr<int64_t>();
  int64_t offset = 0;
  for (size_t q = 0; q < pairs_.size(); ++q) {
    bestCost_[q] = bestCosts.data_ptr<double>()[q];
    if (!std::isfinite(bestCost_[q]))
      continue;
    int64_t n = options.graphs[pairs_[q].graph].graph.numNodes();
    if (offset + n > placements.numel()) {
      setError(error, "checkpoint '" + path + "' has a malformed trainer state");
      return false;
    }
    bestPlacement_[q].assign(placed + offset, placed + offset + n);
    offset += n;
  }
  const double *sc = scalars.data_ptr<double>();
  // Checkpoints from before the selection score have 3 scalars, the first
  // the best geometric-mean ratio (= weight 1 in log form).
  const bool detailedScalars = scalars.numel() >= 5;
  bestScore_ = detailedScalars ? sc[0] : std::log(sc[0]);
  previousSeconds_ = sc[1];
  if (haveBest_) {
    torch::serialize::InputArchive bestArchive;
    archive.read("best", bestArchive);
    std::optional<DualPolicyNetwork> bestNetwork =
        readNetwork(bestArchive, "'" + path + "' (best model)", error);
    if (!bestNetwork)
      return false;
    best = std::move(*bestNetwork);
    EvaluationStats stats;
    stats.episode = static_cast<int64_t>(sc[2]);
    stats.selectionScore = bestScore_;
    stats.ratioToCriticalPath = detailedScalars ? sc[3] : sc[0];
    stats.noWorseFraction = detailedScalars ? sc[4] : 0.0;
    stats.pairs = static_cast<int32_t>(evaluationPairs_.size());
    stats.best = true;
    if (measuredAfter(stats.episode))
      stats.costSource = options.realOracle->costSource();
    bestEvaluation = stats;
  }
  return true;
}

bool TrainingSession::Impl::saveModel(const std::string &pathIn,
                                      std::string *error) {
  const std::string &path = pathIn.empty() ? options.outputPath : pathIn;
  if (path.empty()) {
    setError(error, "no output path");
    return false;
  }
  try {
    torch::serialize::OutputArchive archive;
    writeNetwork(options.keepBest && haveBest_ ? *best : *network, archive);
    return saveArchiveAtomically(archive, path, error);
  } catch (const std::exception &e) {
    setError(error, "cannot write '" + path + "': " + describeException(e));
    return false;
  }
}

TrainingSession::TrainingSession(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
TrainingSession::~TrainingSession() = default;

std::unique_ptr<TrainingSession>
TrainingSession::create(TrainerOptions options, std::string *error) noexcept {
  try {
    auto impl = std::make_unique<Impl>();
    impl->options = std::move(options);
    if (!impl->initialize(error))
      return nullptr;
    return std::unique_ptr<TrainingSession>(new TrainingSession(std::move(impl)));
  } catch (const std::exception &e) {
    setError(error, "cannot start training: " + describeException(e));
    return nullptr;
  }
}

bool TrainingSession::finished() const noexcept { return impl_->finished(); }
int64_t TrainingSession::episode() const noexcept { return impl_->episode; }
int64_t TrainingSession::totalEpisodes() const noexcept {
  return impl_->totalEpisodes;
}

std::optional<EpisodeStats>
TrainingSession::runEpisode(std::string *error) noexcept {
  try {
    return impl_->runEpisode(error);
  } catch (const std::exception &e) {
    setError(error, "training episode failed: " + describeException(e));
    return std::nullopt;
  }
}

std::optional<EvaluationStats>
TrainingSession::evaluate(std::string *error) noexcept {
  try {
    return impl_->evaluate(error);
  } catch (const std::exception &e) {
    setError(error, "evaluation failed: " + describeException(e));
    return std::nullopt;
  }
}

bool TrainingSession::saveCheckpoint(std::string *error) noexcept {
  try {
    if (impl_->options.checkpointPath.empty()) {
      setError(error, "no checkpoint path");
      return false;
    }
    return impl_->saveCheckpoint(error);
  } catch (const std::exception &e) {
    setError(error, describeException(e));
    return false;
  }
}

std::vector<BestPlacement> TrainingSession::bestPlacements() const noexcept {
  return impl_->bestPlacements();
}

bool TrainingSession::saveModel(const std::string &path,
                                std::string *error) noexcept {
  try {
    return impl_->saveModel(path, error);
  } catch (const std::exception &e) {
    setError(error, describeException(e));
    return false;
  }
}

std::unique_ptr<LearnedPolicy>
TrainingSession::currentPolicy(std::string *error) const noexcept {
  try {
    DualPolicyNetwork copy(impl_->network->config);
    copyParameters(*impl_->network, *copy);
    return LearnedPolicy::Impl::wrap(std::move(copy));
  } catch (const std::exception &e) {
    setError(error, describeException(e));
    return nullptr;
  }
}

const std::optional<EvaluationStats> &
TrainingSession::lastEvaluation() const noexcept {
  return impl_->lastEvaluation;
}

const std::optional<EvaluationStats> &
TrainingSession::bestEvaluation() const noexcept {
  return impl_->bestEvaluation;
}

std::optional<TrainingSummary>
doppler::placement::trainPolicy(TrainerOptions options,
                                std::string *error) noexcept {
  try {
    Clock::time_point start = Clock::now();
    const bool writeOutput = !options.outputPath.empty();
    std::unique_ptr<TrainingSession> session =
        TrainingSession::create(std::move(options), error);
    if (!session)
      return std::nullopt;
    TrainingSummary summary;
    int64_t first = session->episode();
    while (!session->finished())
      if (!session->runEpisode(error))
        return std::nullopt;
    if (writeOutput && !session->saveModel({}, error))
      return std::nullopt;
    summary.episodes = session->episode() - first;
    summary.seconds = secondsSince(start);
    summary.bestPlacements = session->bestPlacements();
    summary.finalEvaluation = session->lastEvaluation();
    summary.bestEvaluation = session->bestEvaluation();
    return summary;
  } catch (const std::exception &e) {
    setError(error, "training failed: " + describeException(e));
    return std::nullopt;
  }
}
