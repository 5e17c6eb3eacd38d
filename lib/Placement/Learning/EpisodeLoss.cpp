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

namespace {

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
            .index_select(0, int64FromInt32(network.config.heuristicPrior
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
