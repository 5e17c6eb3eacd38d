//===- Rollout.cpp - One episode of the dual policy, without LibTorch -----===//

#include "Rollout.h"

#include "Doppler/Placement/Analysis.h"
#include "Doppler/Placement/Heuristics.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <limits>

using namespace doppler::placement;
using namespace doppler::placement::learning;

// GCC and Clang build an FMA (256-bit AVX) clone next to the baseline one
// and pick by CPU feature at load time, so the library stays portable to
// any x86-64. (FMA rounds differently from a multiply and an add, so scores
// may differ in the last bit between CPUs with and without it.) Not under
// ASan or TSan: the clone's resolver runs during relocation, before the
// sanitizer's runtime is up, and an instrumented resolver crashes there.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) &&     \
    !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define DOPPLER_VECTOR_CLONES __attribute__((target_clones("fma", "default")))
#else
#define DOPPLER_VECTOR_CLONES
#endif

DOPPLER_VECTOR_CLONES
void doppler::placement::learning::accumulateVectorMatrix(
    const float *x, int32_t inSize, const float *weight, int32_t outSize,
    float *out) {
  // Blocks of 64 outputs stay in registers (8 AVX registers) while the
  // inputs stream past; the head's 64 outputs are one block.
  constexpr int32_t kBlock = 64;
  int32_t k0 = 0;
  for (; k0 + kBlock <= outSize; k0 += kBlock) {
    float acc[kBlock];
    for (int32_t k = 0; k < kBlock; ++k)
      acc[k] = out[k0 + k];
    for (int32_t j = 0; j < inSize; ++j) {
      const float xj = x[j];
      const float *row = weight + static_cast<size_t>(j) * outSize + k0;
      for (int32_t k = 0; k < kBlock; ++k)
        acc[k] += xj * row[k];
    }
    for (int32_t k = 0; k < kBlock; ++k)
      out[k0 + k] = acc[k];
  }
  if (k0 == outSize)
    return;
  for (int32_t j = 0; j < inSize; ++j) {
    const float xj = x[j];
    const float *row = weight + static_cast<size_t>(j) * outSize;
    for (int32_t k = k0; k < outSize; ++k)
      out[k] += xj * row[k];
  }
}

