//===- Baselines.cpp - GDP and Placeto, trained per graph ------------------===//
//
// See Baselines.h for what each model is and where it departs from its
// paper. Both read the same standardised node features as the dual policy
// (compute cost, b-level, t-level, incoming and outgoing transfer sums),
// are judged by the reference-semantics simulator, and keep the best
// placement they simulate.
//
//===----------------------------------------------------------------------===//

#include "Doppler/Placement/Learning/Baselines.h"

#include "Doppler/Placement/Analysis.h"
#include "Doppler/Placement/Heuristics.h"
#include "Doppler/Placement/Simulator.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <random>

using namespace doppler::placement;
using torch::Tensor;

namespace doppler::placement::learning {
void configureTorchThreads(); // NetworkModules.cpp: one thread, as training
} // namespace doppler::placement::learning

namespace {

constexpr int32_t kMaxPlacetoNodes = 2048;

/// The standardised node features, [N][5].
Tensor nodeFeatureTensor(const Graph &graph) {
  FeatureMatrix features = computeNodeFeatures(graph);
  standardizeColumns(features);
  std::vector<float> values(features.values.begin(), features.values.end());
  return torch::from_blob(values.data(), {features.rows, features.cols},
                          torch::kFloat32)
      .clone();
}

/// Row v averages the rows of `neighbours(v)` (an all-zero row where v has
/// none), as a sparse [N][N] matrix.
template <typename Neighbours>
Tensor meanMatrix(const Graph &graph, Neighbours neighbours) {
  std::vector<int64_t> rows, cols;
  std::vector<float> values;
  for (NodeId v = 0; v < graph.numNodes(); ++v) {
    std::vector<NodeId> list = neighbours(v);
    for (NodeId u : list) {
      rows.push_back(v);
      cols.push_back(u);
      values.push_back(1.0f / static_cast<float>(list.size()));
    }
  }
  const int64_t count = static_cast<int64_t>(values.size());
  Tensor index = torch::stack(
      {torch::from_blob(rows.data(), {count}, torch::kInt64).clone(),
       torch::from_blob(cols.data(), {count}, torch::kInt64).clone()});
  Tensor value = torch::from_blob(values.data(), {count}, torch::kFloat32).clone();
  return torch::sparse_coo_tensor(index, value,
                                  {graph.numNodes(), graph.numNodes()})
      .coalesce();
}

std::vector<NodeId> toVector(ArrayView<NodeId> view) {
  return std::vector<NodeId>(view.begin(), view.end());
}

/// Draws from the rows of `probabilities` ([rows][D], each summing to 1).
std::vector<DeviceId> sampleRows(const Tensor &probabilities,
                                 std::mt19937_64 &random) {
  Tensor p = probabilities.contiguous();
  const int64_t rows = p.size(0), devices = p.size(1);
  const float *data = p.data_ptr<float>();
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::vector<DeviceId> drawn(rows);
  for (int64_t r = 0; r < rows; ++r) {
    double u = uniform(random), sum = 0;
    DeviceId chosen = static_cast<DeviceId>(devices - 1);
    for (int64_t d = 0; d < devices; ++d) {
      sum += data[r * devices + d];
      if (u < sum) {
        chosen = static_cast<DeviceId>(d);
        break;
      }
    }
    drawn[r] = chosen;
  }
  return drawn;
}

Tensor deviceIndexTensor(const std::vector<DeviceId> &devices) {
  std::vector<int64_t> wide(devices.begin(), devices.end());
  return torch::from_blob(wide.data(), {static_cast<int64_t>(wide.size())},
                          torch::kInt64)
      .clone();
}

/// Bookkeeping shared by both trainers: the judge, the best placement, the
/// curve.
struct Tracker {
  Tracker(const Graph &graph, int32_t numDevices, const BaselineOptions &options)
      : simulator(graph, numDevices), options(options),
        begin(std::chrono::steady_clock::now()) {}

  double run(const std::vector<DeviceId> &assignment) {
    double makespan = simulator.run(assignment);
    ++result.simulatorRuns;
    if (result.assignment.empty() || makespan < result.makespan) {
      result.makespan = makespan;
      result.assignment = assignment;
    }
    return makespan;
  }

