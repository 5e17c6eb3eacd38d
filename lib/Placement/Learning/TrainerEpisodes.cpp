//===- TrainerEpisodes.cpp - One training episode and its costs -----------===//

#include "TrainingSessionImpl.h"

#include "Doppler/Placement/Heuristics.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

using namespace doppler::placement;
using namespace doppler::placement::learning;
using doppler::placement::learning::detail::secondsSince;
using doppler::placement::learning::detail::setError;
using doppler::placement::learning::detail::Clock;

namespace {

/// One Adam update of `p` (float, contiguous, as its moments): LibTorch's
/// Adam::step arithmetic for one element at a time, in one pass.
struct AdamConstants {
  float beta1, beta2, oneMinusBeta1, oneMinusBeta2, sqrtCorrection2, eps,
      negativeStep;
};

void adamUpdateScalar(float *p, const float *g, float *m, float *v,
                      int64_t begin, int64_t end, const AdamConstants &c) {
  for (int64_t i = begin; i < end; ++i) {
    m[i] = m[i] * c.beta1 + g[i] * c.oneMinusBeta1;
    v[i] = v[i] * c.beta2 + g[i] * g[i] * c.oneMinusBeta2;
    const float denom = std::sqrt(v[i]) / c.sqrtCorrection2 + c.eps;
    p[i] = p[i] + c.negativeStep * (m[i] / denom);
  }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/// The same operations 8 floats at a time (AVX without FMA: the same
/// values; the compiler does not vectorise the scalar loop's sqrt).
__attribute__((target("avx"))) void
adamUpdateAvx(float *p, const float *g, float *m, float *v, int64_t count,
              const AdamConstants &c) {
  const __m256 beta1 = _mm256_set1_ps(c.beta1),
               beta2 = _mm256_set1_ps(c.beta2),
               oneMinusBeta1 = _mm256_set1_ps(c.oneMinusBeta1),
               oneMinusBeta2 = _mm256_set1_ps(c.oneMinusBeta2),
               sqrtCorrection2 = _mm256_set1_ps(c.sqrtCorrection2),
               eps = _mm256_set1_ps(c.eps),
               negativeStep = _mm256_set1_ps(c.negativeStep);
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m256 gi = _mm256_loadu_ps(g + i);
    const __m256 mi = _mm256_add_ps(_mm256_mul_ps(_mm256_loadu_ps(m + i), beta1),
                                    _mm256_mul_ps(gi, oneMinusBeta1));
    const __m256 vi = _mm256_add_ps(
        _mm256_mul_ps(_mm256_loadu_ps(v + i), beta2),
        _mm256_mul_ps(_mm256_mul_ps(gi, gi), oneMinusBeta2));
    const __m256 denom = _mm256_add_ps(
        _mm256_div_ps(_mm256_sqrt_ps(vi), sqrtCorrection2), eps);
    const __m256 pi = _mm256_add_ps(
        _mm256_loadu_ps(p + i),
        _mm256_mul_ps(negativeStep, _mm256_div_ps(mi, denom)));
    _mm256_storeu_ps(m + i, mi);
    _mm256_storeu_ps(v + i, vi);
    _mm256_storeu_ps(p + i, pi);
  }
  adamUpdateScalar(p, g, m, v, i, count, c);
}
#endif

void adamUpdate(float *p, const float *g, float *m, float *v, int64_t count,
                const AdamConstants &c) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  static const bool avx = __builtin_cpu_supports("avx");
  if (avx) {
    adamUpdateAvx(p, g, m, v, count, c);
    return;
  }
#endif
  adamUpdateScalar(p, g, m, v, 0, count, c);
}

