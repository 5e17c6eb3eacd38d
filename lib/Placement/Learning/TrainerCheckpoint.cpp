//===- TrainerCheckpoint.cpp - Checkpoints, the optimizer, model files ----===//

#include "TrainingSessionImpl.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace doppler::placement;
using namespace doppler::placement::learning;
using doppler::placement::learning::detail::secondsSince;
using doppler::placement::learning::detail::setError;

namespace {

/// Archive keys cannot hold dots.
std::string mangleName(const std::string &name) {
  std::string out = name;
  std::replace(out.begin(), out.end(), '.', '_');
  return out;
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
  if (options.imitateBetterHeuristic)
    text += "; imitate better heuristic";
  // The memory-tight pairs and their costs.
  if (options.memoryTightFraction > 0)
    text += "; memory-tight " + std::to_string(options.memoryTightFraction) +
            " weight " + std::to_string(options.memoryOverflowWeight);
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
    DualPolicyNetworkImpl &saved =
        options.keepBest && haveBest_ ? *best : *network;
    if (std::string name = firstNonFiniteParameter(saved); !name.empty()) {
      setError(error, "not writing '" + path + "': training diverged (" +
                          name + " holds a NaN or an infinity)");
      return false;
    }
    torch::serialize::OutputArchive archive;
    writeNetwork(saved, archive);
    return saveArchiveAtomically(archive, path, error);
  } catch (const std::exception &e) {
    setError(error, "cannot write '" + path + "': " + describeException(e));
    return false;
  }
}
