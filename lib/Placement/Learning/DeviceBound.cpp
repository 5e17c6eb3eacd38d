//===- DeviceBound.cpp - PLC's device scores, and its greedy argmax -------===//
//
// One device's PLC score, and the greedy argmax over devices without
// scoring every device. At D = 64 scoring every device at every step was 40% of
// the learned greedy pass on a 10^5-op graph (docs/Method.md section 11). The
// priors put 8.7 to 128 on one to three devices (the default model's), and the
// network's score moves little between devices whose feature and sum rows
// are alike: a Lipschitz bound on the difference of two devices' scores
// (ScorerWeights::plcFeatureGram) rules out most devices from the scores
// of the priors' devices alone. The devices it cannot rule out are scored
// as placeNode scores them, so the argmax (ties to the lowest device) is
// the one of scoring every device: placements are unchanged, bit for bit.
//
//===----------------------------------------------------------------------===//

#include "Rollout.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace doppler::placement;
using namespace doppler::placement::learning;

namespace {

/// Float rounding of a score and of the bound's own arithmetic: a device
/// is ruled out only when its bound is below the best by more than this.
/// A score sums 64 products of pre-activations that are sums of 128
/// float products each: with partial sums up to 100 and |out_k| up to 1,
/// the worst case of their rounding is 64 x 128 x 6e-8 x 100 = 0.05 (the
/// usual one near 1e-4); the priors' 8.7-128 leave room for ten times it.
double boundSlack(double best) { return 0.5 + 1e-4 * std::fabs(best); }

/// sqrt(x' G x) for a row difference x [F <= kMaxGramFeatures] and the
/// Gram matrix G [F][F].
constexpr int32_t kMaxGramFeatures = 16;
double gramNorm(const float *a, const float *b, int32_t F, const double *G) {
  double diff[kMaxGramFeatures];
  double total = 0;
  for (int32_t i = 0; i < F; ++i)
    diff[i] = static_cast<double>(a[i]) - b[i];
  for (int32_t i = 0; i < F; ++i) {
    double row = 0;
    for (int32_t j = 0; j < F; ++j)
      row += G[i * F + j] * diff[j];
    total += diff[i] * row;
  }
  return std::sqrt(std::max(0.0, total));
}

} // namespace

DOPPLER_NO_TRAPPING_MATH
float RolloutEngine::deviceScore(const float *nodeTerm, int32_t d,
                                 const ScorerWeights &w) {
  const int32_t H = w.hidden, K = w.headHidden, S = w.sumWidth;
  std::copy(w.plcDeviceBias, w.plcDeviceBias + H, hidden_.begin());
  accumulateVectorMatrix(&deviceFeatures_[d * w.deviceFeatures],
                         w.deviceFeatures, w.plcDeviceWeight, H,
                         hidden_.data());
  for (float &x : hidden_)
    x = leakyRelu(x);
  std::copy(nodeTerm, nodeTerm + K, preActivation_.begin());
  accumulateVectorMatrix(hidden_.data(), H, w.plcHeadDevice, K,
                         preActivation_.data());
  const float *sums = &deviceSumsStd_[d * S];
  if (w.plcSumGain) {
    for (int32_t k = 0; k < K; ++k)
      preActivation_[k] += sums[k] * w.plcSumGain[k];
  } else {
    accumulateVectorMatrix(sums, H, w.plcHeadSum, K, preActivation_.data());
  }
  float score = w.plcOutBias;
  for (int32_t k = 0; k < K; ++k)
    score += leakyRelu(preActivation_[k]) * w.plcOutWeight[k];
  return score;
}

DOPPLER_NO_TRAPPING_MATH
void RolloutEngine::deviceHidden(int32_t d, const ScorerWeights &w,
                                 std::vector<float> &out) {
  out.assign(w.plcDeviceBias, w.plcDeviceBias + w.hidden);
  accumulateVectorMatrix(&deviceFeatures_[d * w.deviceFeatures],
                         w.deviceFeatures, w.plcDeviceWeight, w.hidden,
                         out.data());
  for (float &x : out)
    x = leakyRelu(x);
}