/// optimizer.step() for the common case, without its per-tensor LibTorch
/// operations (a dozen per parameter, which cost more than the update on
/// the network's small tensors): the same update of the same state, up to
/// rounding. False (nothing done) unless every parameter with a gradient
/// already has its moments and the options are plain (no weight decay, no
/// AMSGrad, float32 dense contiguous tensors); the caller then steps
/// LibTorch's way.
bool fusedAdamStep(torch::optim::Adam &optimizer) {
  auto &states = optimizer.state();
  std::vector<std::pair<torch::Tensor, torch::optim::AdamParamState *>> work;
  for (auto &group : optimizer.param_groups()) {
    const auto &options =
        static_cast<const torch::optim::AdamOptions &>(group.options());
    if (options.weight_decay() != 0 || options.amsgrad())
      return false;
    for (auto &p : group.params()) {
      if (!p.grad().defined())
        continue;
      auto found = states.find(c10::guts::to_string(p.unsafeGetTensorImpl()));
      if (found == states.end())
        return false;
      auto &state = static_cast<torch::optim::AdamParamState &>(*found->second);
      const torch::Tensor &grad = p.grad();
      const torch::Tensor *tensors[] = {&p, &grad, &state.exp_avg(),
                                        &state.exp_avg_sq()};
      for (const torch::Tensor *t : tensors)
        if (t->scalar_type() != torch::kFloat32 || t->is_sparse() ||
            !t->is_contiguous() || t->numel() != p.numel())
          return false;
      work.emplace_back(p, &state);
    }
  }
  torch::NoGradGuard noGrad;
  size_t next = 0;
  for (auto &group : optimizer.param_groups()) {
    const auto &options =
        static_cast<const torch::optim::AdamOptions &>(group.options());
    const double beta1 = std::get<0>(options.betas());
    const double beta2 = std::get<1>(options.betas());
    for (auto &p : group.params()) {
      if (!p.grad().defined())
        continue;
      torch::optim::AdamParamState &state = *work[next++].second;
      state.step(state.step() + 1);
      const double correction1 = 1 - std::pow(beta1, state.step());
      const double correction2 = 1 - std::pow(beta2, state.step());
      const AdamConstants constants = {
          static_cast<float>(beta1),
          static_cast<float>(beta2),
          static_cast<float>(1 - beta1),
          static_cast<float>(1 - beta2),
          static_cast<float>(std::sqrt(correction2)),
          static_cast<float>(options.eps()),
          static_cast<float>(-options.lr() / correction1)};
      adamUpdate(p.data_ptr<float>(), p.grad().data_ptr<float>(),
                 state.exp_avg().data_ptr<float>(),
                 state.exp_avg_sq().data_ptr<float>(), p.numel(), constants);
    }
  }
  return true;
}

} // namespace

void TrainingSession::Impl::skipEmptyStages() {
  while (!finished() && stageEpisode_ >= options.stages[stageIndex_].episodes) {
    ++stageIndex_;
    stageEpisode_ = 0;
    std::fill(runningSum_.begin(), runningSum_.end(), 0.0);
    std::fill(runningCount_.begin(), runningCount_.end(), 0.0);
  }
}

PlacementJudge &TrainingSession::Impl::judgeFor(int32_t pair) {
  if (!judges_[pair])
    judges_[pair] = std::make_unique<PlacementJudge>(
        options.graphs[pairs_[pair].graph].graph, pairs_[pair].devices,
        capacities_[pair]);
  return *judges_[pair];
}

double TrainingSession::Impl::simulatedCost(int32_t pair,
                                            ArrayView<DeviceId> placement,
                                            double *overflow) {
  PlacementJudge &judge = judgeFor(pair);
  double makespan = judge.run(placement);
  double relative = judge.relativeOverflow();
  if (overflow)
    *overflow = relative;
  return makespan * (1 + options.memoryOverflowWeight * relative);
}

void TrainingSession::Impl::chooseMemoryCapacities() {
  capacities_.assign(pairs_.size(), {});
  if (options.memoryTightFraction <= 0)
    return;
  Random draw(deriveSeed(options.seed, 0x6d656d6f7279ull));
  for (size_t q = 0; q < pairs_.size(); ++q) {
    const Graph &graph = options.graphs[pairs_[q].graph].graph;
    const int32_t devices = pairs_[q].devices;
    // Two draws per pair whatever happens, so a pair's choice does not
    // depend on the others'.
    const bool tight = draw.uniform() < options.memoryTightFraction;
    const double slack = 0.1 * draw.uniform();
    if (!tight || devices < 2)
      continue;
    const double smallest = leastHeuristicPeak(graph, devices);
    if (smallest > 0)
      capacities_[q].assign(devices, (1 + slack) * smallest);
  }
}

