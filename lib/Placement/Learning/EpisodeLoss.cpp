//===- EpisodeLoss.cpp - The batched loss of a recorded episode -----------===//

#include "PolicyNetwork.h"
#include "TensorHelpers.h"

#include <cmath>

using namespace doppler::placement;
using namespace doppler::placement::learning;
using torch::Tensor;
using doppler::placement::learning::detail::int32Tensor;
using doppler::placement::learning::detail::int64FromInt32;
using doppler::placement::learning::detail::leaky;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

namespace {

/// One row of SelectionScores' forward: the pre-activations `pre` [K] and
/// the dot product of their leaky ReLU with `w` (in 8 interleaved partial
/// sums, so that it vectorises).
DOPPLER_AVX2_CLONES DOPPLER_NO_TRAPPING_MATH
float selectionRow(const float *__restrict node,
                   const float *__restrict feature,
                   const float *__restrict bottom,
                   const float *__restrict bottomGain,
                   const float *__restrict top,
                   const float *__restrict topGain,
                   const float *__restrict w, int64_t K,
                   float *__restrict pre) {
  float partial[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t k = 0;
  for (; k + 8 <= K; k += 8)
    for (int64_t j = 0; j < 8; ++j) {
      float v = node[k + j] + feature[k + j] +
                bottom[k + j] * bottomGain[k + j] + top[k + j] * topGain[k + j];
      pre[k + j] = v;
      // leaky(v) as v times a selected slope (v * 1 is v), so that it
      // vectorises.
      partial[j] += v * (v > 0 ? 1.0f : kLeakySlope) * w[k + j];
    }
  float score = 0;
  for (; k < K; ++k) {
    float v = node[k] + feature[k] + bottom[k] * bottomGain[k] +
              top[k] * topGain[k];
    pre[k] = v;
    score += (v > 0 ? v : kLeakySlope * v) * w[k];
  }
  for (float x : partial)
    score += x;
  return score;
}

/// One row of SelectionScores' backward, from the score's gradient `g`:
/// the pre-activations' gradient `dPre` [K], and the row's terms of the
/// output weight's and the gains' gradients.
DOPPLER_AVX2_CLONES DOPPLER_NO_TRAPPING_MATH
void selectionRowBackward(float g, const float *__restrict pre,
                          const float *__restrict bottom,
                          const float *__restrict top,
                          const float *__restrict w, int64_t K,
                          float *__restrict dPre, float *__restrict dw,
                          float *__restrict dBottomGain,
                          float *__restrict dTopGain) {
  for (int64_t k = 0; k < K; ++k) {
    const float v = pre[k], slope = v > 0 ? 1.0f : kLeakySlope;
    dw[k] += g * (v * slope);
    const float d = g * w[k] * slope;
    dPre[k] = d;
    dBottomGain[k] += d * bottom[k];
    dTopGain[k] += d * top[k];
  }
}

/// out[k] = a[k] * gain[k] over `count` rows of width K.
DOPPLER_AVX2_CLONES
void scaleColumns(const float *__restrict a, const float *__restrict gain,
                  int64_t rows, int64_t K, float *__restrict out) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < K; ++k)
      out[r * K + k] = a[r * K + k] * gain[k];
}