namespace {

/// Column means and 1 / (std + eps) over `rows` rows of `table` picked by
/// `ids` (population std, as METHOD section 3).
DOPPLER_VECTOR_CLONES
void columnStatistics(const float *table, int32_t width, ArrayView<NodeId> ids,
                      std::vector<float> &mean, std::vector<float> &scale,
                      std::vector<double> &scratch) {
  size_t count = ids.size();
  scratch.assign(2 * static_cast<size_t>(width), 0.0);
  double *sum = scratch.data();
  double *sumSquares = sum + width;
  for (NodeId v : ids) {
    const float *row = table + static_cast<size_t>(v) * width;
    for (int32_t j = 0; j < width; ++j)
      sum[j] += row[j];
  }
  mean.resize(width);
  scale.resize(width);
  for (int32_t j = 0; j < width; ++j)
    mean[j] = static_cast<float>(sum[j] / count);
  for (NodeId v : ids) {
    const float *row = table + static_cast<size_t>(v) * width;
    for (int32_t j = 0; j < width; ++j) {
      double d = row[j] - static_cast<double>(mean[j]);
      sumSquares[j] += d * d;
    }
  }
  for (int32_t j = 0; j < width; ++j)
    scale[j] = static_cast<float>(
        1.0 / (std::sqrt(sumSquares[j] / count) + kStandardizeEpsilon));
}

/// Standardises the first `columns` columns of a [rows][inStride] double
/// block into the first `columns` columns of a [rows][outStride] float
/// block (outStride 0: `columns`). Row by row, so that the loops run along
/// contiguous columns; each column's sums still add its rows in order (the
/// same values as column by column).
void standardizeSmall(const double *in, int32_t rows, int32_t inStride,
                      int32_t columns, float *out, std::vector<double> &scratch,
                      int32_t outStride = 0) {
  if (outStride == 0)
    outStride = columns;
  scratch.assign(2 * static_cast<size_t>(columns), 0.0);
  double *mean = scratch.data(), *scale = mean + columns;
  for (int32_t r = 0; r < rows; ++r)
    for (int32_t j = 0; j < columns; ++j)
      mean[j] += in[r * inStride + j];
  for (int32_t j = 0; j < columns; ++j)
    mean[j] /= rows;
  for (int32_t r = 0; r < rows; ++r)
    for (int32_t j = 0; j < columns; ++j) {
      double d = in[r * inStride + j] - mean[j];
      scale[j] += d * d;
    }
  for (int32_t j = 0; j < columns; ++j)
    scale[j] = 1.0 / (std::sqrt(scale[j] / rows) + kStandardizeEpsilon);
  for (int32_t r = 0; r < rows; ++r)
    for (int32_t j = 0; j < columns; ++j)
      out[r * outStride + j] =
          static_cast<float>((in[r * inStride + j] - mean[j]) * scale[j]);
}

void softmax(const float *scores, int32_t count, std::vector<double> &out) {
  out.resize(count);
  double best = *std::max_element(scores, scores + count);
  double total = 0;
  for (int32_t i = 0; i < count; ++i)
    total += (out[i] = std::exp(scores[i] - best));
  for (int32_t i = 0; i < count; ++i)
    out[i] /= total;
}

/// out[j] = (x[j] - mean[j]) * scale[j].
DOPPLER_VECTOR_CLONES
void standardizeRow(const float *x, const float *mean, const float *scale,
                    int32_t width, float *out) {
  for (int32_t j = 0; j < width; ++j)
    out[j] = (x[j] - mean[j]) * scale[j];
}

} // namespace

void EpisodeRecord::clear(int32_t nodes, int32_t devices, int32_t features) {
  numNodes = nodes;
  numDevices = devices;
  deviceFeatures = features;
  node.clear();
  device.clear();
  selStep.clear();
  selOffsets.assign(1, 0);
  selCandidates.clear();
  selFeatures.clear();
  selChosenRow.clear();
  selTeacherRows.clear();
  selPriorRows.clear();
  plcFeatures.clear();
  plcTeacherRows.clear();
  plcPriorRows.clear();
  plcJoinRows.clear();
  plcMemoryRows.clear();
  plcLookaheadRows.clear();
  selDecisions = selMatches = plcDecisions = plcMatches = 0;
}

int32_t RolloutEngine::chooseAction(const float *scores, int32_t count,
                                    bool sample, double temperature,
                                    Random &random) {
  if (!sample)
    return static_cast<int32_t>(std::max_element(scores, scores + count) -
                                scores);
  if (temperature != 1.0) {
    scaledScores_.assign(scores, scores + count);
    for (float &s : scaledScores_)
      s = static_cast<float>(s / temperature);
    scores = scaledScores_.data();
  }
  softmax(scores, count, probabilities_);
  double u = random.uniform();
  for (int32_t i = 0; i < count; ++i) {
    u -= probabilities_[i];
    if (u < 0)
      return i;
  }
  return count - 1;
}