  void endEpisode(double makespan) {
    BaselineCurvePoint point;
    point.episode = static_cast<int32_t>(result.curve.size()) + 1;
    point.seconds = std::chrono::duration<double>(
                        std::chrono::steady_clock::now() - begin)
                        .count();
    point.makespan = makespan;
    point.bestMakespan = result.makespan;
    result.curve.push_back(point);
    if (options.progress)
      options.progress(point);
  }

  Simulator simulator;
  const BaselineOptions &options;
  std::chrono::steady_clock::time_point begin;
  BaselineResult result;
};

//===----------------------------------------------------------------------===//
// GDP
//===----------------------------------------------------------------------===//

struct GdpNetworkImpl : torch::nn::Module {
  GdpNetworkImpl(int64_t features, int64_t hidden, int64_t devices)
      : input(register_module("input", torch::nn::Linear(features, hidden))),
        pool1(register_module("pool1", torch::nn::Linear(hidden, hidden))),
        sage1(register_module("sage1", torch::nn::Linear(2 * hidden, hidden))),
        pool2(register_module("pool2", torch::nn::Linear(hidden, hidden))),
        sage2(register_module("sage2", torch::nn::Linear(2 * hidden, hidden))),
        attention(register_module(
            "attention", torch::nn::MultiheadAttention(
                             torch::nn::MultiheadAttentionOptions(hidden, 4)))),
        head1(register_module("head1", torch::nn::Linear(hidden, hidden))),
        head2(register_module("head2", torch::nn::Linear(hidden, devices))) {}

  /// One GraphSAGE layer: the neighbours' pooled features averaged, then
  /// concatenated with the node's own, projected and L2-normalised.
  Tensor sage(const Tensor &h, const Tensor &neighbourMean,
              torch::nn::Linear &pool, torch::nn::Linear &combine) {
    Tensor pooled = torch::relu(pool->forward(h));
    Tensor aggregated = torch::mm(neighbourMean, pooled);
    Tensor out = torch::relu(combine->forward(torch::cat({h, aggregated}, 1)));
    return torch::nn::functional::normalize(
        out, torch::nn::functional::NormalizeFuncOptions().dim(1));
  }

  /// Device logits [N][D] for the nodes in `order` (topological), in node-id
  /// order.
  Tensor forward(const Tensor &features, const Tensor &neighbourMean,
                 const Tensor &order, const Tensor &inverseOrder,
                 const Tensor &positions) {
    Tensor h = torch::relu(input->forward(features));
    h = sage(h, neighbourMean, pool1, sage1);
    h = sage(h, neighbourMean, pool2, sage2);
    // The placer reads the nodes as a sequence in topological order.
    // With its position (sinusoidal, as the Transformer's; GDP's
    // Transformer-XL encodes relative positions).
    Tensor sequence =
        (h.index_select(0, order) + positions).unsqueeze(1); // [N][1][H]
    Tensor attended = std::get<0>(attention->forward(sequence, sequence, sequence));
    Tensor context = (sequence + attended).squeeze(1).index_select(0, inverseOrder);
    return head2->forward(torch::relu(head1->forward(context)));
  }