double TrainingSession::Impl::criticalPathMakespan(int32_t pair) {
  if (criticalPath_[pair] < 0) {
    const Pair &p = pairs_[pair];
    std::vector<DeviceId> placement = placeCriticalPath(
        options.graphs[p.graph].graph, p.devices, StartEstimate::EarliestStart);
    criticalPath_[pair] = simulatedCost(pair, placement);
  }
  return criticalPath_[pair];
}

double TrainingSession::Impl::joinAwareMakespan(int32_t pair) {
  if (joinAware_[pair] < 0) {
    const Pair &p = pairs_[pair];
    joinAware_[pair] = simulatedCost(
        pair, placeJoinAware(options.graphs[p.graph].graph, p.devices));
  }
  return joinAware_[pair];
}

double TrainingSession::Impl::betterHeuristicMakespan(int32_t pair) {
  return std::min(criticalPathMakespan(pair), joinAwareMakespan(pair));
}

std::vector<DeviceId> TrainingSession::Impl::greedyPlacement(int32_t pair) {
  c10::InferenceMode inference;
  const Pair &p = pairs_[pair];
  const Graph &graph = options.graphs[p.graph].graph;
  EncodedGraph encoded = encodeGraph(*network, tensors_[p.graph]);
  RolloutInputs inputs = prepareRollout(*network, encoded, tensors_[p.graph]);
  Random unused(0);
  RolloutOptions greedy;
  if (!capacities_[pair].empty())
    greedy.memoryCapacities = &capacities_[pair];
  engine_.run(environment_, graph, p.devices, network->config.startEstimate,
              inputs.weights, inputs.tables, greedy, unused, nullptr, nullptr);
  ArrayView<DeviceId> placed = environment_.assignment();
  return std::vector<DeviceId>(placed.begin(), placed.end());
}

std::optional<double>
TrainingSession::Impl::placementCost(int32_t pair,
                                     ArrayView<DeviceId> placement,
                                     bool measured, std::string *error) {
  if (!measured)
    return simulatedCost(pair, placement);
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

void TrainingSession::Impl::beginStageEpisode(const StageOptions &stage,
                                              double learningRate) {
  // Measured and simulated costs are not comparable (units, and what they
  // model): the best placements restart when the cost source changes.
  if (episode > 0 && measuring() != (stage.stage == TrainingStage::RealRL)) {
    std::fill(bestCost_.begin(), bestCost_.end(),
              std::numeric_limits<double>::infinity());
    for (std::vector<DeviceId> &placement : bestPlacement_)
      placement.clear();
  }
  // (Imitating the better heuristic trains the join prior itself.)
  if (network->config.joinFeature && !options.imitateBetterHeuristic &&
      stageEpisode_ == 0 &&
      stageIndex_ > 0 &&
      stage.stage != TrainingStage::Imitation &&
      options.stages[stageIndex_ - 1].stage == TrainingStage::Imitation)
    choosePriorStart(network->joinPrior, "join_prior",
                     {network->joinPrior.item<float>(), 0.0f, 4 * kInitialPrior,
                      8 * kInitialPrior});
  // The lookahead prior likewise (imitation never has completions), after
  // the join prior it has to outweigh to follow the completions.
  if (network->config.lookahead && stageEpisode_ == 0 && stageIndex_ > 0 &&
      stage.stage != TrainingStage::Imitation &&
      options.stages[stageIndex_ - 1].stage == TrainingStage::Imitation)
    choosePriorStart(network->lookaheadPrior, "lookahead_prior",
                     {network->lookaheadPrior.item<float>(), 0.0f,
                      8 * kInitialPrior, 16 * kInitialPrior,
                      32 * kInitialPrior});
  auto &groups = optimizer_->param_groups();
  for (size_t g = 0; g < groups.size(); ++g)
    static_cast<torch::optim::AdamOptions &>(groups[g].options())
        .lr(g == 0 || stage.stage == TrainingStage::Imitation
                ? learningRate
                : learningRate * options.priorLearningRateScale);
}

std::optional<double>
TrainingSession::Impl::runningAverage(int32_t pair, double cost, bool measured,
                                      std::string *error) {
  // Optionally the critical-path heuristic's cost counts as one earlier
  // cost, so that the first visit of a pair (frequent when training on
  // many graphs) already has a baseline.
  if (runningCount_[pair] == 0 && options.criticalPathBaseline) {
    double prior = criticalPathMakespan(pair);
    if (measured) {
      std::optional<double> measuredPrior = measuredCriticalPath(pair, error);
      if (!measuredPrior)
        return std::nullopt;
      prior = *measuredPrior;
    }
    runningSum_[pair] = prior;
    runningCount_[pair] = 1;
  }
  const double average =
      runningCount_[pair] > 0 ? runningSum_[pair] / runningCount_[pair] : cost;
  runningSum_[pair] += cost;
  runningCount_[pair] += 1;
  return average;
}

learning::LossTerms TrainingSession::Impl::learnFromEpisode(
    const StageOptions &stage, const learning::GraphTensors &tensors,
    const learning::EncodedGraph &encoded, int32_t steps, double reward,
    bool imitation, bool imitateJoin) {
  LossWeights weights;
  weights.imitation = stage.imitationWeight;
  weights.policyGradient = stage.policyGradientWeight;
  weights.entropy = stage.entropyWeight;
  weights.joinPrior = !imitation || options.imitateBetterHeuristic;
  weights.imitateJoin = imitation && imitateJoin;
  weights.memoryPrior = !imitation;
  if (weights.policyGradient != 0) {
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
      if (!fusedAdamStep(*optimizer_))
        optimizer_->step();
      optimizer_->zero_grad();
    }
  }
  return terms;
}