float RolloutEngine::withPriors(float score, DeviceId d, const ScorerWeights &w,
                                DeviceId heuristicDevice, DeviceId joinDevice,
                                DeviceId lookaheadDevice) const {
  if (d == heuristicDevice)
    score += w.plcPrior;
  if (d == joinDevice)
    score += w.joinPrior;
  if (d == lookaheadDevice)
    score += w.lookaheadPrior;
  if (d < static_cast<DeviceId>(overflows_.size()) && overflows_[d])
    score += w.memoryPrior;
  return score;
}

double RolloutEngine::sumDistance(DeviceId d, DeviceId r,
                                  const ScorerWeights &w) const {
  const int32_t S = w.sumWidth;
  const float *a = &deviceSumsStd_[static_cast<size_t>(d) * S];
  const float *b = &deviceSumsStd_[static_cast<size_t>(r) * S];
  double reach = 0;
  if (w.plcSumBound) {
    for (int32_t k = 0; k < S; ++k)
      reach += w.plcSumBound[k] * std::fabs(static_cast<double>(a[k]) - b[k]);
    return reach;
  }
  for (int32_t k = 0; k < S; ++k) {
    double diff = static_cast<double>(a[k]) - b[k];
    reach += diff * diff;
  }
  return w.plcSumNorm * std::sqrt(reach);
}

double RolloutEngine::hiddenDistance(DeviceId d, DeviceId r,
                                     const ScorerWeights &w) {
  if (hiddenOf_ != r) {
    deviceHidden(r, w, bestHidden_);
    hiddenOf_ = r;
  }
  deviceHidden(d, w, otherHidden_);
  double squares = 0;
  for (int32_t j = 0; j < w.hidden; ++j) {
    double diff = static_cast<double>(otherHidden_[j]) - bestHidden_[j];
    squares += diff * diff;
  }
  return std::sqrt(squares);
}

DeviceId RolloutEngine::bestDeviceBounded(NodeId v, int32_t numDevices,
                                          const ScorerWeights &w,
                                          const NodeTables &tables,
                                          DeviceId heuristicDevice,
                                          DeviceId joinDevice,
                                          DeviceId lookaheadDevice) {
  const int32_t D = numDevices, F = w.deviceFeatures;
  standardizeDeviceSums(D, w);
  scores_.resize(D);
  scored_.assign(D, 0);
  hiddenOf_ = -1;
  const float *nodeTerm =
      tables.plcNodeTerm + static_cast<size_t>(v) * w.headHidden;
  auto priorsOf = [&](DeviceId d) -> double {
    return withPriors(0.0f, d, w, heuristicDevice, joinDevice, lookaheadDevice);
  };
  DeviceId best = -1;
  auto score = [&](DeviceId d) {
    scores_[d] = withPriors(deviceScore(nodeTerm, d, w), d, w, heuristicDevice,
                            joinDevice, lookaheadDevice);
    scored_[d] = 1;
    ++stats_.plcScored;
    // The first of the largest, as std::max_element over every device.
    if (best < 0 || scores_[d] > scores_[best] ||
        (scores_[d] == scores_[best] && d < best))
      best = d;
  };
  // The priors' devices first: where a prior is large, one of them wins.
  for (DeviceId d : {lookaheadDevice, joinDevice, heuristicDevice})
    if (d >= 0 && !scored_[d])
      score(d);
  if (best < 0)
    score(0);
  const int64_t scoredBefore = stats_.plcScored;
  for (DeviceId d = 0; d < D; ++d) {
    if (scored_[d])
      continue;
    // What d could reach: the best device's network score (its priors
    // taken off again) plus the most the rows' differences allow, plus
    // d's own priors. Ruled out below the best's score.
    const double top = scores_[best];
    const double floor = top - boundSlack(top);
    const double base =
        (top - priorsOf(best)) + priorsOf(d) + sumDistance(d, best, w);
    if (F <= kMaxGramFeatures &&
        base + w.plcFeatureGain * gramNorm(&deviceFeatures_[d * F],
                                           &deviceFeatures_[best * F], F,
                                           w.plcFeatureGram) <
            floor)
      continue;
    // Tighter, at a tenth of a score's cost: the hidden layers' own
    // difference (the leaky ReLU shrinks negative parts tenfold).
    ++stats_.plcHiddenBounds;
    if (base + w.plcFeatureGain * hiddenDistance(d, best, w) < floor)
      continue;
    score(d);
  }
  stats_.plcCertified += stats_.plcScored == scoredBefore;
  return best;
}