  torch::nn::Linear input, pool1, sage1, pool2, sage2;
  torch::nn::MultiheadAttention attention;
  torch::nn::Linear head1, head2;
};
TORCH_MODULE(GdpNetwork);

void trainGdp(const Graph &graph, int32_t numDevices,
              const BaselineOptions &options, double reference,
              Tracker &tracker) {
  torch::manual_seed(options.seed);
  std::mt19937_64 random(options.seed ^ 0x9e3779b97f4a7c15ull);
  Tensor features = nodeFeatureTensor(graph);
  Tensor neighbourMean = meanMatrix(graph, [&](NodeId v) {
    std::vector<NodeId> all = toVector(graph.predecessors(v));
    for (NodeId u : graph.successors(v))
      all.push_back(u);
    return all;
  });
  const std::vector<NodeId> &topo = graph.topologicalOrder();
  std::vector<int64_t> orderValues(topo.begin(), topo.end());
  std::vector<int64_t> inverseValues(topo.size());
  for (size_t i = 0; i < topo.size(); ++i)
    inverseValues[topo[i]] = static_cast<int64_t>(i);
  Tensor order = torch::tensor(orderValues, torch::kInt64);
  Tensor inverseOrder = torch::tensor(inverseValues, torch::kInt64);

  // Position i of the sequence: sin(i / 10000^(2k/H)), cos(...) pairs.
  const int64_t hidden = options.hiddenSize;
  Tensor positions = torch::zeros({graph.numNodes(), hidden}, torch::kFloat32);
  {
    float *p = positions.data_ptr<float>();
    for (int64_t i = 0; i < graph.numNodes(); ++i)
      for (int64_t k = 0; k + 1 < hidden; k += 2) {
        double angle = static_cast<double>(i) /
                       std::pow(10000.0, static_cast<double>(k) / hidden);
        p[i * hidden + k] = static_cast<float>(std::sin(angle));
        p[i * hidden + k + 1] = static_cast<float>(std::cos(angle));
      }
  }
  GdpNetwork network(features.size(1), options.hiddenSize, numDevices);
  torch::optim::Adam optimizer(
      network->parameters(), torch::optim::AdamOptions(options.learningRate));
  double baseline = 0, variance = 0;
  bool haveBaseline = false, haveVariance = false;
  int32_t episode = 0;
  while (episode < options.episodes) {
    const int32_t batch = std::min(options.batchSize, options.episodes - episode);
    // Sample with the current parameters.
    Tensor oldLogProbs;
    std::vector<std::vector<DeviceId>> placements;
    std::vector<double> rewards;
    {
      torch::NoGradGuard noGrad;
      Tensor logits = network->forward(features, neighbourMean, order, inverseOrder, positions);
      Tensor logProbs = torch::log_softmax(logits, 1);
      Tensor probabilities = logProbs.exp();
      std::vector<Tensor> taken;
      for (int32_t b = 0; b < batch; ++b) {
        placements.push_back(sampleRows(probabilities, random));
        double makespan = tracker.run(placements.back());
        rewards.push_back(-makespan / reference);
        tracker.endEpisode(makespan);
        taken.push_back(logProbs.gather(1, deviceIndexTensor(placements.back())
                                               .unsqueeze(1))
                            .squeeze(1));
      }
      oldLogProbs = torch::stack(taken); // [B][N]
    }
    episode += batch;
    double mean = 0;
    for (double r : rewards)
      mean += r / static_cast<double>(rewards.size());
    if (!haveBaseline) {
      baseline = mean;
      haveBaseline = true;
    }
    // Advantages against the moving average, in units of the rewards'
    // moving standard deviation.
    std::vector<float> advantage;
    for (double r : rewards) {
      double deviation = r - baseline;
      variance = haveVariance ? 0.9 * variance + 0.1 * deviation * deviation
                              : deviation * deviation;
      haveVariance = true;
    }
    for (double r : rewards)
      advantage.push_back(
          static_cast<float>((r - baseline) / (std::sqrt(variance) + 1e-8)));
    baseline = 0.9 * baseline + 0.1 * mean;
    Tensor advantages =
        torch::tensor(advantage, torch::kFloat32).unsqueeze(1); // [B][1]
    std::vector<Tensor> actionList;
    for (const std::vector<DeviceId> &p : placements)
      actionList.push_back(deviceIndexTensor(p));
    Tensor actions = torch::stack(actionList); // [B][N]
    // PPO: clipped ratio per decision.
    for (int32_t epoch = 0; epoch < options.ppoEpochs; ++epoch) {
      Tensor logits = network->forward(features, neighbourMean, order, inverseOrder, positions);
      Tensor logProbs = torch::log_softmax(logits, 1); // [N][D]
      Tensor taken = logProbs.unsqueeze(0)
                         .expand({actions.size(0), logProbs.size(0), logProbs.size(1)})
                         .gather(2, actions.unsqueeze(2))
                         .squeeze(2); // [B][N]
      Tensor ratio = torch::exp(taken - oldLogProbs);
      Tensor surrogate = torch::min(ratio * advantages,
                                    torch::clamp(ratio, 0.8, 1.2) * advantages);
      // A placement's decisions share its advantage: summed over the nodes
      // (REINFORCE's gradient of the placement's log-probability), averaged
      // over the batch.
      Tensor entropy = -(logProbs.exp() * logProbs).sum();
      Tensor loss = -surrogate.sum(1).mean() - options.entropyWeight * entropy;
      optimizer.zero_grad();
      loss.backward();
      optimizer.step();
    }
  }
}

//===----------------------------------------------------------------------===//
// Placeto
//===----------------------------------------------------------------------===//

struct PlacetoNetworkImpl : torch::nn::Module {
  static constexpr int kRounds = 3;

