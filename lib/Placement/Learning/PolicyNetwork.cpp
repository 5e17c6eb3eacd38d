//===- PolicyNetwork.cpp - LibTorch modules of the dual policy ------------===//
//
// Besides the modules, a few autograd functions written as plain loops:
// LibTorch 1.13's CPU index_add (the gradient of index_select) and
// scatter paths run one slice at a time, which made them the largest cost
// of an episode; these run in microseconds.
//
//===----------------------------------------------------------------------===//

#include "PolicyNetwork.h"

#include "Doppler/Placement/Analysis.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <utility>

using namespace doppler::placement;
using namespace doppler::placement::learning;
using torch::Tensor;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

namespace {

constexpr const char *kFormatTag = "doppler-dual-policy";
constexpr int64_t kFormatVersion = 1;

Tensor leaky(const Tensor &x) { return torch::leaky_relu(x, kLeakySlope); }

Tensor int32Tensor(const std::vector<int32_t> &values) {
  return torch::from_blob(const_cast<int32_t *>(values.data()),
                          {static_cast<int64_t>(values.size())}, torch::kInt32)
      .clone();
}
Tensor int64Tensor(const std::vector<int64_t> &values) {
  return torch::from_blob(const_cast<int64_t *>(values.data()),
                          {static_cast<int64_t>(values.size())}, torch::kInt64)
      .clone();
}
Tensor int64FromInt32(const std::vector<int32_t> &values) {
  return int32Tensor(values).to(torch::kInt64);
}

/// [size] floats: 1 at `positions`, 0 elsewhere.
Tensor indicator(int64_t size, const std::vector<int32_t> &positions) {
  Tensor out = torch::zeros({size});
  float *data = out.data_ptr<float>();
  for (int32_t i : positions)
    data[i] = 1.0f;
  return out;
}

//===----------------------------------------------------------------------===//
// Autograd functions.
//===----------------------------------------------------------------------===//

/// out[i] = x[index[i]]; the gradient scatters back with a loop.
struct GatherRows : torch::autograd::Function<GatherRows> {
  static Tensor forward(AutogradContext *ctx, const Tensor &x,
                        const Tensor &index) {
    ctx->saved_data["index"] = index;
    ctx->saved_data["rows"] = x.size(0);
    return x.index_select(0, index);
  }
  static variable_list backward(AutogradContext *ctx, variable_list grads) {
    Tensor index = ctx->saved_data["index"].toTensor();
    int64_t rows = ctx->saved_data["rows"].toInt();
    Tensor grad = grads[0].contiguous();
    int64_t width = grad.size(1), count = index.size(0);
    Tensor out = torch::zeros({rows, width}, grad.options());
    const int64_t *idx = index.data_ptr<int64_t>();
    const float *g = grad.data_ptr<float>();
    float *o = out.data_ptr<float>();
    for (int64_t i = 0; i < count; ++i) {
      float *dst = o + idx[i] * width;
      const float *src = g + i * width;
      for (int64_t c = 0; c < width; ++c)
        dst[c] += src[c];
    }
    return {out, Tensor()};
  }
};

/// out[index[i]] += x[i] into `rows` rows.
struct ScatterAddRows : torch::autograd::Function<ScatterAddRows> {
  static Tensor forward(AutogradContext *ctx, const Tensor &xIn,
                        const Tensor &index, int64_t rows) {
    ctx->saved_data["index"] = index;
    Tensor x = xIn.contiguous();
    int64_t width = x.size(1), count = x.size(0);
    Tensor out = torch::zeros({rows, width}, x.options());
    const int64_t *idx = index.data_ptr<int64_t>();
    const float *src = x.data_ptr<float>();
    float *o = out.data_ptr<float>();
    for (int64_t i = 0; i < count; ++i) {
      float *dst = o + idx[i] * width;
      const float *row = src + i * width;
      for (int64_t c = 0; c < width; ++c)
        dst[c] += row[c];
    }
    return out;
  }
  static variable_list backward(AutogradContext *ctx, variable_list grads) {
    Tensor index = ctx->saved_data["index"].toTensor();
    return {grads[0].index_select(0, index), Tensor(), Tensor()};
  }
};

/// Sum over the undirected in-edges of each node: out[v] = sum over edges
/// (u, v) of x[u], times gates[edge] when gates are given.
void aggregateRows(const Tensor &offsets, const Tensor &neighbors,
                   const Tensor &edges, const float *x, const float *gates,
                   int64_t width, float *out) {
  const int32_t *off = offsets.data_ptr<int32_t>();
  const int32_t *nb = neighbors.data_ptr<int32_t>();
  const int32_t *ed = edges.data_ptr<int32_t>();
  int64_t n = offsets.size(0) - 1;
  for (int64_t v = 0; v < n; ++v) {
    float *o = out + v * width;
    for (int32_t p = off[v]; p < off[v + 1]; ++p) {
      const float *row = x + static_cast<int64_t>(nb[p]) * width;
      if (gates) {
        const float *g = gates + static_cast<int64_t>(ed[p]) * width;
        for (int64_t c = 0; c < width; ++c)
          o[c] += g[c] * row[c];
      } else {
        for (int64_t c = 0; c < width; ++c)
          o[c] += row[c];
      }
    }
  }
}

struct EdgeAggregate : torch::autograd::Function<EdgeAggregate> {
  /// `gates` [E][C], or empty for a plain sum (LibTorch 1.13's custom
  /// functions reject undefined inputs).
  static Tensor forward(AutogradContext *ctx, const Tensor &xIn,
                        const Tensor &gatesIn, const GraphTensors *graph) {
    Tensor x = xIn.contiguous();
    Tensor gates = gatesIn.contiguous();
    ctx->save_for_backward({x, gates});
    ctx->saved_data["graph"] = reinterpret_cast<int64_t>(graph);
    Tensor out = torch::zeros_like(x);
    aggregateRows(graph->inOffsets, graph->inSources, graph->inEdges,
                  x.data_ptr<float>(),
                  gates.numel() ? gates.data_ptr<float>() : nullptr,
                  x.size(1), out.data_ptr<float>());
    return out;
  }
  static variable_list backward(AutogradContext *ctx, variable_list grads) {
    variable_list saved = ctx->get_saved_variables();
    Tensor x = saved[0], gates = saved[1];
    const auto *graph =
        reinterpret_cast<const GraphTensors *>(ctx->saved_data["graph"].toInt());
    Tensor grad = grads[0].contiguous();
    int64_t width = x.size(1);
    bool gated = gates.numel() > 0;
    // d x[u] = sum over edges (u, v) of gates[edge] * grad[v].
    Tensor gradX = torch::zeros_like(x);
    aggregateRows(graph->outOffsets, graph->outTargets, graph->outEdges,
                  grad.data_ptr<float>(),
                  gated ? gates.data_ptr<float>() : nullptr, width,
                  gradX.data_ptr<float>());
    Tensor gradGates;
    if (gated) {
      // d gates[e] = sum over both directions of e of x[src] * grad[dst].
      gradGates = torch::zeros_like(gates);
      const int32_t *off = graph->inOffsets.data_ptr<int32_t>();
      const int32_t *src = graph->inSources.data_ptr<int32_t>();
      const int32_t *ed = graph->inEdges.data_ptr<int32_t>();
      const float *xs = x.data_ptr<float>(), *g = grad.data_ptr<float>();
      float *gg = gradGates.data_ptr<float>();
      for (int64_t v = 0; v + 1 < graph->inOffsets.size(0); ++v)
        for (int32_t p = off[v]; p < off[v + 1]; ++p) {
          float *o = gg + static_cast<int64_t>(ed[p]) * width;
          const float *xr = xs + static_cast<int64_t>(src[p]) * width;
          const float *gr = g + v * width;
          for (int64_t c = 0; c < width; ++c)
            o[c] += xr[c] * gr[c];
        }
    }
    return {gradX, gradGates, Tensor()};
  }
};

/// Sums along path forests: out[v] = x[v] + out[next[v]], i.e. the sum of
/// x over v's whole b-level (or t-level) path.
struct PathSum : torch::autograd::Function<PathSum> {
  static Tensor forward(AutogradContext *ctx, const Tensor &xIn,
                        const Tensor &next, const Tensor &order) {
    ctx->saved_data["next"] = next;
    ctx->saved_data["order"] = order;
    Tensor out = xIn.contiguous().clone();
    int64_t width = out.size(1);
    const int32_t *nx = next.data_ptr<int32_t>();
    const int32_t *ord = order.data_ptr<int32_t>();
    float *o = out.data_ptr<float>();
    for (int64_t i = 0; i < order.size(0); ++i) {
      int32_t v = ord[i];
      if (nx[v] < 0)
        continue;
      float *row = o + static_cast<int64_t>(v) * width;
      const float *tail = o + static_cast<int64_t>(nx[v]) * width;
      for (int64_t c = 0; c < width; ++c)
        row[c] += tail[c];
    }
    return out;
  }
  static variable_list backward(AutogradContext *ctx, variable_list grads) {
    Tensor next = ctx->saved_data["next"].toTensor();
    Tensor order = ctx->saved_data["order"].toTensor();
    Tensor g = grads[0].contiguous().clone();
    int64_t width = g.size(1);
    const int32_t *nx = next.data_ptr<int32_t>();
    const int32_t *ord = order.data_ptr<int32_t>();
    float *o = g.data_ptr<float>();
    // x[u] reaches out[v] for every v whose path passes u: push gradients
    // from the far end of each path towards its start, in reverse order.
    for (int64_t i = order.size(0) - 1; i >= 0; --i) {
      int32_t v = ord[i];
      if (nx[v] < 0)
        continue;
      float *tail = o + static_cast<int64_t>(nx[v]) * width;
      const float *row = o + static_cast<int64_t>(v) * width;
      for (int64_t c = 0; c < width; ++c)
        tail[c] += row[c];
    }
    return {g, Tensor(), Tensor()};
  }
};

/// Column-wise (x - mean) / (std + eps) within row segments [offsets[s],
/// offsets[s+1]), population std (METHOD section 3).
struct SegmentStandardize : torch::autograd::Function<SegmentStandardize> {
  static Tensor forward(AutogradContext *ctx, const Tensor &xIn,
                        const Tensor &offsets) {
    Tensor x = xIn.contiguous();
    int64_t width = x.size(1), segments = offsets.size(0) - 1;
    Tensor y = torch::empty_like(x);
    Tensor sigma = torch::empty({segments, width}, x.options());
    const int32_t *off = offsets.data_ptr<int32_t>();
    const float *xs = x.data_ptr<float>();
    float *ys = y.data_ptr<float>(), *sg = sigma.data_ptr<float>();
    std::vector<double> mean(width), squares(width), scale(width);
    for (int64_t s = 0; s < segments; ++s) {
      int32_t begin = off[s], end = off[s + 1];
      double n = end - begin;
      std::fill(mean.begin(), mean.end(), 0.0);
      std::fill(squares.begin(), squares.end(), 0.0);
      for (int32_t r = begin; r < end; ++r)
        for (int64_t c = 0; c < width; ++c)
          mean[c] += xs[r * width + c];
      for (int64_t c = 0; c < width; ++c)
        mean[c] /= n;
      for (int32_t r = begin; r < end; ++r)
        for (int64_t c = 0; c < width; ++c) {
          double d = xs[r * width + c] - mean[c];
          squares[c] += d * d;
        }
      for (int64_t c = 0; c < width; ++c) {
        double std = std::sqrt(squares[c] / n);
        sg[s * width + c] = static_cast<float>(std);
        scale[c] = 1.0 / (std + kStandardizeEpsilon);
      }
      // Row by row: contiguous writes.
      for (int32_t r = begin; r < end; ++r)
        for (int64_t c = 0; c < width; ++c)
          ys[r * width + c] =
              static_cast<float>((xs[r * width + c] - mean[c]) * scale[c]);
    }
    ctx->save_for_backward({y, sigma});
    ctx->saved_data["offsets"] = offsets;
    return y;
  }
  static variable_list backward(AutogradContext *ctx, variable_list grads) {
    variable_list saved = ctx->get_saved_variables();
    Tensor y = saved[0], sigma = saved[1];
    Tensor offsets = ctx->saved_data["offsets"].toTensor();
    Tensor g = grads[0].contiguous();
    int64_t width = y.size(1), segments = offsets.size(0) - 1;
    Tensor out = torch::empty_like(y);
    const int32_t *off = offsets.data_ptr<int32_t>();
    const float *ys = y.data_ptr<float>(), *gs = g.data_ptr<float>();
    const float *sg = sigma.data_ptr<float>();
    float *os = out.data_ptr<float>();
    std::vector<double> gMean(width), gDotY(width), scale(width),
        coupling(width);
    // With s = std + eps: dx_i = (g_i - mean(g)) / s - y_i * sum_j(g_j y_j)
    // / (n * std); the second term vanishes with std = 0.
    for (int64_t s = 0; s < segments; ++s) {
      int32_t begin = off[s], end = off[s + 1];
      double n = end - begin;
      std::fill(gMean.begin(), gMean.end(), 0.0);
      std::fill(gDotY.begin(), gDotY.end(), 0.0);
      for (int32_t r = begin; r < end; ++r)
        for (int64_t c = 0; c < width; ++c) {
          gMean[c] += gs[r * width + c];
          gDotY[c] += static_cast<double>(gs[r * width + c]) * ys[r * width + c];
        }
      for (int64_t c = 0; c < width; ++c) {
        double std = sg[s * width + c];
        scale[c] = 1.0 / (std + kStandardizeEpsilon);
        gMean[c] /= n;
        coupling[c] = std > 0 ? gDotY[c] / (n * std) : 0.0;
      }
      for (int32_t r = begin; r < end; ++r)
        for (int64_t c = 0; c < width; ++c)
          os[r * width + c] = static_cast<float>(
              (gs[r * width + c] - gMean[c]) * scale[c] -
              ys[r * width + c] * coupling[c]);
    }
    return {out, Tensor()};
  }
};

/// log-softmax of a score vector within row segments.
struct SegmentLogSoftmax : torch::autograd::Function<SegmentLogSoftmax> {
  static Tensor forward(AutogradContext *ctx, const Tensor &scoresIn,
                        const Tensor &offsets) {
    Tensor scores = scoresIn.contiguous();
    Tensor out = torch::empty_like(scores);
    const int32_t *off = offsets.data_ptr<int32_t>();
    const float *sc = scores.data_ptr<float>();
    float *o = out.data_ptr<float>();
    for (int64_t s = 0; s + 1 < offsets.size(0); ++s) {
      int32_t begin = off[s], end = off[s + 1];
      float best = sc[begin];
      for (int32_t r = begin; r < end; ++r)
        best = std::max(best, sc[r]);
      double total = 0;
      for (int32_t r = begin; r < end; ++r)
        total += std::exp(static_cast<double>(sc[r]) - best);
      double logTotal = std::log(total) + best;
      for (int32_t r = begin; r < end; ++r)
        o[r] = static_cast<float>(sc[r] - logTotal);
    }
    ctx->save_for_backward({out});
    ctx->saved_data["offsets"] = offsets;
    return out;
  }
  static variable_list backward(AutogradContext *ctx, variable_list grads) {
    Tensor logp = ctx->get_saved_variables()[0];
    Tensor offsets = ctx->saved_data["offsets"].toTensor();
    Tensor g = grads[0].contiguous();
    Tensor out = torch::empty_like(g);
    const int32_t *off = offsets.data_ptr<int32_t>();
    const float *lp = logp.data_ptr<float>(), *gs = g.data_ptr<float>();
    float *o = out.data_ptr<float>();
    for (int64_t s = 0; s + 1 < offsets.size(0); ++s) {
      int32_t begin = off[s], end = off[s + 1];
      double total = 0;
      for (int32_t r = begin; r < end; ++r)
        total += gs[r];
      for (int32_t r = begin; r < end; ++r)
        o[r] = static_cast<float>(gs[r] - std::exp(lp[r]) * total);
    }
    return {out, Tensor()};
  }
};

constexpr const char *kParameterPrefix = "param_";

/// Archive key of a parameter: the prefix, then its module path with '_'
/// for '.'.
std::string mangle(const std::string &name) {
  std::string out = kParameterPrefix;
  for (char c : name)
    out += c == '.' ? '_' : c;
  return out;
}

std::string shapeText(c10::IntArrayRef sizes) {
  std::string text = "[";
  for (size_t i = 0; i < sizes.size(); ++i)
    text += (i ? ", " : "") + std::to_string(sizes[i]);
  return text + "]";
}

void setError(std::string *error, std::string message) {
  if (error)
    *error = std::move(message);
}

} // namespace

