//===- NetworkModules.cpp - LibTorch modules of the dual policy -----------===//
//
// The encoder and the dual policy network, what an episode computes once
// from them (encodeGraph, prepareRollout), and LibTorch's thread setup.
//
//===----------------------------------------------------------------------===//

#include "PolicyNetwork.h"
#include "TensorHelpers.h"

#include <dlfcn.h>

#include <mutex>

using namespace doppler::placement;
using namespace doppler::placement::learning;
using torch::Tensor;
using doppler::placement::learning::detail::leaky;

//===----------------------------------------------------------------------===//
// Modules.
//===----------------------------------------------------------------------===//

EncoderImpl::EncoderImpl(const ModelConfig &config) : config_(config) {
  const int64_t H = config.hiddenSize;
  project_ = register_module("project",
                             torch::nn::Linear(kFeatureCount, H));
  edgeHidden_ = register_module("edgeHidden", torch::nn::Linear(1, H));
  if (config.edgeNetwork == EdgeNetworkKind::Full) {
    edgeMatrix_ = register_module("edgeMatrix", torch::nn::Linear(H, H * H));
  } else {
    const int64_t r = config.edgeRank;
    edgeGate_ = register_module("edgeGate", torch::nn::Linear(H, r));
    down_ = register_module(
        "down", torch::nn::Linear(torch::nn::LinearOptions(H, r).bias(false)));
    up_ = register_module(
        "up", torch::nn::Linear(torch::nn::LinearOptions(r, H).bias(false)));
    base_ = register_module(
        "base", torch::nn::Linear(torch::nn::LinearOptions(H, H).bias(false)));
  }
  convolutionBias_ = register_parameter("convolutionBias", torch::zeros({H}));
  gru_ = register_module("gru", torch::nn::GRUCell(H, H));
}

Tensor EncoderImpl::fullEdgeMessages(const Tensor &h, const Tensor &matrices,
                                     const GraphTensors &graph) {
  const int64_t N = graph.numNodes;
  const size_t groups = graph.groupSources.size();
  // Few distinct edge features (the usual case): one matmul per value.
  if (groups <= 32) {
    Tensor out;
    for (size_t u = 0; u < groups; ++u) {
      Tensor messages = gatherRows(h, graph.groupSources[u]).mm(matrices[u]);
      Tensor part = scatterAddRows(messages, graph.groupTargets[u], N);
      out = out.defined() ? out + part : part;
    }
    return out;
  }
  // Otherwise a matrix per directed edge.
  Tensor perEdge = matrices.index_select(0, graph.directedValue);
  Tensor messages =
      torch::bmm(gatherRows(h, graph.directedSources).unsqueeze(1), perEdge)
          .squeeze(1);
  return scatterAddRows(messages, graph.directedTargets, N);
}

Tensor EncoderImpl::forward(const GraphTensors &graph) {
  const int64_t H = config_.hiddenSize, N = graph.numNodes;
  Tensor h = torch::relu(project_(graph.nodeFeatures));
  Tensor gates, matrices;
  if (graph.numEdges > 0) {
    if (config_.edgeNetwork == EdgeNetworkKind::Full)
      matrices = edgeMatrix_(torch::relu(edgeHidden_(graph.uniqueEdgeValues)))
                     .view({-1, H, H});
    else
      gates = edgeGate_(torch::relu(edgeHidden_(graph.edgeFeatures)));
  }
  for (int32_t round = 0; round < config_.messagePassingRounds; ++round) {
    Tensor messages;
    if (graph.numEdges == 0)
      messages = torch::zeros({N, H});
    else if (config_.edgeNetwork == EdgeNetworkKind::Full)
      messages = fullEdgeMessages(h, matrices, graph);
    else
      messages =
          base_(edgeAggregate(h, Tensor(), graph)) +
          up_(edgeAggregate(down_(h), gates, graph));
    h = gruRound(messages, convolutionBias_, h, gru_->weight_ih,
                 gru_->weight_hh, gru_->bias_ih, gru_->bias_hh);
  }
  return leaky(h);
}

DualPolicyNetworkImpl::DualPolicyNetworkImpl(const ModelConfig &config)
    : config(config) {
  const int64_t H = config.hiddenSize, K = config.headHiddenSize;
  selEncoder = register_module("selEncoder", Encoder(config));
  // A shared encoder is registered once, so that its parameters are
  // optimised (and saved) once.
  plcEncoder = config.sharedEncoder
                   ? selEncoder
                   : register_module("plcEncoder", Encoder(config));
  selFeature = register_module("selFeature", torch::nn::Linear(kFeatureCount, H));
  selHidden = register_module("selHidden", torch::nn::Linear(4 * H, K));
  selOut = register_module("selOut", torch::nn::Linear(K, 1));
  plcDevice = register_module(
      "plcDevice", torch::nn::Linear(config.deviceFeatureCount(), H));
  plcNode = register_module("plcNode", torch::nn::Linear(kFeatureCount, H));
  plcHidden = register_module("plcHidden", torch::nn::Linear(4 * H, K));
  plcOut = register_module("plcOut", torch::nn::Linear(K, 1));
  if (config.heuristicPrior) {
    selPrior = register_parameter("selPrior", torch::zeros({1}));
    plcPrior = register_parameter("plcPrior", torch::zeros({1}));
  }
  if (config.joinFeature)
    joinPrior = register_parameter("joinPrior", torch::zeros({1}));
  if (config.memoryFeature)
    memoryPrior = register_parameter("memoryPrior", torch::zeros({1}));
  if (config.lookahead)
    lookaheadPrior = register_parameter("lookaheadPrior", torch::zeros({1}));
  if (config.projectSums) {
    selBottomGain = register_parameter("selBottomGain", torch::ones({K}));
    selTopGain = register_parameter("selTopGain", torch::ones({K}));
    plcSumGain = register_parameter("plcSumGain", torch::ones({K}));
  }
  resetParameters();
}