/// SEL's scores with projected sums (ModelConfig::projectSums), every row
/// of the record at once, as one autograd node: for row r, candidate v,
///   pre = nodeTerm[v] + featureTerm[r] + std(bottom)[r] * bottomGain
///         + std(top)[r] * topGain   (sums standardised per segment),
///   score = outWeight . leaky(pre) + outBias (+ prior on the heuristic's
///   row).
/// The values of the chain of LibTorch operations it replaces (the same but
/// for the rounding of the output dot product and of the gradients' sums),
/// without its dozen nodes and [rows][K] temporaries.
struct SelectionScores : torch::autograd::Function<SelectionScores> {
  static Tensor forward(AutogradContext *ctx, const Tensor &featureTermIn,
                        const Tensor &nodeTerm, const Tensor &bottomSums,
                        const Tensor &topSums, const Tensor &bottomGain,
                        const Tensor &topGain, const Tensor &outWeight,
                        const Tensor &outBias, const Tensor &prior,
                        const EpisodeRecord *record) {
    Tensor featureTerm = featureTermIn.contiguous();
    const int64_t K = featureTerm.size(1);
    const int64_t rows = featureTerm.size(0);
    const int32_t segments = record->numSelSegments();
    Tensor pre = torch::empty({rows, K});
    Tensor bottom = torch::empty({rows, K}), top = torch::empty({rows, K});
    Tensor sigma = torch::empty({2 * static_cast<int64_t>(segments), K});
    Tensor scores = torch::empty({rows});
    const float *node = nodeTerm.data_ptr<float>(),
                *feature = featureTerm.data_ptr<float>(),
                *bottomTable = bottomSums.data_ptr<float>(),
                *topTable = topSums.data_ptr<float>(),
                *bg = bottomGain.data_ptr<float>(),
                *tg = topGain.data_ptr<float>(),
                *w = outWeight.data_ptr<float>();
    const float bias = outBias.item<float>();
    float *p = pre.data_ptr<float>(), *b = bottom.data_ptr<float>(),
          *t = top.data_ptr<float>(), *sg = sigma.data_ptr<float>(),
          *sc = scores.data_ptr<float>();
    std::vector<double> scratch(3 * K);
    const NodeId *ids = record->selCandidates.data();
    for (int32_t s = 0; s < segments; ++s) {
      const int32_t begin = record->selOffsets[s],
                    count = record->selOffsets[s + 1] - begin;
      learning::detail::standardizeRows(bottomTable, ids + begin, count, K,
                                        b + begin * K, sg + (2 * s) * K,
                                        scratch.data());
      learning::detail::standardizeRows(topTable, ids + begin, count, K,
                                        t + begin * K, sg + (2 * s + 1) * K,
                                        scratch.data());
    }
    for (int64_t r = 0; r < rows; ++r)
      sc[r] = selectionRow(node + ids[r] * K, feature + r * K, b + r * K, bg,
                           t + r * K, tg, w, K, p + r * K) +
              bias;
    if (prior.defined() && prior.numel() > 0) {
      const float weight = prior.item<float>();
      for (int32_t row : record->selPriorRows)
        sc[row] += weight;
    }
    ctx->save_for_backward(
        {pre, bottom, top, sigma, bottomGain, topGain, outWeight});
    ctx->saved_data["record"] = reinterpret_cast<int64_t>(record);
    ctx->saved_data["nodes"] = nodeTerm.size(0);
    return scores;
  }