torch::Tensor doppler::placement::learning::gatherRows(const Tensor &x,
                                                     const Tensor &index) {
  return GatherRows::apply(x, index);
}
torch::Tensor doppler::placement::learning::scatterAddRows(const Tensor &x,
                                                         const Tensor &index,
                                                         int64_t rows) {
  return ScatterAddRows::apply(x, index, rows);
}
torch::Tensor doppler::placement::learning::edgeAggregate(
    const Tensor &x, const Tensor &gates, const GraphTensors &graph) {
  return EdgeAggregate::apply(
      x, gates.defined() ? gates : torch::empty({0}, x.options()), &graph);
}
torch::Tensor doppler::placement::learning::pathSum(const Tensor &x,
                                                  const Tensor &next,
                                                  const Tensor &order) {
  return PathSum::apply(x, next, order);
}
torch::Tensor
doppler::placement::learning::segmentStandardize(const Tensor &x,
                                                 const Tensor &offsets) {
  return SegmentStandardize::apply(x, offsets);
}
torch::Tensor
doppler::placement::learning::segmentLogSoftmax(const Tensor &scores,
                                                const Tensor &offsets) {
  return SegmentLogSoftmax::apply(scores, offsets);
}

//===----------------------------------------------------------------------===//
// Graph tensors.
//===----------------------------------------------------------------------===//

