//===- PolicyNetwork.h - LibTorch modules of the dual policy ----*- C++ -*-===//
//
// Internal to the learning library (includes LibTorch; built with
// exceptions). The encoder, the SEL and PLC networks, the per-graph tensors
// they read, the batched loss of a recorded episode, and the model file
// format. Defined in GraphOps.cpp (graph tensors, autograd functions),
// NetworkModules.cpp (modules, encodeGraph, prepareRollout), EpisodeLoss.cpp
// and ModelArchive.cpp (model files).
//
// Shapes: N nodes, E edges, H hidden (128), K head hidden (64).
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_LIB_PLACEMENT_LEARNING_POLICYNETWORK_H
#define DOPPLER_LIB_PLACEMENT_LEARNING_POLICYNETWORK_H

#include "Rollout.h"

#include "Doppler/Placement/Graph.h"
#include "Doppler/Placement/Learning/DualPolicy.h"

#include <torch/torch.h>

#include <optional>
#include <string>
#include <vector>

namespace doppler::placement::learning {

/// ModelConfig::heuristicPrior: the weight both critical-path priors start
/// with. At 4, the default model's greedy placements left the heuristic's
/// (for the worse) on 10 of 198 pairs of graphs larger than it was trained
/// on; at 8, on none, and sampling at SEL temperatures up to 24 still
/// explores (models/README.md).
constexpr float kInitialPrior = 8.0f;

/// Constant per-graph inputs of the network; built once per graph.
struct GraphTensors {
  int32_t numNodes = 0;
  int32_t numEdges = 0;
  torch::Tensor nodeFeatures; ///< [N][5] float, graph-standardised
  torch::Tensor edgeFeatures; ///< [E][1] float, graph-standardised
  /// The graph made undirected: every edge both ways, sharing its feature.
  /// CSR by destination (offsets [N+1], sources and edge ids [2E]) and by
  /// source (for gradients). int32.
  torch::Tensor inOffsets, inSources, inEdges;
  torch::Tensor outOffsets, outTargets, outEdges;
  /// Full edge network: distinct edge feature values [U][1], and for each
  /// one the directed edges (sources, targets; int64) that carry it.
  torch::Tensor uniqueEdgeValues;
  std::vector<torch::Tensor> groupSources, groupTargets;
  /// The same as flat int64 lists (directed edge -> value index).
  torch::Tensor directedSources, directedTargets, directedValue;
  /// b-level and t-level path forests: next node on v's path (-1 where it
  /// ends), and an order in which next[v] precedes v. int32.
  torch::Tensor bottomNext, bottomOrder, topNext, topOrder;
  std::vector<double> bottomLevels;
};

GraphTensors buildGraphTensors(const Graph &graph);

// Differentiable building blocks written as plain loops (float32, CPU).
/// out[i] = x[index[i]] (index int64).
torch::Tensor gatherRows(const torch::Tensor &x, const torch::Tensor &index);
/// out[index[i]] += x[i], `rows` rows (index int64).
torch::Tensor scatterAddRows(const torch::Tensor &x, const torch::Tensor &index,
                             int64_t rows);
/// out[v] = sum over the undirected edges e = {u, v} of x[u] (times
/// gates[e] when `gates` is defined). `graph` must outlive the backward.
torch::Tensor edgeAggregate(const torch::Tensor &x, const torch::Tensor &gates,
                            const GraphTensors &graph);
/// out[v] = sum of x along v's path (next: int32, -1 at the end; order:
/// int32, next[v] before v).
torch::Tensor pathSum(const torch::Tensor &x, const torch::Tensor &next,
                      const torch::Tensor &order);
/// Column-wise (x - mean) / (std + 1e-6) within row segments (offsets:
/// int32, segments + 1), population std.
torch::Tensor segmentStandardize(const torch::Tensor &x,
                                 const torch::Tensor &offsets);
/// One encoder round: LibTorch's GRUCell(relu(messages + bias), h) with
/// the cell's weights and biases, as one autograd node (same values).
torch::Tensor gruRound(const torch::Tensor &messages, const torch::Tensor &bias,
                       const torch::Tensor &h, const torch::Tensor &weightIh,
                       const torch::Tensor &weightHh,
                       const torch::Tensor &biasIh,
                       const torch::Tensor &biasHh);
/// log-softmax within segments of a score vector.
torch::Tensor segmentLogSoftmax(const torch::Tensor &scores,
                                const torch::Tensor &offsets);

class EncoderImpl : public torch::nn::Module {
public:
  explicit EncoderImpl(const ModelConfig &config);
  /// Node embeddings [N][H] (LeakyReLU(0.1) of the last GRU state).
  torch::Tensor forward(const GraphTensors &graph);

private:
  torch::Tensor fullEdgeMessages(const torch::Tensor &h,
                                 const torch::Tensor &matrices,
                                 const GraphTensors &graph);

  ModelConfig config_;
  torch::nn::Linear project_{nullptr};
  torch::nn::Linear edgeHidden_{nullptr};
  // Full: edge feature -> H*H matrix.
  torch::nn::Linear edgeMatrix_{nullptr};
  // Low rank: W(e) = base + up * diag(gate(e)) * down.
  torch::nn::Linear edgeGate_{nullptr};
  torch::nn::Linear down_{nullptr}, up_{nullptr}, base_{nullptr};
  torch::Tensor convolutionBias_;
  torch::nn::GRUCell gru_{nullptr};
};
TORCH_MODULE(Encoder);

class DualPolicyNetworkImpl : public torch::nn::Module {
public:
  explicit DualPolicyNetworkImpl(const ModelConfig &config);
  /// Orthogonal weights, zero biases (METHOD section 5).
  void resetParameters();