void DualPolicyNetworkImpl::resetParameters() {
  torch::NoGradGuard noGrad;
  for (auto &parameter : parameters()) {
    if (parameter.dim() >= 2)
      torch::nn::init::orthogonal_(parameter);
    else
      parameter.zero_();
  }
  // Adam moves a scalar by about the learning rate per step, so a prior
  // starting at 0 would take thousands of updates to matter. Starting at
  // kInitialPrior, a fresh policy already follows the heuristic almost
  // always (probability e^8 / (e^8 + n - 1) for n options: 0.9987 for 5).
  if (config.heuristicPrior) {
    selPrior.fill_(kInitialPrior);
    plcPrior.fill_(kInitialPrior);
  }
  // Above the critical-path prior, leaning towards the join-aware device
  // where the two disagree (its gains come when whole joins move together).
  // A trainer that follows imitation with RL re-picks the start by
  // evaluation (choosePriorStart); this is the value models without
  // that step (or tried first by it) hold.
  if (config.joinFeature)
    joinPrior.fill_(2 * kInitialPrior);
  // Against every heuristic prior together: a device the node would
  // overflow loses to one it would not, until reinforcement says how much
  // makespan a little overflow is worth.
  if (config.memoryFeature)
    memoryPrior.fill_(-4 * kInitialPrior);
  // Above both heuristics' priors together: a fresh policy follows the
  // completions (the rollout algorithm). A trainer re-picks the start by
  // evaluation before RL (choosePriorStart).
  if (config.lookahead)
    lookaheadPrior.fill_(4 * kInitialPrior);
  // Unit gains: a standardised projection then adds about as much to the
  // pre-activations as the unprojected form does through an orthogonal
  // block (unit-variance inputs, unit-norm rows).
  if (config.projectSums) {
    selBottomGain.fill_(1.0f);
    selTopGain.fill_(1.0f);
    plcSumGain.fill_(1.0f);
  }
}

//===----------------------------------------------------------------------===//
// Episode computations.
//===----------------------------------------------------------------------===//

EncodedGraph doppler::placement::learning::encodeGraph(
    DualPolicyNetworkImpl &network, const GraphTensors &graph) {
  const int64_t H = network.config.hiddenSize, N = graph.numNodes;
  EncodedGraph out;
  out.selEmbedding = network.selEncoder->forward(graph);
  out.plcEmbedding = network.config.sharedEncoder
                         ? out.selEmbedding
                         : network.plcEncoder->forward(graph);
  Tensor whole = torch::tensor({0, static_cast<int32_t>(N)}, torch::kInt32);
  out.bottomSums = segmentStandardize(
      pathSum(out.selEmbedding, graph.bottomNext, graph.bottomOrder),
      whole);
  out.topSums = segmentStandardize(
      pathSum(out.selEmbedding, graph.topNext, graph.topOrder), whole);
  const Tensor &selW = network.selHidden->weight;
  out.deviceSummand = out.plcEmbedding;
  if (network.config.projectSums) {
    out.bottomSums = torch::linear(out.bottomSums, selW.narrow(1, 2 * H, H));
    out.topSums = torch::linear(out.topSums, selW.narrow(1, 3 * H, H));
    out.deviceSummand = torch::linear(
        out.plcEmbedding, network.plcHidden->weight.narrow(1, 3 * H, H));
  }
  out.selNodeTerm = torch::linear(out.selEmbedding, selW.narrow(1, H, H),
                                  network.selHidden->bias);
  const Tensor &plcW = network.plcHidden->weight;
  Tensor nodeLatent = leaky(network.plcNode(graph.nodeFeatures));
  out.plcNodeTerm =
      torch::linear(nodeLatent, plcW.narrow(1, H, H), network.plcHidden->bias) +
      torch::linear(out.plcEmbedding, plcW.narrow(1, 2 * H, H));
  return out;
}

