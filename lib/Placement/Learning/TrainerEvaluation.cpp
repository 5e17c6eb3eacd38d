//===- TrainerEvaluation.cpp - Greedy evaluation during training ----------===//

#include "TrainingSessionImpl.h"

#include <nlohmann/json.hpp>

#include <cmath>

using namespace doppler::placement;
using namespace doppler::placement::learning;
using doppler::placement::learning::detail::secondsSince;
using doppler::placement::learning::detail::setError;

std::optional<EvaluationStats>
TrainingSession::Impl::evaluateGreedy(bool measured, std::string *error) {
  double logSum = 0, regressionSum = 0, betterLogSum = 0;
  int32_t noWorse = 0;
  // A model that reads the join split can follow either heuristic, so it
  // is selected against the better of the two on each pair (simulated
  // only: a measured join-aware run would cost an oracle call per pair).
  const bool againstBetter = !measured && network->config.joinFeature;
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
    const double betterLogRatio =
        measured ? logRatio
                 : std::log(*greedy / betterHeuristicMakespan(pair));
    betterLogSum += betterLogRatio;
    const double selected = againstBetter ? betterLogRatio : logRatio;
    regressionSum += std::max(selected, 0.0);
    noWorse += logRatio <= 0;
  }
  EvaluationStats stats;
  stats.episode = episode;
  stats.pairs = static_cast<int32_t>(evaluationPairs_.size());
  stats.ratioToCriticalPath = std::exp(logSum / stats.pairs);
  stats.noWorseFraction = static_cast<double>(noWorse) / stats.pairs;
  stats.ratioToBetterHeuristic = std::exp(betterLogSum / stats.pairs);
  stats.selectionScore =
      ((againstBetter ? betterLogSum : logSum) +
       (options.regressionWeight - 1) * regressionSum) /
      stats.pairs;
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
                           {"ratio_to_better_heuristic",
                            stats.ratioToBetterHeuristic},
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