  PlacetoNetworkImpl(int64_t features, int64_t hidden, int64_t devices)
      : input(register_module("input", torch::nn::Linear(features, hidden))),
        fromParents(register_module("fromParents", torch::nn::Linear(hidden, hidden))),
        fromChildren(register_module("fromChildren", torch::nn::Linear(hidden, hidden))),
        combine(register_module("combine", torch::nn::Linear(3 * hidden, hidden))),
        head1(register_module("head1", torch::nn::Linear(4 * hidden, hidden))),
        head2(register_module("head2", torch::nn::Linear(hidden, devices))) {}

  /// Device logits [S][D] for S states: `features` [S][N][F] (the
  /// placement as features), `groups` [S][3][N] (means over the visited
  /// node's ancestors, descendants and parallel nodes), `current` [S] (the
  /// visited node).
  Tensor forward(const Tensor &features, const Tensor &parentMean,
                 const Tensor &childMean, const Tensor &groups,
                 const Tensor &current) {
    const int64_t states = features.size(0), nodes = features.size(1);
    Tensor h = torch::relu(input->forward(features)); // [S][N][H]
    const int64_t hidden = h.size(2);
    for (int round = 0; round < kRounds; ++round) {
      // Sparse [N][N] times the states side by side: [N][S*H].
      Tensor flat = h.permute({1, 0, 2}).reshape({nodes, states * hidden});
      Tensor up = torch::mm(parentMean, flat).reshape({nodes, states, hidden}).permute({1, 0, 2});
      Tensor down = torch::mm(childMean, flat).reshape({nodes, states, hidden}).permute({1, 0, 2});
      h = torch::relu(combine->forward(torch::cat(
          {h, fromParents->forward(up), fromChildren->forward(down)}, 2)));
    }
    Tensor summaries = torch::bmm(groups, h).reshape({states, 3 * hidden});
    Tensor own = h.gather(1, current.view({states, 1, 1}).expand({states, 1, hidden}))
                     .squeeze(1);
    return head2->forward(torch::relu(head1->forward(torch::cat({own, summaries}, 1))));
  }