GraphTensors doppler::placement::learning::buildGraphTensors(const Graph &graph) {
  GraphTensors t;
  const int32_t N = graph.numNodes(), E = graph.numEdges();
  t.numNodes = N;
  t.numEdges = E;
  GraphAnalysis analysis = analyzeGraph(graph);
  t.nodeFeatures = torch::from_blob(analysis.nodeFeatures.values.data(),
                                    {N, kFeatureCount}, torch::kFloat64)
                       .to(torch::kFloat32)
                       .contiguous();
  t.edgeFeatures = torch::from_blob(analysis.edgeFeatures.values.data(),
                                    {E, 1}, torch::kFloat64)
                       .to(torch::kFloat32)
                       .contiguous();

  // Undirected adjacency, CSR both ways. Directed edge 2e is (src, dst) and
  // 2e+1 its reverse; both carry edge e's feature.
  std::vector<int32_t> inCount(N + 1, 0), outCount(N + 1, 0);
  for (int32_t e = 0; e < E; ++e) {
    NodeId u = graph.edgeSource(e), v = graph.edgeTarget(e);
    ++inCount[v + 1];
    ++inCount[u + 1];
    ++outCount[u + 1];
    ++outCount[v + 1];
  }
  for (int32_t v = 0; v < N; ++v) {
    inCount[v + 1] += inCount[v];
    outCount[v + 1] += outCount[v];
  }
  std::vector<int32_t> inSources(2 * E), inEdges(2 * E), outTargets(2 * E),
      outEdges(2 * E);
  std::vector<int32_t> inFill(inCount.begin(), inCount.end() - 1),
      outFill(outCount.begin(), outCount.end() - 1);
  auto addDirected = [&](NodeId from, NodeId to, int32_t e) {
    inSources[inFill[to]] = from;
    inEdges[inFill[to]++] = e;
    outTargets[outFill[from]] = to;
    outEdges[outFill[from]++] = e;
  };
  for (int32_t e = 0; e < E; ++e) {
    addDirected(graph.edgeSource(e), graph.edgeTarget(e), e);
    addDirected(graph.edgeTarget(e), graph.edgeSource(e), e);
  }
  t.inOffsets = int32Tensor(inCount);
  t.inSources = int32Tensor(inSources);
  t.inEdges = int32Tensor(inEdges);
  t.outOffsets = int32Tensor(outCount);
  t.outTargets = int32Tensor(outTargets);
  t.outEdges = int32Tensor(outEdges);

  // Distinct edge feature values (decomposed graphs repeat a few costs).
  std::vector<float> values;
  std::vector<int32_t> valueOf(E);
  {
    const float *f = t.edgeFeatures.data_ptr<float>();
    std::vector<float> sorted(f, f + E);
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    values = sorted;
    for (int32_t e = 0; e < E; ++e)
      valueOf[e] = static_cast<int32_t>(
          std::lower_bound(values.begin(), values.end(), f[e]) -
          values.begin());
  }
  t.uniqueEdgeValues =
      torch::from_blob(values.data(), {static_cast<int64_t>(values.size()), 1},
                       torch::kFloat32)
          .clone();
  std::vector<std::vector<int64_t>> groupSources(values.size()),
      groupTargets(values.size());
  std::vector<int64_t> directedSources, directedTargets, directedValue;
  for (int32_t v = 0; v < N; ++v)
    for (int32_t p = inCount[v]; p < inCount[v + 1]; ++p) {
      int32_t value = valueOf[inEdges[p]];
      groupSources[value].push_back(inSources[p]);
      groupTargets[value].push_back(v);
      directedSources.push_back(inSources[p]);
      directedTargets.push_back(v);
      directedValue.push_back(value);
    }
  for (size_t u = 0; u < values.size(); ++u) {
    t.groupSources.push_back(int64Tensor(groupSources[u]));
    t.groupTargets.push_back(int64Tensor(groupTargets[u]));
  }
  t.directedSources = int64Tensor(directedSources);
  t.directedTargets = int64Tensor(directedTargets);
  t.directedValue = int64Tensor(directedValue);

  // Path forests. A b-level path continues to a successor, so reverse
  // topological order visits next[v] before v; a t-level path continues to
  // a predecessor, so topological order does.
  const std::vector<NodeId> &topo = graph.topologicalOrder();
  std::vector<int32_t> order(topo.begin(), topo.end());
  t.topOrder = int32Tensor(order);
  std::reverse(order.begin(), order.end());
  t.bottomOrder = int32Tensor(order);
  t.bottomNext = int32Tensor(analysis.bottom.pathNext);
  t.topNext = int32Tensor(analysis.top.pathNext);
  t.bottomLevels = analysis.bottom.value;
  return t;
}

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
      Tensor messages =
          GatherRows::apply(h, graph.groupSources[u]).mm(matrices[u]);
      Tensor part = ScatterAddRows::apply(messages, graph.groupTargets[u], N);
      out = out.defined() ? out + part : part;
    }
    return out;
  }
  // Otherwise a matrix per directed edge.
  Tensor perEdge = matrices.index_select(0, graph.directedValue);
  Tensor messages =
      torch::bmm(GatherRows::apply(h, graph.directedSources).unsqueeze(1),
                 perEdge)
          .squeeze(1);
  return ScatterAddRows::apply(messages, graph.directedTargets, N);
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
    h = gru_(torch::relu(messages + convolutionBias_), h);
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
  // evaluation (chooseJoinPriorStart); this is the value models without
  // that step (or tried first by it) hold.
  if (config.joinFeature)
    joinPrior.fill_(2 * kInitialPrior);
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
  out.bottomSums = SegmentStandardize::apply(
      PathSum::apply(out.selEmbedding, graph.bottomNext, graph.bottomOrder),
      whole);
  out.topSums = SegmentStandardize::apply(
      PathSum::apply(out.selEmbedding, graph.topNext, graph.topOrder), whole);
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
  if (network.config.heuristicPrior) {
    w.selPrior = network.selPrior.item<float>();
    w.plcPrior = network.plcPrior.item<float>();
  }
  if (network.config.joinFeature)
    w.joinPrior = network.joinPrior.item<float>();

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