DOPPLER_NO_TRAPPING_MATH
void RolloutEngine::scoreCandidates(ArrayView<NodeId> candidates,
                                    const ScorerWeights &w,
                                    const NodeTables &tables) {
  const int32_t H = w.hidden, K = w.headHidden, S = w.sumWidth;
  const bool projected = w.selBottomGain != nullptr;
  const int32_t count = static_cast<int32_t>(candidates.size());
  columnStatistics(tables.bottomPathSums, S, candidates, bottomMean_,
                   bottomScale_, columnScratch_);
  columnStatistics(tables.topPathSums, S, candidates, topMean_, topScale_,
                   columnScratch_);
  // Each candidate's GEMM inputs as one row ([feature MLP | bottom | top],
  // or the feature MLP alone when the sums are projected), then one GEMM
  // for all of them: the step's dominant cost, which a vector-matrix
  // product per candidate would spend reloading the weights.
  const size_t width = static_cast<size_t>(projected ? H : 3 * H);
  candidateRows_.resize(count * width);
  candidatePre_.resize(static_cast<size_t>(count) * K);
  scores_.resize(count);
  for (int32_t c = 0; c < count; ++c) {
    NodeId v = candidates[c];
    float *row = &candidateRows_[c * width];
    std::copy(w.selFeatureBias, w.selFeatureBias + H, row);
    accumulateVectorMatrix(&candidateFeatures_[c * kFeatureCount],
                           kFeatureCount, w.selFeatureWeight, H, row);
    for (int32_t j = 0; j < H; ++j)
      row[j] = leakyRelu(row[j]);
    const float *bottom = tables.bottomPathSums + static_cast<size_t>(v) * S;
    const float *top = tables.topPathSums + static_cast<size_t>(v) * S;
    const float *nodeTerm = tables.selNodeTerm + static_cast<size_t>(v) * K;
    float *pre = &candidatePre_[c * static_cast<size_t>(K)];
    if (projected) {
      // node + gain * std(bottom) + gain * std(top); the GEMM below adds
      // the feature block.
      for (int32_t k = 0; k < K; ++k)
        pre[k] = nodeTerm[k] +
                 (bottom[k] - bottomMean_[k]) * bottomScale_[k] *
                     w.selBottomGain[k] +
                 (top[k] - topMean_[k]) * topScale_[k] * w.selTopGain[k];
    } else {
      standardizeRow(bottom, bottomMean_.data(), bottomScale_.data(), H,
                     row + H);
      standardizeRow(top, topMean_.data(), topScale_.data(), H, row + 2 * H);
      std::copy(nodeTerm, nodeTerm + K, pre);
    }
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, count, K,
              static_cast<int>(width), 1.0f, candidateRows_.data(),
              static_cast<int>(width), w.selHeadFeature, K, 1.0f,
              candidatePre_.data(), K);
  for (int32_t c = 0; c < count; ++c) {
    const float *pre = &candidatePre_[c * static_cast<size_t>(K)];
    float score = w.selOutBias;
    for (int32_t k = 0; k < K; ++k)
      score += leakyRelu(pre[k]) * w.selOutWeight[k];
    scores_[c] = score;
  }
}

void RolloutEngine::standardizeDeviceSums(int32_t numDevices,
                                          const ScorerWeights &w) {
  const int32_t S = w.sumWidth;
  deviceSumsStd_.resize(static_cast<size_t>(numDevices) * S);
  standardizeSmall(deviceSums_.data(), numDevices, S, S, deviceSumsStd_.data(),
                   columnScratch_);
  hidden_.resize(w.hidden);
  preActivation_.resize(w.headHidden);
}

void RolloutEngine::scoreDevices(NodeId v, int32_t numDevices,
                                 const ScorerWeights &w,
                                 const NodeTables &tables) {
  // Standardise the per-device sums across devices.
  standardizeDeviceSums(numDevices, w);
  scores_.resize(numDevices);
  const float *nodeTerm =
      tables.plcNodeTerm + static_cast<size_t>(v) * w.headHidden;
  for (int32_t d = 0; d < numDevices; ++d)
    scores_[d] = deviceScore(nodeTerm, d, w);
  stats_.plcScored += numDevices;
}