  static variable_list backward(AutogradContext *ctx, variable_list grads) {
    variable_list saved = ctx->get_saved_variables();
    const Tensor &pre = saved[0], &bottom = saved[1], &top = saved[2],
                 &sigma = saved[3], &bottomGain = saved[4],
                 &topGain = saved[5], &outWeight = saved[6];
    const auto *record = reinterpret_cast<const EpisodeRecord *>(
        ctx->saved_data["record"].toInt());
    const int64_t N = ctx->saved_data["nodes"].toInt();
    Tensor g = grads[0].contiguous();
    const int64_t rows = pre.size(0), K = pre.size(1);
    const int32_t segments = record->numSelSegments();
    const float *gs = g.data_ptr<float>(), *p = pre.data_ptr<float>(),
                *b = bottom.data_ptr<float>(), *t = top.data_ptr<float>(),
                *sg = sigma.data_ptr<float>(),
                *bg = bottomGain.data_ptr<float>(),
                *tg = topGain.data_ptr<float>(),
                *w = outWeight.data_ptr<float>();
    Tensor dPre = torch::empty({rows, K});
    Tensor dOutWeight = torch::zeros({1, K});
    Tensor dBottomGain = torch::zeros({K}), dTopGain = torch::zeros({K});
    float *dp = dPre.data_ptr<float>(), *dw = dOutWeight.data_ptr<float>(),
          *dbg = dBottomGain.data_ptr<float>(),
          *dtg = dTopGain.data_ptr<float>();
    double biasSum = 0;
    for (int64_t r = 0; r < rows; ++r) {
      biasSum += gs[r];
      selectionRowBackward(gs[r], p + r * K, b + r * K, t + r * K, w, K,
                           dp + r * K, dw, dbg, dtg);
    }
    Tensor dPrior;
    if (ctx->needs_input_grad(8)) {
      double sum = 0;
      for (int32_t row : record->selPriorRows)
        sum += gs[row];
      dPrior = torch::full({1}, static_cast<float>(sum));
    }
    const NodeId *ids = record->selCandidates.data();
    Tensor dNode, dBottom, dTop;
    if (ctx->needs_input_grad(1)) {
      dNode = torch::zeros({N, K});
      float *dn = dNode.data_ptr<float>();
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t k = 0; k < K; ++k)
          dn[ids[r] * K + k] += dp[r * K + k];
    }
    std::vector<float> scaled;
    std::vector<double> scratch(4 * K);
    auto sumsBackward = [&](const float *y, const float *gain, int32_t half,
                            Tensor &out) {
      out = torch::zeros({N, K});
      float *o = out.data_ptr<float>();
      scaled.resize(rows * K);
      scaleColumns(dp, gain, rows, K, scaled.data());
      for (int32_t s = 0; s < segments; ++s) {
        const int32_t begin = record->selOffsets[s],
                      count = record->selOffsets[s + 1] - begin;
        learning::detail::standardizeRowsBackward(
            scaled.data() + begin * K, y + begin * K, sg + (2 * s + half) * K,
            ids + begin, count, K, o, /*add=*/true, scratch.data());
      }
    };
    if (ctx->needs_input_grad(2))
      sumsBackward(b, bg, 0, dBottom);
    if (ctx->needs_input_grad(3))
      sumsBackward(t, tg, 1, dTop);
    return {dPre,
            dNode,
            dBottom,
            dTop,
            dBottomGain,
            dTopGain,
            dOutWeight,
            torch::full({1}, static_cast<float>(biasSum)),
            dPrior,
            Tensor()};
  }
};

/// [size] floats: 1 at `positions`, 0 elsewhere.
Tensor indicator(int64_t size, const std::vector<int32_t> &positions) {
  Tensor out = torch::zeros({size});
  float *data = out.data_ptr<float>();
  for (int32_t i : positions)
    data[i] = 1.0f;
  return out;
}

/// The loss terms summed over SEL and PLC, in that order.
struct LossSums {
  Tensor imitation = torch::zeros({});
  Tensor policy = torch::zeros({});
  Tensor negativeEntropy = torch::zeros({});
  int32_t decisions = 0;
};

/// sum p log p; without an entropy bonus only its value is logged, so it
/// stays out of the backward pass.
Tensor entropyTerm(const Tensor &logp, const LossWeights &weights) {
  Tensor x = weights.entropy != 0 ? logp : logp.detach();
  return (x.exp() * x).sum();
}