void TrainingSession::Impl::rememberIfBest(int32_t pair, double cost) {
  if (cost < bestCost_[pair]) {
    bestCost_[pair] = cost;
    ArrayView<DeviceId> placed = environment_.assignment();
    bestPlacement_[pair].assign(placed.begin(), placed.end());
  }
}

EpisodeStats
TrainingSession::Impl::episodeStats(const StageOptions &stage, int32_t pair,
                                    double cost, double average, double reward,
                                    const learning::LossTerms &terms,
                                    double learningRate, double epsilon) const {
  const Pair &p = pairs_[pair];
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
  if (network->config.memoryFeature)
    stats.memoryPrior = network->memoryPrior.item<double>();
  if (network->config.lookahead)
    stats.lookaheadPrior = network->lookaheadPrior.item<double>();
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
  return stats;
}

bool TrainingSession::Impl::finishEpisode(EpisodeStats &stats,
                                          Clock::time_point episodeStart,
                                          std::string *error) {
  ++episode;
  ++stageEpisode_;
  skipEmptyStages();
  stats.seconds = secondsSince(episodeStart);
  writeLog(stats);
  drawProgress(stats);

  if (((options.evaluateEvery > 0 && episode % options.evaluateEvery == 0) ||
       (finished() && options.evaluateEvery > 0)) &&
      !evaluate(error))
    return false;
  if (!options.checkpointPath.empty() &&
      ((options.checkpointEvery > 0 &&
        episode % options.checkpointEvery == 0) ||
       finished())) {
    if (!saveCheckpoint(error))
      return false;
  }
  if (finished() && progressBar_)
    std::fputc('\n', stderr);
  return true;
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
  const double learningRate = stage.learningRate * (1 - progress);
  const double epsilon = stage.epsilon * (1 - progress);
  beginStageEpisode(stage, learningRate);

  const int32_t pair = pairs_.size() == 1
                           ? 0
                           : static_cast<int32_t>(random_.below(
                                 static_cast<uint32_t>(pairs_.size())));
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
  // (With imitateBetterHeuristic the prior stays in, and the pairs where
  // join-aware wins imitate it.)
  const bool imitation = stage.stage == TrainingStage::Imitation;
  const bool imitateJoin = imitation && options.imitateBetterHeuristic &&
                           joinAwareMakespan(pair) < criticalPathMakespan(pair);
  // The memory prior likewise: the heuristic knows nothing of memory.
  if (imitation) {
    if (!options.imitateBetterHeuristic)
      inputs.weights.joinPrior = 0;
    inputs.weights.memoryPrior = 0;
  }
  RolloutOptions rollout;
  // Imitation teaches the heuristic, which completions say nothing about
  // (and would cost D rule passes a step).
  if (imitation)
    rollout.lookaheadVisits = 0;
  rollout.epsilon = epsilon;
  rollout.sample = options.sampleActions;
  if (!capacities_[pair].empty())
    rollout.memoryCapacities = &capacities_[pair];
  engine_.run(environment_, graph, p.devices, network->config.startEstimate,
              inputs.weights, inputs.tables, rollout, random_, &record_,
              nullptr);

  const bool measured = stage.stage == TrainingStage::RealRL;
  double overflow = 0;
  std::optional<double> cost =
      measured ? placementCost(pair, environment_.assignment(), measured, error)
               : std::optional<double>(simulatedCost(
                     pair, environment_.assignment(), &overflow));
  if (!cost)
    return std::nullopt;
  // Reward: relative improvement over the running average of earlier
  // costs of this pair in this stage.
  std::optional<double> average = runningAverage(pair, *cost, measured, error);
  if (!average)
    return std::nullopt;
  const double reward = *average > 0 ? (*average - *cost) / *average : 0.0;

  LossTerms terms = learnFromEpisode(stage, tensors, encoded, graph.numNodes(),
                                     reward, imitation, imitateJoin);
  rememberIfBest(pair, *cost);
  EpisodeStats stats = episodeStats(stage, pair, *cost, *average, reward, terms,
                                    learningRate, epsilon);
  if (!capacities_[pair].empty() && !measured)
    stats.memoryOverflow = overflow;
  if (!finishEpisode(stats, episodeStart, error))
    return std::nullopt;
  return stats;
}