  torch::nn::Linear input, fromParents, fromChildren, combine, head1, head2;
};
TORCH_MODULE(PlacetoNetwork);

/// Per node: which nodes are its ancestors (bit u of row v).
std::vector<std::vector<uint64_t>> ancestorSets(const Graph &graph) {
  const int32_t n = graph.numNodes();
  const size_t words = (static_cast<size_t>(n) + 63) / 64;
  std::vector<std::vector<uint64_t>> ancestors(n, std::vector<uint64_t>(words, 0));
  for (NodeId v : graph.topologicalOrder())
    for (NodeId p : graph.predecessors(v)) {
      for (size_t w = 0; w < words; ++w)
        ancestors[v][w] |= ancestors[p][w];
      ancestors[v][p / 64] |= uint64_t(1) << (p % 64);
    }
  return ancestors;
}

/// Placeto's group means per node (row v, [3][N]): the mean over v's
/// ancestors, over its descendants and over the rest, each a row of
/// weights summing to 1 (or 0 when the group is empty).
Tensor placetoGroupMeans(const Graph &graph) {
  const int32_t n = graph.numNodes();
  std::vector<std::vector<uint64_t>> ancestors = ancestorSets(graph);
  Tensor groups = torch::zeros({n, 3, n}, torch::kFloat32);
  float *g = groups.data_ptr<float>();
  for (NodeId v = 0; v < n; ++v) {
    float *anc = g + (static_cast<int64_t>(v) * 3 + 0) * n;
    float *desc = anc + n, *par = desc + n;
    for (NodeId u = 0; u < n; ++u) {
      if (u == v)
        continue;
      if (ancestors[v][u / 64] >> (u % 64) & 1)
        anc[u] = 1;
      else if (ancestors[u][v / 64] >> (v % 64) & 1)
        desc[u] = 1;
      else
        par[u] = 1;
    }
    for (float *row : {anc, desc, par}) {
      float count = 0;
      for (NodeId u = 0; u < n; ++u)
        count += row[u];
      if (count > 0)
        for (NodeId u = 0; u < n; ++u)
          row[u] /= count;
    }
  }
  return groups;
}

void trainPlaceto(const Graph &graph, int32_t numDevices,
                  const BaselineOptions &options, double reference,
                  Tracker &tracker) {
  torch::manual_seed(options.seed);
  std::mt19937_64 random(options.seed ^ 0x51ed270b27a1f3c5ull);
  const int32_t n = graph.numNodes();
  Tensor staticFeatures = nodeFeatureTensor(graph); // [N][5]
  const int64_t featureCount = staticFeatures.size(1) + numDevices + 2;
  Tensor parentMean = meanMatrix(graph, [&](NodeId v) { return toVector(graph.predecessors(v)); });
  Tensor childMean = meanMatrix(graph, [&](NodeId v) { return toVector(graph.successors(v)); });

  Tensor groups = placetoGroupMeans(graph); // [N][3][N]

  PlacetoNetwork network(featureCount, options.hiddenSize, numDevices);
  torch::optim::Adam optimizer(
      network->parameters(), torch::optim::AdamOptions(options.learningRate));
  const std::vector<NodeId> &topo = graph.topologicalOrder();
  std::vector<double> stepBaseline(n, 0.0);
  double variance = 0;
  bool haveBaseline = false;
  std::uniform_int_distribution<int32_t> anyDevice(0, numDevices - 1);

  // The state before step t: the placement as one-hot columns, the visited
  // node flagged, the nodes already visited flagged.
  auto stateFeatures = [&](const std::vector<DeviceId> &placement, int32_t step) {
    Tensor dynamic = torch::zeros({n, numDevices + 2}, torch::kFloat32);
    float *d = dynamic.data_ptr<float>();
    const int64_t width = numDevices + 2;
    for (NodeId v = 0; v < n; ++v)
      d[v * width + placement[v]] = 1;
    d[topo[step] * width + numDevices] = 1;
    for (int32_t s = 0; s < step; ++s)
      d[topo[s] * width + numDevices + 1] = 1;
    return torch::cat({staticFeatures, dynamic}, 1);
  };

  for (int32_t episode = 0; episode < options.episodes; ++episode) {
    std::vector<DeviceId> placement(n);
    for (DeviceId &d : placement)
      d = static_cast<DeviceId>(anyDevice(random));
    double previous = tracker.run(placement);
    std::vector<Tensor> states;
    std::vector<int64_t> chosen, visited;
    std::vector<double> stepReward;
    for (int32_t step = 0; step < n; ++step) {
      NodeId v = topo[step];
      Tensor state = stateFeatures(placement, step);
      Tensor probabilities;
      {
        torch::NoGradGuard noGrad;
        Tensor logits = network->forward(
            state.unsqueeze(0), parentMean, childMean,
            groups.select(0, v).unsqueeze(0), torch::tensor({int64_t(v)}));
        probabilities = torch::softmax(logits, 1);
      }
      DeviceId device = sampleRows(probabilities, random)[0];
      placement[v] = device;
      double makespan = tracker.run(placement);
      stepReward.push_back((previous - makespan) / reference);
      previous = makespan;
      states.push_back(state);
      chosen.push_back(device);
      visited.push_back(v);
    }
    tracker.endEpisode(previous);
    // Returns to go (the makespan saved from step t on) against a per-step
    // moving-average baseline.
    // Advantages in units of their moving standard deviation.
    std::vector<float> advantage(n);
    double toGo = 0, squares = 0;
    for (int32_t t = n - 1; t >= 0; --t) {
      toGo += stepReward[t];
      if (!haveBaseline)
        stepBaseline[t] = toGo;
      double deviation = toGo - stepBaseline[t];
      squares += deviation * deviation;
      advantage[t] = static_cast<float>(deviation);
      stepBaseline[t] = 0.9 * stepBaseline[t] + 0.1 * toGo;
    }
    variance = haveBaseline ? 0.9 * variance + 0.1 * squares / n : squares / n;
    haveBaseline = true;
    for (float &a : advantage)
      a = static_cast<float>(a / (std::sqrt(variance) + 1e-8));
    // The loss over the episode's steps, in chunks (bounded memory), the
    // gradients accumulated.
    optimizer.zero_grad();
    constexpr int32_t kChunk = 32;
    for (int32_t begin = 0; begin < n; begin += kChunk) {
      int32_t end = std::min(n, begin + kChunk);
      std::vector<Tensor> chunkStates(states.begin() + begin, states.begin() + end);
      std::vector<int64_t> nodes(visited.begin() + begin, visited.begin() + end);
      std::vector<int64_t> actions(chosen.begin() + begin, chosen.begin() + end);
      std::vector<float> chunkAdvantage(advantage.begin() + begin, advantage.begin() + end);
      Tensor nodeIndex = torch::tensor(nodes, torch::kInt64);
      Tensor logits = network->forward(torch::stack(chunkStates), parentMean,
                                       childMean, groups.index_select(0, nodeIndex),
                                       nodeIndex);
      Tensor logProbs = torch::log_softmax(logits, 1);
      Tensor taken = logProbs.gather(1, torch::tensor(actions, torch::kInt64).unsqueeze(1)).squeeze(1);
      Tensor entropy = -(logProbs.exp() * logProbs).sum(1);
      Tensor loss = (-(taken * torch::tensor(chunkAdvantage, torch::kFloat32)) -
                     options.entropyWeight * entropy)
                        .sum() /
                    static_cast<double>(n);
      loss.backward();
    }
    optimizer.step();
  }
}

} // namespace