namespace {

/// The critical-path heuristic's SEL choice, as placeCriticalPath makes it
/// (Heuristics.cpp; TrainerTest's ImitationWithThePriorBecomesTheHeuristic
/// holds the two equal): the largest b-level; among equals, of the first
/// kCriticalPathTieWindow in the environment's order (the candidates'
/// order), the one with the smallest min over devices of est(v, d), the
/// earliest among equal starts; the search stops at one that can start
/// when the first device is free. `scratch` holds numDevices doubles.
constexpr int32_t kCriticalPathTieWindow = 16;

int32_t criticalPathPick(const PlacementEnvironment &env,
                         ArrayView<NodeId> candidates,
                         const double *bottomLevels, double *scratch) {
  const int32_t count = static_cast<int32_t>(candidates.size());
  int32_t first = 0;
  for (int32_t c = 1; c < count; ++c)
    if (bottomLevels[candidates[c]] > bottomLevels[candidates[first]])
      first = c;
  const int32_t D = env.numDevices();
  auto soonestStart = [&](NodeId v) {
    env.earliestStarts(v, scratch);
    return *std::min_element(scratch, scratch + D);
  };
  // Dated only once a tie shows up (without one there is nothing to break).
  int32_t pick = first, dated = 0;
  double soonest = 0, firstFree = 0;
  for (int32_t c = first + 1; c < count && dated < kCriticalPathTieWindow;
       ++c) {
    if (bottomLevels[candidates[c]] != bottomLevels[candidates[first]])
      continue;
    if (dated == 0) {
      firstFree = env.deviceFreeTime(0);
      for (DeviceId d = 1; d < D; ++d)
        firstFree = std::min(firstFree, env.deviceFreeTime(d));
      soonest = soonestStart(candidates[first]);
      dated = 1;
    }
    if (soonest <= firstFree)
      break;
    ++dated;
    double start = soonestStart(candidates[c]);
    if (start < soonest) {
      pick = c;
      soonest = start;
    }
  }
  return pick;
}

/// Appends one SEL segment: the candidates, their standardised features,
/// the choice, the teacher's rows (every candidate with the largest
/// b-level) and the heuristic's row.
void recordSelection(EpisodeRecord &record, int32_t step,
                     ArrayView<NodeId> candidates, const double *bottomLevels,
                     const std::vector<float> &features, int32_t chosen,
                     int32_t heuristicPick) {
  const int32_t count = static_cast<int32_t>(candidates.size());
  double best = -std::numeric_limits<double>::infinity();
  for (NodeId v : candidates)
    best = std::max(best, bottomLevels[v]);
  int32_t offset = record.selOffsets.back();
  bool match = false;
  for (int32_t c = 0; c < count; ++c)
    if (bottomLevels[candidates[c]] == best) {
      record.selTeacherRows.push_back(offset + c);
      match |= c == chosen;
    }
  record.selStep.push_back(step);
  record.selCandidates.insert(record.selCandidates.end(), candidates.begin(),
                              candidates.end());
  record.selFeatures.insert(record.selFeatures.end(), features.begin(),
                            features.end());
  record.selChosenRow.push_back(offset + chosen);
  record.selPriorRows.push_back(offset + heuristicPick);
  record.selOffsets.push_back(offset + count);
  ++record.selDecisions;
  record.selMatches += match;
}

/// Earliest start of device `d` in a [D][kNumDeviceFeatures] block.
inline double earliestStart(const double *rawDeviceFeatures, int32_t d) {
  return rawDeviceFeatures[d * kNumDeviceFeatures + kEarliestStartFeature];
}

/// Appends one PLC step: the teacher's rows (every device with the
/// smallest est), the heuristics' rows and the standardised features.
void recordPlacement(EpisodeRecord &record, int32_t step, int32_t numDevices,
                     int32_t features, const double *rawDeviceFeatures,
                     const std::vector<float> &deviceFeatures, DeviceId device,
                     DeviceId heuristicDevice, DeviceId joinDevice,
                     DeviceId lookaheadDevice,
                     const std::vector<char> &overflows) {
  const int32_t D = numDevices;
  double best = std::numeric_limits<double>::infinity();
  for (int32_t d = 0; d < D; ++d)
    best = std::min(best, earliestStart(rawDeviceFeatures, d));
  bool match = false;
  for (int32_t d = 0; d < D; ++d)
    if (earliestStart(rawDeviceFeatures, d) == best) {
      record.plcTeacherRows.push_back(step * D + d);
      match |= d == device;
    }
  record.plcPriorRows.push_back(step * D + heuristicDevice);
  if (joinDevice >= 0)
    record.plcJoinRows.push_back(step * D + joinDevice);
  if (lookaheadDevice >= 0)
    record.plcLookaheadRows.push_back(step * D + lookaheadDevice);
  for (int32_t d = 0; d < static_cast<int32_t>(overflows.size()); ++d)
    if (overflows[d])
      record.plcMemoryRows.push_back(step * D + d);
  record.plcFeatures.insert(record.plcFeatures.end(), deviceFeatures.begin(),
                            deviceFeatures.begin() + D * features);
  ++record.plcDecisions;
  record.plcMatches += match;
}

} // namespace