LossTerms doppler::placement::learning::computeEpisodeLoss(
    DualPolicyNetworkImpl &network, const GraphTensors &graph,
    const EncodedGraph &encoded, const EpisodeRecord &record,
    const LossWeights &weights) {
  (void)graph;
  const int64_t H = network.config.hiddenSize;
  const bool useReturns = weights.policyGradient != 0;
  Tensor imitation = torch::zeros({});
  Tensor policy = torch::zeros({});
  Tensor negativeEntropy = torch::zeros({});
  LossTerms terms;
  // sum p log p; without an entropy bonus only its value is logged, so it
  // stays out of the backward pass.
  auto entropyTerm = [&](const Tensor &logp) {
    Tensor x = weights.entropy != 0 ? logp : logp.detach();
    return (x.exp() * x).sum();
  };

  // SEL: every step that had a choice, all candidates at once.
  const int64_t segments = record.numSelSegments();
  if (segments > 0) {
    const int64_t rows = static_cast<int64_t>(record.selCandidates.size());
    Tensor candidates = int64FromInt32(record.selCandidates);
    Tensor offsets = int32Tensor(record.selOffsets);
    Tensor features =
        torch::from_blob(const_cast<float *>(record.selFeatures.data()),
                         {rows, kFeatureCount}, torch::kFloat32)
            .clone();
    const Tensor &W = network.selHidden->weight;
    Tensor pre =
        GatherRows::apply(encoded.selNodeTerm, candidates) +
        torch::linear(leaky(network.selFeature(features)), W.narrow(1, 0, H));
    Tensor bottom = SegmentStandardize::apply(
        GatherRows::apply(encoded.bottomSums, candidates), offsets);
    Tensor top = SegmentStandardize::apply(
        GatherRows::apply(encoded.topSums, candidates), offsets);
    if (network.config.projectSums)
      pre = pre + bottom * network.selBottomGain + top * network.selTopGain;
    else
      pre = pre + torch::linear(bottom, W.narrow(1, 2 * H, H)) +
            torch::linear(top, W.narrow(1, 3 * H, H));
    Tensor scores = network.selOut(leaky(pre)).view({-1});
    if (network.config.heuristicPrior)
      scores = scores + network.selPrior *
                            indicator(rows, record.selPriorRows);
    Tensor logp = SegmentLogSoftmax::apply(scores, offsets);
    // With the prior, imitation targets the heuristic's exact choice (its
    // tie-breaks too), so a fully imitated policy is the heuristic;
    // without it, any candidate with the largest b-level (METHOD s6).
    const bool exactTeacher = network.config.heuristicPrior;
    if (weights.imitation != 0)
      imitation = imitation -
                  logp.index_select(0, int64FromInt32(
                                           exactTeacher ? record.selPriorRows
                                                        : record.selTeacherRows))
                      .sum();
    if (useReturns) {
      std::vector<float> returns(segments);
      for (int64_t s = 0; s < segments; ++s)
        returns[s] = static_cast<float>(weights.returns[record.selStep[s]]);
      Tensor chosen =
          logp.index_select(0, int64FromInt32(record.selChosenRow));
      policy = policy -
               (chosen * torch::from_blob(returns.data(), {segments},
                                          torch::kFloat32)
                             .clone())
                   .sum();
    }
    negativeEntropy = negativeEntropy + entropyTerm(logp);
    terms.decisions += static_cast<int32_t>(segments);
  }

  // PLC: every step, all devices at once.
  const int64_t D = record.numDevices, T = static_cast<int64_t>(record.node.size());
  if (D >= 2 && T > 0) {
    Tensor features =
        torch::from_blob(const_cast<float *>(record.plcFeatures.data()),
                         {T * D, record.deviceFeatures}, torch::kFloat32)
            .clone();
    Tensor nodes = int64FromInt32(record.node);
    Tensor devices = int64FromInt32(record.device);
    // Embedding sums per device before each step: an exclusive running sum
    // over the placement order.
    Tensor placed = GatherRows::apply(encoded.deviceSummand, nodes); // [T][S]
    const int64_t S = placed.size(1);
    Tensor oneHot = torch::zeros({T, D});
    oneHot.scatter_(1, devices.unsqueeze(1), 1.0f);
    Tensor running = (oneHot.unsqueeze(2) * placed.unsqueeze(1)).cumsum(0);
    Tensor before = torch::cat({torch::zeros({1, D, S}),
                                running.narrow(0, 0, T - 1)})
                        .view({T * D, S});
    Tensor deviceOffsets =
        torch::arange(0, (T + 1) * D, D, torch::kInt32);
    const Tensor &W = network.plcHidden->weight;
    Tensor nodeTerm = GatherRows::apply(encoded.plcNodeTerm, nodes)
                          .unsqueeze(1)
                          .expand({T, D, network.config.headHiddenSize})
                          .reshape({T * D, network.config.headHiddenSize});
    Tensor pre =
        nodeTerm +
        torch::linear(leaky(network.plcDevice(features)), W.narrow(1, 0, H));
    Tensor sums = SegmentStandardize::apply(before, deviceOffsets);
    pre = network.config.projectSums
              ? pre + sums * network.plcSumGain
              : pre + torch::linear(sums, W.narrow(1, 3 * H, H));
    Tensor scores = network.plcOut(leaky(pre)).view({-1});
    if (network.config.heuristicPrior)
      scores = scores + network.plcPrior *
                            indicator(T * D, record.plcPriorRows);
    if (network.config.joinFeature && weights.joinPrior)
      scores = scores + network.joinPrior *
                            indicator(T * D, record.plcJoinRows);
    Tensor logp = torch::log_softmax(scores.view({T, D}), 1);
    if (weights.imitation != 0)
      imitation =
          imitation -
          logp.view({-1})
              .index_select(0, int64FromInt32(network.config.heuristicPrior
                                                  ? record.plcPriorRows
                                                  : record.plcTeacherRows))
              .sum();
    if (useReturns) {
      std::vector<float> returns(weights.returns.begin(),
                                 weights.returns.begin() + T);
      Tensor chosen = logp.gather(1, devices.unsqueeze(1)).view({-1});
      policy = policy -
               (chosen * torch::from_blob(returns.data(), {T}, torch::kFloat32)
                             .clone())
                   .sum();
    }
    negativeEntropy = negativeEntropy + entropyTerm(logp);
    terms.decisions += static_cast<int32_t>(T);
  }

  terms.total = weights.imitation * imitation +
                weights.policyGradient * policy +
                weights.entropy * negativeEntropy;
  terms.imitation = imitation.item<double>();
  terms.policy = policy.item<double>();
  terms.entropy = -negativeEntropy.item<double>();
  return terms;
}