std::optional<BaselineKind>
doppler::placement::parseBaselineKind(std::string_view name) noexcept {
  if (name == "gdp")
    return BaselineKind::GDP;
  if (name == "placeto")
    return BaselineKind::Placeto;
  return std::nullopt;
}

const char *doppler::placement::baselineName(BaselineKind kind) noexcept {
  return kind == BaselineKind::GDP ? "gdp" : "placeto";
}

std::optional<BaselineResult>
doppler::placement::trainBaseline(const Graph &graph, int32_t numDevices,
                                  const BaselineOptions &options,
                                  std::string *error) noexcept {
  auto fail = [&](std::string message) -> std::optional<BaselineResult> {
    if (error)
      *error = std::move(message);
    return std::nullopt;
  };
  if (numDevices < 1)
    return fail("devices must be at least 1, got " + std::to_string(numDevices));
  if (options.episodes < 1)
    return fail("episodes must be at least 1, got " +
                std::to_string(options.episodes));
  if (options.hiddenSize < 4 || options.batchSize < 1 || options.ppoEpochs < 1 ||
      !(options.learningRate > 0) || !std::isfinite(options.learningRate))
    return fail("hidden size >= 4, batch >= 1, epochs >= 1 and a positive "
                "learning rate are needed");
  if (graph.numNodes() == 0)
    return fail("the graph has no nodes");
  if (options.kind == BaselineKind::Placeto && graph.numNodes() > kMaxPlacetoNodes)
    return fail("placeto: " + std::to_string(graph.numNodes()) +
                " nodes is more than it handles (" +
                std::to_string(kMaxPlacetoNodes) +
                "; its ancestor sets are quadratic)");
  try {
    learning::configureTorchThreads();
    Tracker tracker(graph, numDevices, options);
    // Rewards are makespans relative to critical-path's, a scale that does
    // not depend on the graph's units.
    std::optional<std::vector<DeviceId>> start =
        placeWithPolicy("critical-path", graph, numDevices, {}, error);
    if (!start)
      return std::nullopt;
    Simulator reference(graph, numDevices);
    double scale = reference.run(*start);
    if (!(scale > 0))
      scale = 1;
    if (options.kind == BaselineKind::GDP)
      trainGdp(graph, numDevices, options, scale, tracker);
    else
      trainPlaceto(graph, numDevices, options, scale, tracker);
    tracker.result.seconds = std::chrono::duration<double>(
                                 std::chrono::steady_clock::now() - tracker.begin)
                                 .count();
    return std::move(tracker.result);
  } catch (const std::exception &e) {
    return fail(std::string(baselineName(options.kind)) + ": " + e.what());
  }
}
