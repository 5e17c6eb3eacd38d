//===- TrainerLog.cpp - The training log and progress bar -----------------===//

#include "TrainingSessionImpl.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>

using namespace doppler::placement;
using namespace doppler::placement::learning;
using doppler::placement::learning::detail::secondsSince;
using doppler::placement::learning::detail::setError;
using doppler::placement::learning::detail::Clock;

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
  if (!std::isnan(s.memoryPrior))
    line["memory_prior"] = s.memoryPrior;
  if (!std::isnan(s.lookaheadPrior))
    line["lookahead_prior"] = s.lookaheadPrior;
  if (!std::isnan(s.memoryOverflow))
    line["memory_overflow"] = s.memoryOverflow;
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