int32_t RolloutEngine::selectNode(const PlacementEnvironment &env,
                                  int32_t step, ArrayView<NodeId> candidates,
                                  const ScorerWeights &weights,
                                  const NodeTables &tables,
                                  const RolloutOptions &options, Random &random,
                                  EpisodeRecord *record, StepTrace *stepTrace) {
  const int32_t count = static_cast<int32_t>(candidates.size());
  if (count < 2) {
    if (stepTrace)
      stepTrace->candidateProbability.assign(1, 1.0);
    return 0;
  }
  // Candidate features, standardised across the candidates.
  candidateFeatures_.resize(static_cast<size_t>(count) * kFeatureCount);
  rawCandidateFeatures_.resize(static_cast<size_t>(count) * kFeatureCount);
  for (int32_t c = 0; c < count; ++c)
    for (int32_t f = 0; f < kFeatureCount; ++f)
      rawCandidateFeatures_[c * kFeatureCount + f] =
          tables.features[candidates[c] * kFeatureCount + f];
  standardizeSmall(rawCandidateFeatures_.data(), count, kFeatureCount,
                   kFeatureCount, candidateFeatures_.data(), columnScratch_);
  const int32_t heuristicPick =
      criticalPathPick(env, candidates, tables.bottomLevels,
                       startScratch_.data());
  auto score = [&] {
    scoreCandidates(candidates, weights, tables);
    scores_[heuristicPick] += weights.selPrior;
  };
  int32_t chosen = 0;
  if (options.epsilon > 0 && random.uniform() < options.epsilon) {
    chosen = static_cast<int32_t>(random.below(count));
    if (stepTrace)
      score();
  } else {
    score();
    chosen = chooseAction(scores_.data(), count, options.sample,
                          options.selectionTemperature, random);
  }
  ++stats_.selDecisions;
  stats_.selOffRule += chosen != heuristicPick;
  if (stepTrace)
    softmax(scores_.data(), count, stepTrace->candidateProbability);
  if (record)
    recordSelection(*record, step, candidates, tables.bottomLevels,
                    candidateFeatures_, chosen, heuristicPick);
  return chosen;
}