/// SEL's log-probabilities: every step that had a choice, all candidates
/// at once ([rows], softmax within each segment of `offsets`).
Tensor selectionLogProbabilities(DualPolicyNetworkImpl &network,
                                 const EncodedGraph &encoded,
                                 const EpisodeRecord &record,
                                 const Tensor &offsets) {
  const int64_t H = network.config.hiddenSize;
  const int64_t rows = static_cast<int64_t>(record.selCandidates.size());
  Tensor candidates = int64FromInt32(record.selCandidates);
  Tensor features =
      torch::from_blob(const_cast<float *>(record.selFeatures.data()),
                       {rows, kFeatureCount}, torch::kFloat32)
          .clone();
  const Tensor &W = network.selHidden->weight;
  if (network.config.projectSums) {
    Tensor featureTerm =
        torch::linear(leaky(network.selFeature(features)), W.narrow(1, 0, H));
    Tensor scores = SelectionScores::apply(
        featureTerm, encoded.selNodeTerm, encoded.bottomSums, encoded.topSums,
        network.selBottomGain, network.selTopGain, network.selOut->weight,
        network.selOut->bias,
        network.config.heuristicPrior ? network.selPrior : torch::zeros({0}),
        &record);
    return segmentLogSoftmax(scores, offsets);
  }
  Tensor pre =
      gatherRows(encoded.selNodeTerm, candidates) +
      torch::linear(leaky(network.selFeature(features)), W.narrow(1, 0, H));
  Tensor bottom =
      segmentStandardize(gatherRows(encoded.bottomSums, candidates), offsets);
  Tensor top =
      segmentStandardize(gatherRows(encoded.topSums, candidates), offsets);
  if (network.config.projectSums)
    pre = pre + bottom * network.selBottomGain + top * network.selTopGain;
  else
    pre = pre + torch::linear(bottom, W.narrow(1, 2 * H, H)) +
          torch::linear(top, W.narrow(1, 3 * H, H));
  Tensor scores = network.selOut(leaky(pre)).view({-1});
  if (network.config.heuristicPrior)
    scores = scores + network.selPrior * indicator(rows, record.selPriorRows);
  return segmentLogSoftmax(scores, offsets);
}

/// Adds SEL's imitation, policy-gradient and entropy terms to `sums`.
void addSelectionTerms(DualPolicyNetworkImpl &network,
                       const EncodedGraph &encoded, const EpisodeRecord &record,
                       const LossWeights &weights, LossSums &sums) {
  const int64_t segments = record.numSelSegments();
  Tensor logp = selectionLogProbabilities(network, encoded, record,
                                          int32Tensor(record.selOffsets));
  // With the prior, imitation targets the heuristic's exact choice (its
  // tie-breaks too), so a fully imitated policy is the heuristic;
  // without it, any candidate with the largest b-level (METHOD s6).
  const bool exactTeacher = network.config.heuristicPrior;
  if (weights.imitation != 0)
    sums.imitation =
        sums.imitation -
        logp.index_select(0,
                          int64FromInt32(exactTeacher ? record.selPriorRows
                                                      : record.selTeacherRows))
            .sum();
  if (weights.policyGradient != 0) {
    std::vector<float> returns(segments);
    for (int64_t s = 0; s < segments; ++s)
      returns[s] = static_cast<float>(weights.returns[record.selStep[s]]);
    Tensor chosen = logp.index_select(0, int64FromInt32(record.selChosenRow));
    sums.policy =
        sums.policy -
        (chosen *
         torch::from_blob(returns.data(), {segments}, torch::kFloat32).clone())
            .sum();
  }
  sums.negativeEntropy = sums.negativeEntropy + entropyTerm(logp, weights);
  sums.decisions += static_cast<int32_t>(segments);
}

