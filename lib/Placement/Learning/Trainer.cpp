//===- Trainer.cpp - Training the learned dual policy ---------------------===//
//
// Cost oracles, stage options, the session's set-up and its public API.
// The session's work is in TrainerEpisodes.cpp, TrainerEvaluation.cpp,
// TrainerCheckpoint.cpp and TrainerLog.cpp.
//
//===----------------------------------------------------------------------===//

#include "Doppler/Support/Limits.h"
#include "Doppler/Placement/Learning/Trainer.h"

#include "PolicyImpl.h"
#include "TrainingSessionImpl.h"

#include "Doppler/Placement/Heuristics.h"

#include <unistd.h>
#if defined(__linux__)
#include <malloc.h>
#endif

#include <algorithm>
#include <cmath>

using namespace doppler::placement;
using namespace doppler::placement::learning;
using doppler::placement::learning::detail::secondsSince;
using doppler::placement::learning::detail::setError;
using doppler::placement::learning::detail::Clock;

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

namespace {

/// What is wrong with `options` for a training session ("" when nothing).
std::string trainingOptionsProblem(const TrainerOptions &options) {
  if (options.graphs.empty())
    return "no training graphs";
  for (const TrainingGraph &g : options.graphs)
    if (g.graph.numNodes() == 0)
      return "training graph '" + g.name + "' has no nodes";
  if (options.deviceCounts.empty())
    return "no device counts";
  for (int32_t d : options.deviceCounts)
    if (d < 1 || d > ::doppler::kMaxDevices)
      return "device count " + std::to_string(d) + " is out of range [1, " +
             std::to_string(::doppler::kMaxDevices) + "]";
  if (options.stages.empty())
    return "no training stages";
  for (const StageOptions &s : options.stages) {
    if (s.episodes < 0 || !(s.learningRate >= 0) || !(s.epsilon >= 0) ||
        s.epsilon > 1 || s.episodesPerUpdate < 1)
      return std::string("stage ") + stageName(s.stage) +
             ": episodes and learning rate must be >= 0, "
             "epsilon in [0, 1] and episodes per update >= 1";
    if (s.stage == TrainingStage::RealRL && !options.realOracle)
      return "the real-rl stage needs a cost oracle";
  }
  if (!(options.gamma >= 0 && options.gamma <= 1))
    return "gamma must be in [0, 1]";
  if (!(options.memoryTightFraction >= 0 && options.memoryTightFraction <= 1))
    return "the memory-tight fraction must be in [0, 1]";
  if (!(options.memoryOverflowWeight >= 0) ||
      !std::isfinite(options.memoryOverflowWeight))
    return "the memory overflow weight must be a finite number >= 0";
  if (options.resume && options.checkpointPath.empty() &&
      options.outputPath.empty())
    return "resuming needs a checkpoint (or output) path";
  return {};
}

} // namespace

bool TrainingSession::Impl::initialize(std::string *error) {
  configureTorchThreads();
  if (std::string problem = trainingOptionsProblem(options); !problem.empty()) {
    setError(error, problem);
    return false;
  }
  for (const StageOptions &s : options.stages)
    totalEpisodes += s.episodes;
  if (options.checkpointPath.empty() && !options.outputPath.empty())
    options.checkpointPath = options.outputPath + ".ckpt";

  for (size_t g = 0; g < options.graphs.size(); ++g)
    for (int32_t d : options.deviceCounts)
      pairs_.push_back({static_cast<int32_t>(g), d});
  for (const TrainingGraph &g : options.graphs)
    tensors_.push_back(buildGraphTensors(g.graph));
  judges_.resize(pairs_.size());
  chooseMemoryCapacities();
  criticalPath_.assign(pairs_.size(), -1);
  joinAware_.assign(pairs_.size(), -1);
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
  // Whichever way the network came (new, --init, a checkpoint).
  if (options.imitateBetterHeuristic && !network->config.joinFeature) {
    setError(error, "imitating the better heuristic needs a model with the "
                    "join prior (join=1)");
    return false;
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