DeviceId RolloutEngine::placeNode(PlacementEnvironment &env, int32_t step,
                                  NodeId v, int32_t numDevices,
                                  const ScorerWeights &weights,
                                  const NodeTables &tables,
                                  const RolloutOptions &options, Random &random,
                                  EpisodeRecord *record, StepTrace *stepTrace) {
  const int32_t D = numDevices, F = weights.deviceFeatures;
  if (D < 2) {
    if (stepTrace)
      stepTrace->deviceProbability.assign(1, 1.0);
    return 0;
  }
  env.deviceFeatures(v, rawDeviceFeatures_.data(),
                     weights.joinColumn ? kJoinSplitFeature + 1
                                        : kNumMethodDeviceFeatures);
  const int32_t envColumns =
      kNumMethodDeviceFeatures + (weights.joinColumn ? 1 : 0);
  standardizeSmall(rawDeviceFeatures_.data(), D, kNumDeviceFeatures, envColumns,
                   deviceFeatures_.data(), columnScratch_, F);
  // The completion makespans, standardised across devices; 0 at steps
  // without them.
  const DeviceId completionDevice =
      lookahead_.on ? lookAhead(env, v)
      : lookahead_.horizon
          ? horizon_.evaluate(env, v, stepCandidates_,
                              lookaheadMakespans_.data())
          : DeviceId(-1);
  // The horizon's estimates steer the prior (below), not the column: the
  // network reads 0 there, as past the budget without them.
  if (weights.lookaheadColumn) {
    if (lookahead_.on)
      standardizeSmall(lookaheadMakespans_.data(), D, 1, 1,
                       &deviceFeatures_[envColumns], columnScratch_, F);
    else
      for (int32_t d = 0; d < D; ++d)
        deviceFeatures_[d * F + envColumns] = 0;
  }
  // The memory pressure is the model's last column, taken as it is (a
  // ratio to capacity whose value, not its rank among devices, says
  // whether the node fits), capped.
  overflows_.clear();
  if (weights.memoryColumn) {
    env.memoryPressure(v, pressure_.data());
    overflows_.resize(D);
    for (int32_t d = 0; d < D; ++d)
      overflows_[d] = env.raisesOverflow(pressure_[d], d);
  }
  if (weights.memoryColumn)
    for (int32_t d = 0; d < D; ++d)
      deviceFeatures_[d * F + F - 1] =
          static_cast<float>(std::min(pressure_[d], kMemoryPressureCap));
  // The heuristics' devices (Heuristics.h), over the raw feature rows.
  const double *raw = rawDeviceFeatures_.data();
  const DeviceId heuristicDevice = earliestStartDevice(
      env, raw + kEarliestStartFeature, kNumDeviceFeatures);
  const DeviceId joinDevice =
      weights.joinColumn
          ? joinAwareDevice(D, raw + kEarliestStartFeature,
                            raw + kJoinSplitFeature, kNumDeviceFeatures)
          : -1;
  // The lookahead prior's device: the shortest completion's, or past the
  // budget the better rule's -- unless bounded-horizon completions
  // (RolloutOptions::horizonNodes) estimate another device shorter.
  DeviceId lookaheadDevice = completionDevice;
  if (lookahead_.followRule) {
    lookaheadDevice = lookahead_.joinAware ? joinDevice : heuristicDevice;
    if (lookahead_.horizon && completionDevice >= 0 && lookaheadDevice >= 0 &&
        lookaheadMakespans_[completionDevice] <
            lookaheadMakespans_[lookaheadDevice])
      lookaheadDevice = completionDevice;
  }
  auto score = [&] {
    scoreDevices(v, D, weights, tables);
    for (DeviceId d = 0; d < D; ++d)
      scores_[d] = withPriors(scores_[d], d, weights, heuristicDevice,
                              joinDevice, lookaheadDevice);
  };
  DeviceId device = 0;
  if (options.epsilon > 0 && random.uniform() < options.epsilon) {
    device = static_cast<DeviceId>(random.below(D));
    if (stepTrace)
      score();
  } else if (!options.sample && !stepTrace && weights.plcFeatureGram) {
    // The greedy argmax needs only the devices the bound cannot rule out.
    device = bestDeviceBounded(v, D, weights, tables, heuristicDevice,
                               joinDevice, lookaheadDevice);
  } else {
    score();
    device = chooseAction(scores_.data(), D, options.sample,
                          options.placementTemperature, random);
  }
  ++stats_.plcDecisions;
  stats_.plcOffRule += device != heuristicDevice;
  stats_.plcOffPrior += lookaheadDevice >= 0 && device != lookaheadDevice;
  if (stepTrace)
    softmax(scores_.data(), D, stepTrace->deviceProbability);
  if (record)
    recordPlacement(*record, step, D, F, rawDeviceFeatures_.data(),
                    deviceFeatures_, device, heuristicDevice, joinDevice,
                    lookaheadDevice, overflows_);
  if (lookahead_.on)
    keepCompletion(completionDevice >= 0 ? device : -1);
  return device;
}