//===----------------------------------------------------------------------===//
// Model files.
//===----------------------------------------------------------------------===//

void doppler::placement::learning::writeNetwork(
    DualPolicyNetworkImpl &network, torch::serialize::OutputArchive &archive) {
  const ModelConfig &c = network.config;
  archive.write("format", c10::IValue(std::string(kFormatTag)));
  archive.write("version", c10::IValue(kFormatVersion));
  archive.write("config_hidden", c10::IValue(int64_t(c.hiddenSize)));
  archive.write("config_head", c10::IValue(int64_t(c.headHiddenSize)));
  archive.write("config_rounds", c10::IValue(int64_t(c.messagePassingRounds)));
  archive.write("config_edge", c10::IValue(int64_t(c.edgeNetwork)));
  archive.write("config_rank", c10::IValue(int64_t(c.edgeRank)));
  archive.write("config_shared", c10::IValue(int64_t(c.sharedEncoder)));
  archive.write("config_estimate", c10::IValue(int64_t(c.startEstimate)));
  archive.write("config_prior", c10::IValue(int64_t(c.heuristicPrior)));
  archive.write("config_join", c10::IValue(int64_t(c.joinFeature)));
  archive.write("config_project", c10::IValue(int64_t(c.projectSums)));
  for (const auto &item : network.named_parameters())
    archive.write(mangle(item.key()), item.value().detach());
}

