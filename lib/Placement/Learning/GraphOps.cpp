//===- GraphOps.cpp - Graph tensors and autograd functions of the policy --===//
//
// The per-graph tensors the network reads, and a few autograd functions
// written as plain loops: LibTorch 1.13's CPU index_add (the gradient of
// index_select) and scatter paths run one slice at a time, which made them
// the largest cost of an episode; these run in microseconds.
//
//===----------------------------------------------------------------------===//

#include "PolicyNetwork.h"
#include "TensorHelpers.h"

#include "Doppler/Placement/Analysis.h"

#include <algorithm>
#include <cmath>

using namespace doppler::placement;
using namespace doppler::placement::learning;
using torch::Tensor;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;
using doppler::placement::learning::detail::int32Tensor;

namespace {

Tensor int64Tensor(const std::vector<int64_t> &values) {
  return torch::from_blob(const_cast<int64_t *>(values.data()),
                          {static_cast<int64_t>(values.size())}, torch::kInt64)
      .clone();
}

//===----------------------------------------------------------------------===//
// Autograd functions.
//===----------------------------------------------------------------------===//

/// out[index[i]] += x[i] for every row i of `x`, into `rows` zero rows:
/// ScatterAddRows' forward and GatherRows' backward.
Tensor scatterAddRows(const Tensor &xIn, const Tensor &index, int64_t rows) {
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
    return {scatterAddRows(grads[0], index, rows), Tensor()};
  }
};