void TrainingSession::Impl::choosePriorStart(
    torch::Tensor &prior, const std::string &name,
    const std::vector<float> &candidates) {
  // Imitation never sees the join-aware prior, and the network it trains
  // can overrule any fixed start: with the ffnn graph, 1 seed in 3 started
  // RL where the critical-path choice always won, a plateau RL cannot
  // leave (the join-aware choices pay only when whole joins follow them).
  // So the start is picked by the greedy placements it gives (the
  // evaluation pairs and score of evaluate()): its current value first,
  // then none, then stronger ones.
  double bestScore = std::numeric_limits<double>::infinity();
  float bestValue = candidates[0];
  nlohmann::json tried = nlohmann::json::array();
  for (float value : candidates) {
    {
      torch::NoGradGuard noGrad;
      prior.fill_(value);
    }
    // Simulated even before a real-rl stage: a start, not a model choice.
    const double score =
        evaluateGreedy(/*measured=*/false, nullptr)->selectionScore;
    tried.push_back({{name, value}, {"selection_score", score}});
    if (score < bestScore) {
      bestScore = score;
      bestValue = value;
    }
  }
  torch::NoGradGuard noGrad;
  prior.fill_(bestValue);
  if (log_) {
    nlohmann::json line = {{name + "_start", bestValue}, {"tried", tried}};
    log_ << line.dump() << "\n";
    log_.flush();
  }
}

double doppler::placement::leastHeuristicPeak(const Graph &graph,
                                              int32_t numDevices) {
  if (!graph.hasOutputBytes() || numDevices < 1 || graph.numNodes() == 0)
    return 0;
  SimulatorOptions memory;
  memory.trackMemory = true;
  Simulator simulator(graph, numDevices, memory);
  double least = std::numeric_limits<double>::infinity();
  for (const std::vector<DeviceId> &placement :
       {placeRoundRobin(graph, numDevices),
        placeCriticalPath(graph, numDevices, StartEstimate::EarliestStart),
        placeJoinAware(graph, numDevices), placeHeft(graph, numDevices)}) {
    simulator.run(placement);
    const std::vector<double> &peaks = simulator.schedule().peakMemory;
    least = std::min(least, *std::max_element(peaks.begin(), peaks.end()));
  }
  return least;
}