std::optional<DualPolicyNetwork> doppler::placement::learning::readNetwork(
    torch::serialize::InputArchive &archive, const std::string &source,
    std::string *error) {
  c10::IValue value;
  if (!archive.try_read("format", value) || !value.isString() ||
      value.toStringRef() != kFormatTag) {
    setError(error, source + ": not a Doppler policy model (no '" +
                        std::string(kFormatTag) + "' format tag)");
    return std::nullopt;
  }
  if (!archive.try_read("version", value) || !value.isInt() ||
      value.toInt() != kFormatVersion) {
    setError(error, source + ": unsupported model format version " +
                        (value.isInt() ? std::to_string(value.toInt())
                                       : std::string("(missing)")) +
                        " (this build reads version " +
                        std::to_string(kFormatVersion) + ")");
    return std::nullopt;
  }
  auto readInt = [&](const char *key, int64_t lo, int64_t hi,
                     int64_t &out) -> bool {
    c10::IValue v;
    if (!archive.try_read(key, v) || !v.isInt()) {
      setError(error, source + ": model configuration lacks '" +
                          std::string(key) + "'");
      return false;
    }
    if (v.toInt() < lo || v.toInt() > hi) {
      setError(error, source + ": model configuration '" + std::string(key) +
                          "' = " + std::to_string(v.toInt()) +
                          " is out of range [" + std::to_string(lo) + ", " +
                          std::to_string(hi) + "]");
      return false;
    }
    out = v.toInt();
    return true;
  };
  int64_t hidden, head, rounds, edge, rank, shared, estimate;
  if (!readInt("config_hidden", 1, 4096, hidden) ||
      !readInt("config_head", 1, 4096, head) ||
      !readInt("config_rounds", 0, 64, rounds) ||
      !readInt("config_edge", 0, 1, edge) ||
      !readInt("config_rank", 1, 4096, rank) ||
      !readInt("config_shared", 0, 1, shared) ||
      !readInt("config_estimate", 0, 1, estimate))
    return std::nullopt;
  // Added later: models written before them have none of them (0).
  int64_t prior = 0, join = 0, project = 0;
  for (auto [key, flag] : {std::pair{"config_prior", &prior},
                           std::pair{"config_join", &join},
                           std::pair{"config_project", &project}})
    if (c10::IValue stored;
        archive.try_read(key, stored) && !readInt(key, 0, 1, *flag))
      return std::nullopt;
  ModelConfig config;
  config.hiddenSize = static_cast<int32_t>(hidden);
  config.headHiddenSize = static_cast<int32_t>(head);
  config.messagePassingRounds = static_cast<int32_t>(rounds);
  config.edgeNetwork = static_cast<EdgeNetworkKind>(edge);
  config.edgeRank = static_cast<int32_t>(rank);
  config.sharedEncoder = shared != 0;
  config.startEstimate = static_cast<StartEstimate>(estimate);
  config.heuristicPrior = prior != 0;
  config.joinFeature = join != 0;
  config.projectSums = project != 0;
  if (config.edgeNetwork == EdgeNetworkKind::Full && hidden > 512) {
    setError(error, source + ": hidden size " + std::to_string(hidden) +
                        " is too large for full edge matrices");
    return std::nullopt;
  }
  DualPolicyNetwork network(config);
  torch::NoGradGuard noGrad;
  for (auto &item : network->named_parameters()) {
    Tensor stored;
    if (!archive.try_read(mangle(item.key()), stored)) {
      setError(error, source + ": model lacks parameter '" + item.key() + "'");
      return std::nullopt;
    }
    if (stored.sizes() != item.value().sizes()) {
      setError(error, source + ": parameter '" + item.key() + "' has shape " +
                          shapeText(stored.sizes()) + ", expected " +
                          shapeText(item.value().sizes()));
      return std::nullopt;
    }
    if (stored.scalar_type() != torch::kFloat32) {
      setError(error, source + ": parameter '" + item.key() +
                          "' is not float32");
      return std::nullopt;
    }
    if (!torch::isfinite(stored).all().item<bool>()) {
      setError(error, source + ": parameter '" + item.key() +
                          "' holds NaN or infinite values");
      return std::nullopt;
    }
    item.value().copy_(stored);
  }
  // A tensor the configuration has no place for means the configuration
  // keys do not describe the file (edited, or written by another build):
  // loading it would silently drop learned weights.
  std::vector<std::string> expected;
  for (const auto &item : network->named_parameters())
    expected.push_back(mangle(item.key()));
  for (const std::string &key : archive.keys()) {
    if (key.rfind(kParameterPrefix, 0) != 0 ||
        std::find(expected.begin(), expected.end(), key) != expected.end())
      continue;
    setError(error, source + ": model holds parameter '" +
                        key.substr(std::strlen(kParameterPrefix)) +
                        "', which its configuration (" + config.describe() +
                        ") does not have");
    return std::nullopt;
  }
  return network;
}