/// out[index[i]] += x[i] into `rows` rows.
struct ScatterAddRows : torch::autograd::Function<ScatterAddRows> {
  static Tensor forward(AutogradContext *ctx, const Tensor &xIn,
                        const Tensor &index, int64_t rows) {
    ctx->saved_data["index"] = index;
    return scatterAddRows(xIn, index, rows);
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

// SegmentStandardize's row loops, over `width` columns (restrict pointers,
// so that they vectorise; each column's sums still run in row order).
DOPPLER_AVX2_CLONES
void accumulateRow(const float *__restrict x, int64_t width,
                   double *__restrict sum) {
  for (int64_t c = 0; c < width; ++c)
    sum[c] += x[c];
}
DOPPLER_AVX2_CLONES
void accumulateSquaredDeviation(const float *__restrict x,
                                const double *__restrict mean, int64_t width,
                                double *__restrict squares) {
  for (int64_t c = 0; c < width; ++c) {
    double d = x[c] - mean[c];
    squares[c] += d * d;
  }
}
DOPPLER_AVX2_CLONES
void standardizeRowDouble(const float *__restrict x,
                          const double *__restrict mean,
                          const double *__restrict scale, int64_t width,
                          float *__restrict y) {
  for (int64_t c = 0; c < width; ++c)
    y[c] = static_cast<float>((x[c] - mean[c]) * scale[c]);
}
DOPPLER_AVX2_CLONES
void accumulateGradientRow(const float *__restrict g, const float *__restrict y,
                           int64_t width, double *__restrict gSum,
                           double *__restrict gDotY) {
  for (int64_t c = 0; c < width; ++c) {
    gSum[c] += g[c];
    gDotY[c] += static_cast<double>(g[c]) * y[c];
  }
}
/// One row of the standardisation's gradient, written to `out` or, with
/// Add, added to it.
template <bool Add>
DOPPLER_AVX2_CLONES void
standardizeGradientRow(const float *__restrict g, const float *__restrict y,
                       const double *__restrict gMean,
                       const double *__restrict scale,
                       const double *__restrict coupling, int64_t width,
                       float *__restrict out) {
  for (int64_t c = 0; c < width; ++c) {
    const float value = static_cast<float>((g[c] - gMean[c]) * scale[c] -
                                           y[c] * coupling[c]);
    if constexpr (Add)
      out[c] += value;
    else
      out[c] = value;
  }
}

DOPPLER_AVX2_CLONES
void divideBy(double *__restrict x, int64_t width, double n) {
  for (int64_t c = 0; c < width; ++c)
    x[c] /= n;
}
/// A segment's std (as float, for the backward) and 1 / (std + eps) from
/// its sums of squared deviations.
DOPPLER_AVX2_CLONES
void columnScales(const double *__restrict squares, int64_t width, double n,
                  float *__restrict sigma, double *__restrict scale) {
  for (int64_t c = 0; c < width; ++c) {
    double std = std::sqrt(squares[c] / n);
    sigma[c] = static_cast<float>(std);
    scale[c] = 1.0 / (std + kStandardizeEpsilon);
  }
}
/// The backward's per-column factors; `gMean` holds sums on entry.
DOPPLER_AVX2_CLONES
void gradientScales(const float *__restrict sigma,
                    const double *__restrict gDotY, int64_t width, double n,
                    double *__restrict gMean, double *__restrict scale,
                    double *__restrict coupling) {
  for (int64_t c = 0; c < width; ++c) {
    double std = sigma[c];
    scale[c] = 1.0 / (std + kStandardizeEpsilon);
    gMean[c] /= n;
    coupling[c] = std > 0 ? gDotY[c] / (n * std) : 0.0;
  }
}

} // namespace

void doppler::placement::learning::detail::standardizeRows(
    const float *x, const NodeId *ids, int32_t rows, int64_t width, float *y,
    float *sigma, double *scratch) {
  double *mean = scratch, *squares = mean + width, *scale = squares + width;
  auto row = [&](int32_t r) { return x + (ids ? ids[r] : r) * width; };
  const double n = rows;
  std::fill(mean, mean + 2 * width, 0.0);
  for (int32_t r = 0; r < rows; ++r)
    accumulateRow(row(r), width, mean);
  divideBy(mean, width, n);
  for (int32_t r = 0; r < rows; ++r)
    accumulateSquaredDeviation(row(r), mean, width, squares);
  columnScales(squares, width, n, sigma, scale);
  for (int32_t r = 0; r < rows; ++r)
    standardizeRowDouble(row(r), mean, scale, width, y + r * width);
}

void doppler::placement::learning::detail::standardizeRowsBackward(
    const float *g, const float *y, const float *sigma, const NodeId *ids,
    int32_t rows, int64_t width, float *out, bool add, double *scratch) {
  double *gMean = scratch, *gDotY = gMean + width, *scale = gDotY + width,
         *coupling = scale + width;
  const double n = rows;
  // With s = std + eps: dx_i = (g_i - mean(g)) / s - y_i * sum_j(g_j y_j)
  // / (n * std); the second term vanishes with std = 0.
  std::fill(gMean, gMean + 2 * width, 0.0);
  for (int32_t r = 0; r < rows; ++r)
    accumulateGradientRow(g + r * width, y + r * width, width, gMean, gDotY);
  gradientScales(sigma, gDotY, width, n, gMean, scale, coupling);
  for (int32_t r = 0; r < rows; ++r) {
    float *o = out + (ids ? ids[r] : r) * width;
    if (add)
      standardizeGradientRow<true>(g + r * width, y + r * width, gMean, scale,
                                   coupling, width, o);
    else
      standardizeGradientRow<false>(g + r * width, y + r * width, gMean,
                                    scale, coupling, width, o);
  }
}

namespace {

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
    std::vector<double> scratch(3 * width);
    for (int64_t s = 0; s < segments; ++s) {
      const int32_t begin = off[s];
      learning::detail::standardizeRows(
          xs + begin * width, nullptr, off[s + 1] - begin, width,
          ys + begin * width, sg + s * width, scratch.data());
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
    std::vector<double> scratch(4 * width);
    for (int64_t s = 0; s < segments; ++s) {
      const int32_t begin = off[s];
      learning::detail::standardizeRowsBackward(
          gs + begin * width, ys + begin * width, sg + s * width, nullptr,
          off[s + 1] - begin, width, os + begin * width, /*add=*/false,
          scratch.data());
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

/// out = relu(a + b) over `width` values.
DOPPLER_AVX2_CLONES
void reluOfSum(const float *__restrict a, const float *__restrict b,
               int64_t width, float *__restrict out) {
  for (int64_t c = 0; c < width; ++c) {
    float v = a[c] + b[c];
    out[c] = v > 0 ? v : 0.0f;
  }
}

DOPPLER_AVX2_CLONES
void addRows(const float *__restrict a, const float *__restrict b,
             int64_t width, float *__restrict out) {
  for (int64_t c = 0; c < width; ++c)
    out[c] = a[c] + b[c];
}

/// GRUCell's new-gate input gi_n + gh_n * r.
DOPPLER_AVX2_CLONES
void newGateInput(const float *__restrict gi, const float *__restrict gh,
                  const float *__restrict r, int64_t width,
                  float *__restrict out) {
  for (int64_t c = 0; c < width; ++c)
    out[c] = gi[c] + gh[c] * r[c];
}

/// GRUCell's output (h - n) * z + n.
DOPPLER_AVX2_CLONES
void gruOutput(const float *__restrict h, const float *__restrict n,
               const float *__restrict z, int64_t width,
               float *__restrict out) {
  for (int64_t c = 0; c < width; ++c)
    out[c] = (h[c] - n[c]) * z[c] + n[c];
}

/// GruRound's backward, first half of a row: h's direct term z * g
/// (`dDirect`) and the gradient of the new gate n, g - z * g (`dn`).
DOPPLER_AVX2_CLONES
void gruNewGateGradient(const float *__restrict g, const float *__restrict rz,
                        int64_t H, float *__restrict dDirect,
                        float *__restrict dn) {
  for (int64_t c = 0; c < H; ++c) {
    const float gz = g[c] * rz[H + c];
    dDirect[c] = gz;
    dn[c] = g[c] - gz;
  }
}

/// The second half, from the gradient of n's pre-activation `dnPre`: the
/// gradients of the input-side gate pre-activations [r | z | n] (`di`) and
/// the hidden side's (`dh`: the same but r * dnPre in the new gate's
/// block). The operations and their order are those of LibTorch's
/// backward of the cell (sigmoid's: g * (1 - y) * y), so the gradients are
/// the same.
DOPPLER_AVX2_CLONES
void gruGateGradients(const float *__restrict g, const float *__restrict h,
                      const float *__restrict rz, const float *__restrict n,
                      const float *__restrict gh,
                      const float *__restrict dnPre, int64_t H,
                      float *__restrict di, float *__restrict dh) {
  for (int64_t c = 0; c < H; ++c) {
    const float r = rz[c], z = rz[H + c], dn = dnPre[c];
    const float dr = dn * gh[2 * H + c] * (1 - r) * r;
    const float dz = g[c] * (h[c] - n[c]) * (1 - z) * z;
    di[c] = dh[c] = dr;
    di[H + c] = dh[H + c] = dz;
    di[2 * H + c] = dn;
    dh[2 * H + c] = dn * r;
  }
}

/// g[k] = 0 where x[k] <= 0 (relu's backward).
DOPPLER_AVX2_CLONES
void maskByPositive(const float *__restrict x, int64_t count,
                    float *__restrict g) {
  for (int64_t k = 0; k < count; ++k)
    g[k] = x[k] > 0 ? g[k] : 0.0f;
}

/// The GRU cell after its two matrix products, over `rows` rows: from
/// gi = x W_ih^T + b_ih and gh = h W_hh^T + b_hh ([rows][3H] each, at
/// `gis` and `ghs`), gates [rows][2H] = sigmoid(gh_rz + gi_rz) (r | z),
/// n [rows][H] = tanh(gi_n + gh_n * r) and out = (h - n) * z + n, the
/// operations of LibTorch's GRUCell in its order. `gates` and `n` are
/// contiguous; GruRound's forward and gruRoundInference share it, so both
/// give the same values.
void gruCellRows(const float *gis, const float *ghs, const float *hs,
                 int64_t rows, int64_t H, Tensor gates, Tensor n,
                 float *out) {
  float *gs = gates.data_ptr<float>(), *ns = n.data_ptr<float>();
  for (int64_t i = 0; i < rows; ++i)
    addRows(ghs + i * 3 * H, gis + i * 3 * H, 2 * H, gs + i * 2 * H);
  gates.sigmoid_();
  for (int64_t i = 0; i < rows; ++i)
    newGateInput(gis + i * 3 * H + 2 * H, ghs + i * 3 * H + 2 * H,
                 gs + i * 2 * H, H, ns + i * H);
  n.tanh_();
  for (int64_t i = 0; i < rows; ++i)
    gruOutput(hs + i * H, ns + i * H, gs + i * 2 * H + H, H, out + i * H);
}

/// The encoder's round: x = relu(messages + bias), then LibTorch's GRU
/// cell of (x, h) (the same operations in the same order, so the same
/// values), as one autograd node whose backward is one loop over the gates
/// and four matrix products, instead of some twenty LibTorch nodes.
struct GruRound : torch::autograd::Function<GruRound> {
  static Tensor forward(AutogradContext *ctx, const Tensor &messagesIn,
                        const Tensor &biasIn, const Tensor &hIn,
                        const Tensor &weightIh, const Tensor &weightHh,
                        const Tensor &biasIh, const Tensor &biasHh) {
    Tensor messages = messagesIn.contiguous(), h = hIn.contiguous();
    Tensor bias = biasIn.contiguous();
    const int64_t N = h.size(0), H = h.size(1);
    Tensor x = torch::empty({N, H}, h.options());
    for (int64_t i = 0; i < N; ++i)
      reluOfSum(messages.data_ptr<float>() + i * H, bias.data_ptr<float>(),
                H, x.data_ptr<float>() + i * H);
    // As GRUCell: r = sigmoid(gh_r + gi_r), z = sigmoid(gh_z + gi_z),
    // n = tanh(gi_n + gh_n * r), h' = (h - n) * z + n.
    Tensor gi = torch::addmm(biasIh, x, weightIh.t());
    Tensor gh = torch::addmm(biasHh, h, weightHh.t());
    Tensor gates = torch::empty({N, 2 * H}, h.options()); // [r | z]
    Tensor n = torch::empty({N, H}, h.options());
    Tensor out = torch::empty({N, H}, h.options());
    gruCellRows(gi.data_ptr<float>(), gh.data_ptr<float>(),
                h.data_ptr<float>(), N, H, gates, n, out.data_ptr<float>());
    ctx->save_for_backward({x, h, gates, n, gh, weightIh, weightHh});
    return out;
  }

  static variable_list backward(AutogradContext *ctx, variable_list grads) {
    variable_list saved = ctx->get_saved_variables();
    const Tensor &x = saved[0], &h = saved[1], &gates = saved[2],
                 &n = saved[3], &gh = saved[4], &weightIh = saved[5],
                 &weightHh = saved[6];
    Tensor g = grads[0].contiguous();
    const int64_t N = h.size(0), H = h.size(1);
    // Gradients of the gate pre-activations: the input side's [N][3H] and
    // the hidden side's (the same but for the new gate's block, scaled by
    // r), and h's direct term z * g.
    Tensor dInput = torch::empty({N, 3 * H}, h.options());
    Tensor dHidden = torch::empty({N, 3 * H}, h.options());
    Tensor dH = torch::empty({N, H}, h.options());
    Tensor dN = torch::empty({N, H}, h.options());
    const float *gs = g.data_ptr<float>(), *rz = gates.data_ptr<float>();
    for (int64_t i = 0; i < N; ++i)
      gruNewGateGradient(gs + i * H, rz + i * 2 * H, H,
                         dH.data_ptr<float>() + i * H,
                         dN.data_ptr<float>() + i * H);
    // LibTorch's own tanh backward (its vector kernel fuses 1 - y * y).
    Tensor dNPre = at::tanh_backward(dN, n);
    for (int64_t i = 0; i < N; ++i)
      gruGateGradients(gs + i * H, h.data_ptr<float>() + i * H, rz + i * 2 * H,
                       n.data_ptr<float>() + i * H,
                       gh.data_ptr<float>() + i * 3 * H,
                       dNPre.data_ptr<float>() + i * H, H,
                       dInput.data_ptr<float>() + i * 3 * H,
                       dHidden.data_ptr<float>() + i * 3 * H);
    Tensor dMessages, dBias, dh0, dWeightIh, dWeightHh, dBiasIh, dBiasHh;
    if (ctx->needs_input_grad(0) || ctx->needs_input_grad(1)) {
      dMessages = dInput.mm(weightIh);
      maskByPositive(x.data_ptr<float>(), N * H, dMessages.data_ptr<float>());
      if (ctx->needs_input_grad(1))
        dBias = dMessages.sum(0);
    }
    // h's two terms summed as the autograd engine sums them.
    if (ctx->needs_input_grad(2))
      dh0 = dH + dHidden.mm(weightHh);
    if (ctx->needs_input_grad(3))
      dWeightIh = dInput.t().mm(x);
    if (ctx->needs_input_grad(4))
      dWeightHh = dHidden.t().mm(h);
    if (ctx->needs_input_grad(5))
      dBiasIh = dInput.sum(0);
    if (ctx->needs_input_grad(6))
      dBiasHh = dHidden.sum(0);
    return {dMessages, dBias,     dh0,    dWeightIh,
            dWeightHh, dBiasIh, dBiasHh};
  }
};

/// GruRound's forward without autograd (placing, not training), a block
/// of rows at a time: a row's values depend on that row alone, so they are
/// the same, but a block's temporaries (the gate inputs, [rows][3H] twice,
/// and the gates) stay in cache and are reused, where the whole graph's
/// were fresh pages of memory each round (on 132,624 nodes, 0.75 GB a
/// round, about 2 s of page faults in a 12 s pass). Blocks have at least
/// kGruBlockRows rows (the last takes the remainder), so that no product
/// is small enough for OpenBLAS's small-matrix kernels.
constexpr int64_t kGruBlockRows = 1024;

Tensor gruRoundInference(const Tensor &messagesIn, const Tensor &biasIn,
                         const Tensor &hIn, const Tensor &weightIh,
                         const Tensor &weightHh, const Tensor &biasIh,
                         const Tensor &biasHh) {
  Tensor messages = messagesIn.contiguous(), h = hIn.contiguous();
  Tensor bias = biasIn.contiguous();
  const int64_t N = h.size(0), H = h.size(1);
  Tensor out = torch::empty({N, H}, h.options());
  const int64_t block = std::min(N, 2 * kGruBlockRows - 1);
  Tensor x = torch::empty({block, H}, h.options());
  Tensor gi = torch::empty({block, 3 * H}, h.options());
  Tensor gh = torch::empty({block, 3 * H}, h.options());
  Tensor gates = torch::empty({block, 2 * H}, h.options());
  Tensor n = torch::empty({block, H}, h.options());
  const Tensor wIh = weightIh.t(), wHh = weightHh.t();
  for (int64_t begin = 0; begin < N;) {
    const int64_t rows =
        N - begin < 2 * kGruBlockRows ? N - begin : kGruBlockRows;
    Tensor xb = x.narrow(0, 0, rows), gib = gi.narrow(0, 0, rows);
    Tensor ghb = gh.narrow(0, 0, rows), gb = gates.narrow(0, 0, rows);
    Tensor nb = n.narrow(0, 0, rows);
    float *xs = x.data_ptr<float>();
    for (int64_t i = 0; i < rows; ++i)
      reluOfSum(messages.data_ptr<float>() + (begin + i) * H,
                bias.data_ptr<float>(), H, xs + i * H);
    torch::addmm_out(gib, biasIh, xb, wIh);
    torch::addmm_out(ghb, biasHh, h.narrow(0, begin, rows), wHh);
    gruCellRows(gi.data_ptr<float>(), gh.data_ptr<float>(),
                h.data_ptr<float>() + begin * H, rows, H, gb, nb,
                out.data_ptr<float>() + begin * H);
    begin += rows;
  }
  return out;
}

} // namespace

torch::Tensor doppler::placement::learning::gruRound(
    const Tensor &messages, const Tensor &bias, const Tensor &h,
    const Tensor &weightIh, const Tensor &weightHh, const Tensor &biasIh,
    const Tensor &biasHh) {
  if (!torch::GradMode::is_enabled())
    return gruRoundInference(messages, bias, h, weightIh, weightHh, biasIh,
                             biasHh);
  return GruRound::apply(messages, bias, h, weightIh, weightHh, biasIh,
                         biasHh);
}

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