DeviceId RolloutEngine::lookAhead(const PlacementEnvironment &env, NodeId v) {
  Lookahead &l = lookahead_;
  const int32_t D = env.numDevices();
  // The device the kept completion gives v completes to that same
  // placement: the rule, run around the placed nodes and v, meets the same
  // states and makes the same choices as in the run that made it. So one
  // completion a step is known, and the step's best is never worse than
  // the last step's (nor, at the first step, than the rule's placement).
  const DeviceId known = l.kept.empty() ? -1 : l.kept[v];
  ArrayView<DeviceId> placed = env.assignment();
  l.forced.assign(placed.begin(), placed.end());
  DeviceId best = -1;
  for (DeviceId d = 0; d < D; ++d) {
    if (d == known) {
      l.completions[d].swap(l.kept);
      lookaheadMakespans_[d] = l.keptMakespan;
    } else {
      l.forced[v] = d;
      l.completions[d] =
          completePlacement(env.graph(), D, l.bottom, l.joinAware, l.forced);
      lookaheadMakespans_[d] = l.simulator->run(l.completions[d]);
    }
    if (best < 0 || lookaheadMakespans_[d] < lookaheadMakespans_[best])
      best = d;
  }
  return best;
}

void RolloutEngine::keepCompletion(DeviceId device) {
  Lookahead &l = lookahead_;
  if (device < 0) {
    l.kept.clear();
    return;
  }
  l.kept.swap(l.completions[device]);
  l.keptMakespan = lookaheadMakespans_[device];
}

void RolloutEngine::setUpLookahead(const Graph &graph, int32_t numDevices,
                                   const ScorerWeights &weights,
                                   const RolloutOptions &options) {
  Lookahead &l = lookahead_;
  l.kept.clear();
  const int32_t D = numDevices;
  // Every step or none: the two runs that pick the rule and D - 1
  // completions a step (one is known), in doubles (no overflow at 4096
  // devices). A prefix of steps on a graph too large for the whole would
  // cost its share of the budget for a few nodes' worth of lookahead.
  const double runs = 2 + double(graph.numNodes()) * (D - 1);
  const double runVisits = double(rolloutRunVisits(graph, D));
  const double budget = double(options.lookaheadVisits);
  l.on = weights.lookaheadColumn && D >= 2 && runs * runVisits <= budget;
  // A graph too large for the completions still gets the rule they
  // complete with: the two runs that pick it, if they fit the budget (not
  // in imitation, whose budget is 0), and the lookahead prior on that
  // rule's device at every step (the join-aware device needs the join
  // column). Without it the policy, trained where the completions decide,
  // leans on the join prior alone: on 30 generated graphs of 67-1,960
  // nodes at D = 8 it was 1.0534x the better heuristic on a 901-node DAG
  // where critical path is better.
  l.followRule = !l.on && weights.lookaheadColumn && weights.joinColumn &&
                 D >= 2 && 2 * runVisits <= budget;
  // ... and, where asked, bounded-horizon completions (Horizon.h) that
  // may overrule the rule's device.
  l.horizon = l.followRule && options.horizonNodes > 0;
  if (l.horizon) {
    l.bottom = computeBottomLevels(graph).value;
    horizon_.reset(graph, D, l.bottom, options.horizonNodes);
    lookaheadMakespans_.resize(D);
  }
  if (!l.on && !l.followRule)
    return;
  l.simulator = std::make_unique<Simulator>(graph, D);
  // The better heuristic on this graph (join-aware on a tie, as the
  // rollout policy).
  const double joinAware = l.simulator->run(placeJoinAware(graph, D));
  const double criticalPath = l.simulator->run(placeCriticalPath(graph, D));
  l.joinAware = joinAware <= criticalPath;
  if (!l.on)
    return;
  l.bottom = computeBottomLevels(graph).value;
  l.completions.resize(D);
  lookaheadMakespans_.resize(D);
}