  const ModelConfig config;
  Encoder selEncoder{nullptr};
  Encoder plcEncoder{nullptr}; ///< the same module when shared
  // SEL: MLP of candidate features; head Linear(4H, K), Linear(K, 1).
  torch::nn::Linear selFeature{nullptr}, selHidden{nullptr}, selOut{nullptr};
  // PLC: MLPs of device and node features; head of the same shape.
  torch::nn::Linear plcDevice{nullptr}, plcNode{nullptr};
  torch::nn::Linear plcHidden{nullptr}, plcOut{nullptr};
  /// ModelConfig::heuristicPrior: the weight of the heuristic's choice in
  /// SEL's and PLC's scores ([1] each; undefined without the prior).
  torch::Tensor selPrior, plcPrior;
  /// ModelConfig::joinFeature: the join-aware device's prior.
  torch::Tensor joinPrior;
  /// ModelConfig::memoryFeature: the prior of devices the node would
  /// overflow (by the environment's estimate).
  torch::Tensor memoryPrior;
  /// ModelConfig::lookahead: the prior of the device whose completion is
  /// shortest.
  torch::Tensor lookaheadPrior;
  /// ModelConfig::projectSums: gains [K] of the step-standardised projected
  /// b-level and t-level path sums (SEL) and device sums (PLC).
  torch::Tensor selBottomGain, selTopGain, plcSumGain;
};
TORCH_MODULE(DualPolicyNetwork);

/// Everything computed once per episode from the encoder.
struct EncodedGraph {
  torch::Tensor selEmbedding, plcEmbedding; ///< [N][H]
  /// Graph-standardised path sums [N][H]; with ModelConfig::projectSums
  /// their projections by the SEL head's blocks [N][K].
  torch::Tensor bottomSums, topSums;
  /// What PLC sums per device: plcEmbedding, or with projectSums its
  /// projection by the PLC head's block [N][K].
  torch::Tensor deviceSummand;
  torch::Tensor selNodeTerm, plcNodeTerm;   ///< [N][K] (see NodeTables)
};

EncodedGraph encodeGraph(DualPolicyNetworkImpl &network,
                         const GraphTensors &graph);

/// Detached, contiguous float copies for the rollout, and the views into
/// them. Keep it alive while the views are used.
struct RolloutInputs {
  ScorerWeights weights;
  NodeTables tables;
  std::vector<torch::Tensor> storage;
};

RolloutInputs prepareRollout(DualPolicyNetworkImpl &network,
                             const EncodedGraph &encoded,
                             const GraphTensors &graph);

struct LossWeights {
  double imitation = 0;
  double policyGradient = 0;
  double entropy = 0;
  /// Per step (size N) when policyGradient != 0.
  std::vector<double> returns;
  /// Whether the join-aware device's prior is part of the policy (the
  /// trainer leaves it out of imitation episodes, rollout and loss alike).
  bool joinPrior = true;
  /// PLC imitates the join-aware device (EpisodeRecord::plcJoinRows)
  /// instead of the critical-path one.
  bool imitateJoin = false;
  /// The same for the memory prior (ModelConfig::memoryFeature).
  bool memoryPrior = true;
};

struct LossTerms {
  torch::Tensor total;    ///< scalar to differentiate
  double imitation = 0;   ///< -sum of teacher log-probabilities
  double policy = 0;      ///< -sum of return-weighted log-probabilities
  double entropy = 0;     ///< sum over decisions of the entropy
  int32_t decisions = 0;  ///< SEL and PLC decisions with >= 2 options
};

/// The loss of a recorded episode, every step in one batched pass.
LossTerms computeEpisodeLoss(DualPolicyNetworkImpl &network,
                             const GraphTensors &graph,
                             const EncodedGraph &encoded,
                             const EpisodeRecord &record,
                             const LossWeights &weights);

/// Model file: a LibTorch archive holding a format tag, the configuration
/// and every parameter under its module path.
void writeNetwork(DualPolicyNetworkImpl &network,
                  torch::serialize::OutputArchive &archive);
/// The module path of the first parameter holding a NaN or an infinity, or
/// "" when every value is finite. A model is never written with one: a
/// diverged run (costs past what float32 holds) must fail, not save NaNs.
std::string firstNonFiniteParameter(DualPolicyNetworkImpl &network);
/// Reads a network from `archive`; errors name `source` and say what is
/// wrong (not a model, unknown version, a missing or mis-shaped tensor).
std::optional<DualPolicyNetwork>
readNetwork(torch::serialize::InputArchive &archive, const std::string &source,
            std::string *error);
/// Copies parameter values (same configuration) from `from` into `to`.
void copyParameters(DualPolicyNetworkImpl &from, DualPolicyNetworkImpl &to);

/// Opens a model or checkpoint file / memory block; false + error on a
/// file that is missing, truncated, or not a LibTorch archive.
bool openArchive(torch::serialize::InputArchive &archive,
                 const std::string &path, std::string *error);
bool openArchive(torch::serialize::InputArchive &archive, const void *data,
                 size_t size, const std::string &name, std::string *error);
/// Saves to `path` through a temporary file and a rename.
bool saveArchiveAtomically(torch::serialize::OutputArchive &archive,
                           const std::string &path, std::string *error);

/// One line from a LibTorch exception (no backtrace).
std::string describeException(const std::exception &e);

/// Single-threaded LibTorch, once per process (see DualPolicy.h).
void configureTorchThreads();

} // namespace doppler::placement::learning

#endif // DOPPLER_LIB_PLACEMENT_LEARNING_POLICYNETWORK_H