namespace {

/// The largest singular value of a weight matrix, in double, a little
/// above (the bound must not be short of it by SVD's rounding).
double spectralNorm(const Tensor &weight) {
  return torch::linalg::svdvals(weight.to(torch::kFloat64), c10::nullopt)[0]
             .item<double>() *
         (1 + 1e-9);
}

/// ScorerWeights' PLC bound (Rollout.h, DeviceBound.cpp) from the
/// network's weights, its tensors kept in `in.storage`.
void setDeviceBound(DualPolicyNetworkImpl &network, RolloutInputs &in) {
  ScorerWeights &w = in.weights;
  const int64_t H = network.config.hiddenSize;
  const Tensor device = network.plcDevice->weight.to(torch::kFloat64); // [H][F]
  in.storage.push_back(device.t().mm(device).contiguous());            // [F][F]
  w.plcFeatureGram = in.storage.back().data_ptr<double>();
  const Tensor out = network.plcOut->weight.view({-1}).to(torch::kFloat64);
  const double outNorm = out.norm().item<double>() * (1 + 1e-9);
  const Tensor &head = network.plcHidden->weight; // [K][4H]
  w.plcFeatureGain = outNorm * spectralNorm(head.narrow(1, 0, H));
  if (network.config.projectSums) {
    in.storage.push_back(
        (out * network.plcSumGain.to(torch::kFloat64)).abs().contiguous());
    w.plcSumBound = in.storage.back().data_ptr<double>();
  } else {
    w.plcSumNorm = outNorm * spectralNorm(head.narrow(1, 3 * H, H));
  }
}

} // namespace

RolloutInputs doppler::placement::learning::prepareRollout(
    DualPolicyNetworkImpl &network, const EncodedGraph &encoded,
    const GraphTensors &graph) {
  torch::NoGradGuard noGrad;
  const int64_t H = network.config.hiddenSize;
  RolloutInputs in;
  auto keep = [&](const Tensor &t) -> const float * {
    in.storage.push_back(t.detach().to(torch::kFloat32).contiguous());
    return in.storage.back().data_ptr<float>();
  };
  auto transposed = [&](const Tensor &t) { return keep(t.t()); };
  ScorerWeights &w = in.weights;
  w.hidden = static_cast<int32_t>(H);
  w.headHidden = network.config.headHiddenSize;
  w.selFeatureWeight = transposed(network.selFeature->weight);
  w.selFeatureBias = keep(network.selFeature->bias);
  const Tensor &selW = network.selHidden->weight;
  // The per-step input blocks stacked ([3H][K], or the feature block alone
  // with projected sums), so that SEL scores all candidates of a step with
  // one matrix product.
  w.selHeadFeature = transposed(
      network.config.projectSums
          ? selW.narrow(1, 0, H)
          : torch::cat({selW.narrow(1, 0, H), selW.narrow(1, 2 * H, H),
                        selW.narrow(1, 3 * H, H)},
                       1));
  w.selOutWeight = keep(network.selOut->weight.view({-1}));
  w.selOutBias = network.selOut->bias.item<float>();
  w.deviceFeatures = network.config.deviceFeatureCount();
  w.joinColumn = network.config.joinFeature;
  w.memoryColumn = network.config.memoryFeature;
  w.lookaheadColumn = network.config.lookahead;
  w.plcDeviceWeight = transposed(network.plcDevice->weight);
  w.plcDeviceBias = keep(network.plcDevice->bias);
  const Tensor &plcW = network.plcHidden->weight;
  w.plcHeadDevice = transposed(plcW.narrow(1, 0, H));
  if (network.config.projectSums) {
    w.sumWidth = network.config.headHiddenSize;
    w.selBottomGain = keep(network.selBottomGain);
    w.selTopGain = keep(network.selTopGain);
    w.plcSumGain = keep(network.plcSumGain);
  } else {
    w.sumWidth = static_cast<int32_t>(H);
    w.plcHeadSum = transposed(plcW.narrow(1, 3 * H, H));
  }
  w.plcOutWeight = keep(network.plcOut->weight.view({-1}));
  w.plcOutBias = network.plcOut->bias.item<float>();
  setDeviceBound(network, in);
  if (network.config.heuristicPrior) {
    w.selPrior = network.selPrior.item<float>();
    w.plcPrior = network.plcPrior.item<float>();
  }
  if (network.config.joinFeature)
    w.joinPrior = network.joinPrior.item<float>();
  if (network.config.memoryFeature)
    w.memoryPrior = network.memoryPrior.item<float>();
  if (network.config.lookahead)
    w.lookaheadPrior = network.lookaheadPrior.item<float>();

  NodeTables &t = in.tables;
  t.numNodes = graph.numNodes;
  t.features = keep(graph.nodeFeatures);
  t.bottomPathSums = keep(encoded.bottomSums);
  t.topPathSums = keep(encoded.topSums);
  t.selNodeTerm = keep(encoded.selNodeTerm);
  t.plcNodeTerm = keep(encoded.plcNodeTerm);
  t.deviceSummands = keep(encoded.deviceSummand);
  t.bottomLevels = graph.bottomLevels.data();
  return in;
}

void doppler::placement::learning::configureTorchThreads() {
  static std::once_flag once;
  std::call_once(once, [] {
    at::set_num_threads(1);
    // Debian's LibTorch uses OpenBLAS, whose own thread pool ignores
    // at::set_num_threads.
    using SetThreads = void (*)(int);
    if (auto set = reinterpret_cast<SetThreads>(
            ::dlsym(RTLD_DEFAULT, "openblas_set_num_threads")))
      set(1);
  });
}