void RolloutEngine::run(PlacementEnvironment &env, const Graph &graph,
                        int32_t numDevices, StartEstimate estimate,
                        const ScorerWeights &weights, const NodeTables &tables,
                        const RolloutOptions &options, Random &random,
                        EpisodeRecord *record, std::vector<StepTrace> *trace) {
  const int32_t N = graph.numNodes(), D = numDevices, S = weights.sumWidth;
  const int32_t F = weights.deviceFeatures;
  env.reset(graph, D, estimate);
  if (options.memoryCapacities)
    env.setMemoryCapacities(*options.memoryCapacities);
  pressure_.resize(D);
  startScratch_.resize(D);
  if (record)
    record->clear(N, D, F);
  if (trace)
    trace->clear();
  deviceSums_.assign(static_cast<size_t>(D) * S, 0.0);
  rawDeviceFeatures_.resize(static_cast<size_t>(D) * kNumDeviceFeatures);
  deviceFeatures_.resize(static_cast<size_t>(D) * F);
  setUpLookahead(graph, D, weights, options);
  stats_ = RolloutStats();
  stats_.steps = N;

  // The candidate window (RolloutOptions::candidateWindow) keeps the ready
  // set ordered by bottom level as nodes arrive and leave, so a step costs
  // O(window + log ready) rather than O(ready).
  const bool windowed = options.candidateWindow > 0;
  if (windowed)
    candidateOrder_.reset(N, tables.bottomLevels);
  for (int32_t step = 0; step < N; ++step) {
    ArrayView<NodeId> candidates = env.candidates();
    if (windowed) {
      candidateOrder_.sync(env);
      if (candidates.size() > static_cast<size_t>(options.candidateWindow)) {
        candidateOrder_.firstInEnvironmentOrder(options.candidateWindow,
                                                windowCandidates_);
        candidates = ArrayView<NodeId>(windowCandidates_);
      }
    }
    stepCandidates_ = candidates;
    StepTrace *stepTrace = nullptr;
    if (trace) {
      trace->emplace_back();
      stepTrace = &trace->back();
      stepTrace->candidates.assign(candidates.begin(), candidates.end());
    }
    const NodeId v = candidates[selectNode(env, step, candidates, weights,
                                           tables,
                                           options, random, record, stepTrace)];
    const DeviceId device = placeNode(env, step, v, D, weights, tables, options,
                                      random, record, stepTrace);

    env.step(v, device);
    if (windowed)
      candidateOrder_.remove(v);
    const float *summand = tables.deviceSummands + static_cast<size_t>(v) * S;
    double *sum = &deviceSums_[static_cast<size_t>(device) * S];
    for (int32_t j = 0; j < S; ++j)
      sum[j] += summand[j];
    if (record) {
      record->node.push_back(v);
      record->device.push_back(device);
    }
    if (stepTrace) {
      stepTrace->node = v;
      stepTrace->device = device;
    }
  }
}

static std::vector<double> judgedCapacities(const Graph &graph,
                                            int32_t numDevices,
                                            const std::vector<double> &caps) {
  bool limited = std::any_of(caps.begin(), caps.end(),
                             [](double c) { return std::isfinite(c); });
  if (!graph.hasOutputBytes() || !limited ||
      caps.size() != static_cast<size_t>(numDevices))
    return {};
  return caps;
}

static SimulatorOptions judgeOptions(bool memory) {
  SimulatorOptions options;
  options.trackMemory = memory;
  return options;
}

PlacementJudge::PlacementJudge(const Graph &graph, int32_t numDevices,
                               const std::vector<double> &capacities)
    : capacities_(judgedCapacities(graph, numDevices, capacities)),
      simulator_(graph, numDevices, judgeOptions(!capacities_.empty())) {}

double PlacementJudge::run(ArrayView<DeviceId> assignment) {
  double makespan = simulator_.run(assignment);
  overflow_ = relative_ = 0;
  if (!capacities_.empty()) {
    const std::vector<double> &peaks = simulator_.schedule().peakMemory;
    for (size_t d = 0; d < capacities_.size(); ++d) {
      double excess = std::max(0.0, peaks[d] - capacities_[d]);
      overflow_ += excess;
      relative_ += excess / std::max(1.0, capacities_[d]);
    }
  }
  return makespan;
}