/// PLC's log-probabilities: every step, all devices at once ([T][D]).
Tensor placementLogProbabilities(DualPolicyNetworkImpl &network,
                                 const EncodedGraph &encoded,
                                 const EpisodeRecord &record,
                                 const LossWeights &weights,
                                 const Tensor &nodes, const Tensor &devices) {
  const int64_t H = network.config.hiddenSize;
  const int64_t D = record.numDevices,
                T = static_cast<int64_t>(record.node.size());
  Tensor features =
      torch::from_blob(const_cast<float *>(record.plcFeatures.data()),
                       {T * D, record.deviceFeatures}, torch::kFloat32)
          .clone();
  // Embedding sums per device before each step: an exclusive running sum
  // over the placement order.
  Tensor placed = gatherRows(encoded.deviceSummand, nodes); // [T][S]
  const int64_t S = placed.size(1);
  Tensor oneHot = torch::zeros({T, D});
  oneHot.scatter_(1, devices.unsqueeze(1), 1.0f);
  Tensor running = (oneHot.unsqueeze(2) * placed.unsqueeze(1)).cumsum(0);
  Tensor before =
      torch::cat({torch::zeros({1, D, S}), running.narrow(0, 0, T - 1)})
          .view({T * D, S});
  Tensor deviceOffsets = torch::arange(0, (T + 1) * D, D, torch::kInt32);
  const Tensor &W = network.plcHidden->weight;
  Tensor nodeTerm = gatherRows(encoded.plcNodeTerm, nodes)
                        .unsqueeze(1)
                        .expand({T, D, network.config.headHiddenSize})
                        .reshape({T * D, network.config.headHiddenSize});
  Tensor pre = nodeTerm + torch::linear(leaky(network.plcDevice(features)),
                                        W.narrow(1, 0, H));
  Tensor sums = segmentStandardize(before, deviceOffsets);
  pre = network.config.projectSums
            ? pre + sums * network.plcSumGain
            : pre + torch::linear(sums, W.narrow(1, 3 * H, H));
  Tensor scores = network.plcOut(leaky(pre)).view({-1});
  if (network.config.heuristicPrior)
    scores = scores + network.plcPrior * indicator(T * D, record.plcPriorRows);
  if (network.config.joinFeature && weights.joinPrior)
    scores = scores + network.joinPrior * indicator(T * D, record.plcJoinRows);
  if (network.config.memoryFeature && weights.memoryPrior)
    scores =
        scores + network.memoryPrior * indicator(T * D, record.plcMemoryRows);
  // Steps without completions (past the budget, or imitation's) have no
  // row.
  if (network.config.lookahead)
    scores = scores +
             network.lookaheadPrior * indicator(T * D, record.plcLookaheadRows);
  return torch::log_softmax(scores.view({T, D}), 1);
}

/// Adds PLC's imitation, policy-gradient and entropy terms to `sums`.
void addPlacementTerms(DualPolicyNetworkImpl &network,
                       const EncodedGraph &encoded, const EpisodeRecord &record,
                       const LossWeights &weights, LossSums &sums) {
  const int64_t T = static_cast<int64_t>(record.node.size());
  Tensor devices = int64FromInt32(record.device);
  Tensor logp = placementLogProbabilities(network, encoded, record, weights,
                                          int64FromInt32(record.node), devices);
  if (weights.imitation != 0)
    sums.imitation =
        sums.imitation -
        logp.view({-1})
            .index_select(0, int64FromInt32(
                                 weights.imitateJoin ? record.plcJoinRows
                                 : network.config.heuristicPrior
                                     ? record.plcPriorRows
                                     : record.plcTeacherRows))
            .sum();
  if (weights.policyGradient != 0) {
    std::vector<float> returns(weights.returns.begin(),
                               weights.returns.begin() + T);
    Tensor chosen = logp.gather(1, devices.unsqueeze(1)).view({-1});
    sums.policy =
        sums.policy -
        (chosen *
         torch::from_blob(returns.data(), {T}, torch::kFloat32).clone())
            .sum();
  }
  sums.negativeEntropy = sums.negativeEntropy + entropyTerm(logp, weights);
  sums.decisions += static_cast<int32_t>(T);
}

} // namespace

LossTerms doppler::placement::learning::computeEpisodeLoss(
    DualPolicyNetworkImpl &network, const GraphTensors &graph,
    const EncodedGraph &encoded, const EpisodeRecord &record,
    const LossWeights &weights) {
  (void)graph;
  LossSums sums;
  if (record.numSelSegments() > 0)
    addSelectionTerms(network, encoded, record, weights, sums);
  if (record.numDevices >= 2 && !record.node.empty())
    addPlacementTerms(network, encoded, record, weights, sums);

  LossTerms terms;
  terms.decisions = sums.decisions;
  terms.total = weights.imitation * sums.imitation +
                weights.policyGradient * sums.policy +
                weights.entropy * sums.negativeEntropy;
  terms.imitation = sums.imitation.item<double>();
  terms.policy = sums.policy.item<double>();
  terms.entropy = -sums.negativeEntropy.item<double>();
  return terms;
}