void doppler::placement::learning::copyParameters(DualPolicyNetworkImpl &from,
                                                  DualPolicyNetworkImpl &to) {
  torch::NoGradGuard noGrad;
  auto source = from.named_parameters();
  for (auto &item : to.named_parameters())
    item.value().copy_(source[item.key()]);
}

bool doppler::placement::learning::openArchive(
    torch::serialize::InputArchive &archive, const std::string &path,
    std::string *error) {
  std::ifstream probe(path, std::ios::binary);
  if (!probe) {
    setError(error, "cannot open '" + path + "': " + std::strerror(errno));
    return false;
  }
  probe.seekg(0, std::ios::end);
  if (probe.tellg() <= 0) {
    setError(error, "'" + path + "' is empty, not a model file");
    return false;
  }
  try {
    archive.load_from(path);
  } catch (const std::exception &e) {
    setError(error, "'" + path + "' is not a readable model file (" +
                        describeException(e) + ")");
    return false;
  }
  return true;
}

bool doppler::placement::learning::openArchive(
    torch::serialize::InputArchive &archive, const void *data, size_t size,
    const std::string &name, std::string *error) {
  if (size == 0) {
    setError(error, name + " is empty, not a model");
    return false;
  }
  try {
    archive.load_from(static_cast<const char *>(data), size);
  } catch (const std::exception &e) {
    setError(error, name + " is not a readable model (" +
                        describeException(e) + ")");
    return false;
  }
  return true;
}

bool doppler::placement::learning::saveArchiveAtomically(
    torch::serialize::OutputArchive &archive, const std::string &path,
    std::string *error) {
  std::string temporary = path + ".tmp-" + std::to_string(::getpid());
  try {
    archive.save_to(temporary);
  } catch (const std::exception &e) {
    std::remove(temporary.c_str());
    setError(error, "cannot write '" + path + "': " + describeException(e));
    return false;
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::string reason = std::strerror(errno);
    std::remove(temporary.c_str());
    setError(error, "cannot write '" + path + "': " + reason);
    return false;
  }
  return true;
}

std::string
doppler::placement::learning::describeException(const std::exception &e) {
  const char *text = e.what();
  if (const auto *torchError = dynamic_cast<const c10::Error *>(&e))
    text = torchError->what_without_backtrace();
  std::string message(text);
  size_t newline = message.find('\n');
  if (newline != std::string::npos)
    message.resize(newline);
  return message;
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
