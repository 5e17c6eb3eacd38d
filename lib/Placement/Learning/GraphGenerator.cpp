//===- GraphGenerator.cpp - Synthetic decomposed dataflow graphs ----------===//
//
// A small block-decomposition builder: 2-D tensors are split into a grid of
// blocks, each operation becomes one node per output block, and a split
// contraction gets an aggregation node per output block. Graph inputs
// (weights, activations fed in) produce no nodes, as in the reference
// graphs where input nodes are dropped.
//
//===----------------------------------------------------------------------===//

#include "Doppler/Placement/Learning/GraphGenerator.h"

#include "Random.h"

#include "Doppler/Support/ErrorString.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

using namespace doppler::placement;
using doppler::setError;
using doppler::placement::learning::deriveSeed;
using doppler::placement::learning::Random;

namespace {

/// A 2-D tensor split into rowParts x colParts blocks. blocks[i * colParts +
/// j] is the node producing block (i, j), or -1 for a graph input. A block
/// grid may be uneven: block i spans rows [i*rows/rowParts,
/// (i+1)*rows/rowParts).
struct BlockTensor {
  int64_t rows = 0, cols = 0;
  int32_t rowParts = 1, colParts = 1;
  std::vector<NodeId> blocks;

  NodeId block(int32_t i, int32_t j) const { return blocks[i * colParts + j]; }
  int64_t rowBegin(int32_t i) const { return i * rows / rowParts; }
  int64_t colBegin(int32_t j) const { return j * cols / colParts; }
  int64_t blockRows(int32_t i) const { return rowBegin(i + 1) - rowBegin(i); }
  int64_t blockCols(int32_t j) const { return colBegin(j + 1) - colBegin(j); }
  /// Column block j as a tensor of its own (same producing nodes).
  BlockTensor columnBlock(int32_t j) const {
    BlockTensor view;
    view.rows = rows;
    view.cols = blockCols(j);
    view.rowParts = rowParts;
    view.colParts = 1;
    for (int32_t i = 0; i < rowParts; ++i)
      view.blocks.push_back(block(i, j));
    return view;
  }
};

/// Turns block operations into timed nodes.
class DecomposedGraphBuilder {
public:
  explicit DecomposedGraphBuilder(const CostRates &rates) : rates_(rates) {}

  BlockTensor input(int64_t rows, int64_t cols, int32_t rowParts,
                    int32_t colParts) {
    BlockTensor t = shape(rows, cols, rowParts, colParts);
    t.blocks.assign(static_cast<size_t>(rowParts) * colParts, -1);
    return t;
  }

  /// Re-splits `t` (a "formation" node per new block, fed by every old
  /// block it overlaps). Returns `t` itself when the split already matches.
  BlockTensor repartition(const BlockTensor &t, int32_t rowParts,
                          int32_t colParts) {
    if (t.rowParts == rowParts && t.colParts == colParts)
      return t;
    BlockTensor out = shape(t.rows, t.cols, rowParts, colParts);
    for (int32_t i = 0; i < rowParts; ++i)
      for (int32_t j = 0; j < colParts; ++j) {
        std::vector<NodeId> inputs;
        for (int32_t a = 0; a < t.rowParts; ++a)
          for (int32_t b = 0; b < t.colParts; ++b)
            if (overlaps(t.rowBegin(a), t.rowBegin(a + 1), out.rowBegin(i),
                         out.rowBegin(i + 1)) &&
                overlaps(t.colBegin(b), t.colBegin(b + 1), out.colBegin(j),
                         out.colBegin(j + 1)))
              inputs.push_back(t.block(a, b));
        double bytes = bytesOf(out.blockRows(i) * out.blockCols(j));
        out.blocks.push_back(
            addNode(memoryTime(2 * bytes), bytes, inputs, "formation"));
      }
    return out;
  }

  /// a [m, k] x b [k, n] (or b^T when `transposeB`, b being [n, k]) into
  /// rowParts x colParts output blocks; the contraction is split as a's
  /// columns are. Partial products are summed by aggregation nodes.
  BlockTensor matmul(const BlockTensor &aIn, const BlockTensor &bIn,
                     int32_t rowParts, int32_t colParts,
                     bool transposeB = false) {
    BlockTensor a = repartition(aIn, rowParts, aIn.colParts);
    int32_t kParts = a.colParts;
    BlockTensor b = transposeB ? repartition(bIn, colParts, kParts)
                               : repartition(bIn, kParts, colParts);
    int64_t n = transposeB ? b.rows : b.cols;
    BlockTensor out = shape(a.rows, n, rowParts, colParts);
    for (int32_t i = 0; i < rowParts; ++i)
      for (int32_t j = 0; j < colParts; ++j) {
        int64_t bm = out.blockRows(i), bn = out.blockCols(j);
        double outBytes = bytesOf(bm * bn);
        std::vector<NodeId> partials;
        for (int32_t l = 0; l < kParts; ++l) {
          int64_t bk = a.blockCols(l);
          double flops = 2.0 * bm * bn * bk;
          double moved = bytesOf(bm * bk + bk * bn + bm * bn);
          NodeId bBlock = transposeB ? b.block(j, l) : b.block(l, j);
          partials.push_back(addNode(
              std::max(flops / rates_.flopsPerSecond,
                       moved / rates_.memoryBytesPerSecond),
              outBytes, {a.block(i, l), bBlock}, "einsummable"));
        }
        out.blocks.push_back(partials.size() == 1
                                 ? partials.front()
                                 : addNode(memoryTime((kParts + 1) * outBytes),
                                           outBytes, partials, "einsummable"));
      }
    return out;
  }

  /// One node per block; `passes` = tensors read and written per element.
  BlockTensor elementwise(const BlockTensor &a, double passes = 2) {
    BlockTensor out = shape(a.rows, a.cols, a.rowParts, a.colParts);
    for (int32_t i = 0; i < a.rowParts; ++i)
      for (int32_t j = 0; j < a.colParts; ++j) {
        double bytes = bytesOf(a.blockRows(i) * a.blockCols(j));
        out.blocks.push_back(addNode(memoryTime(passes * bytes), bytes,
                                     {a.block(i, j)}, "einsummable"));
      }
    return out;
  }

  /// Elementwise a op b; b is re-split like a. A b of one column is
  /// broadcast along a's rows (b is [m, 1]).
  BlockTensor binary(const BlockTensor &a, const BlockTensor &bIn) {
    bool broadcast = bIn.cols == 1 && a.cols != 1;
    BlockTensor b = repartition(bIn, a.rowParts, broadcast ? 1 : a.colParts);
    BlockTensor out = shape(a.rows, a.cols, a.rowParts, a.colParts);
    for (int32_t i = 0; i < a.rowParts; ++i)
      for (int32_t j = 0; j < a.colParts; ++j) {
        double bytes = bytesOf(a.blockRows(i) * a.blockCols(j));
        NodeId other = b.block(i, broadcast ? 0 : j);
        out.blocks.push_back(addNode(memoryTime(3 * bytes), bytes,
                                     {a.block(i, j), other}, "einsummable"));
      }
    return out;
  }

  /// Reduces each row to one value ([m, n] -> [m, 1]): a partial reduction
  /// per block, then a node per row block combining the column blocks.
  BlockTensor rowReduce(const BlockTensor &a) {
    BlockTensor out = shape(a.rows, 1, a.rowParts, 1);
    for (int32_t i = 0; i < a.rowParts; ++i) {
      double outBytes = bytesOf(a.blockRows(i));
      std::vector<NodeId> partials;
      for (int32_t j = 0; j < a.colParts; ++j) {
        double bytes = bytesOf(a.blockRows(i) * a.blockCols(j));
        partials.push_back(addNode(memoryTime(bytes + outBytes), outBytes,
                                   {a.block(i, j)}, "einsummable"));
      }
      out.blocks.push_back(
          partials.size() == 1
              ? partials.front()
              : addNode(memoryTime((a.colParts + 1) * outBytes), outBytes,
                        partials, "einsummable"));
    }
    return out;
  }

  /// Side by side: [m, n1] ++ [m, n2] ++ ... (row splits must agree; the
  /// column blocks are concatenated without new nodes).
  BlockTensor concatColumns(const std::vector<BlockTensor> &parts) {
    BlockTensor out = parts.front();
    out.cols = 0;
    out.colParts = 0;
    for (const BlockTensor &p : parts) {
      out.cols += p.cols;
      out.colParts += p.colParts;
    }
    out.blocks.clear();
    for (int32_t i = 0; i < out.rowParts; ++i)
      for (const BlockTensor &p : parts)
        for (int32_t j = 0; j < p.colParts; ++j)
          out.blocks.push_back(p.block(i, j));
    return out;
  }

  int32_t numNodes() const { return builder_.numNodes(); }

  std::optional<Graph> build(std::string *error) const {
    return builder_.build(error);
  }

private:
  static bool overlaps(int64_t a0, int64_t a1, int64_t b0, int64_t b1) {
    return a0 < b1 && b0 < a1;
  }
  static BlockTensor shape(int64_t rows, int64_t cols, int32_t rowParts,
                           int32_t colParts) {
    BlockTensor t;
    t.rows = rows;
    t.cols = cols;
    t.rowParts = static_cast<int32_t>(std::min<int64_t>(rowParts, rows));
    t.colParts = static_cast<int32_t>(std::min<int64_t>(colParts, cols));
    return t;
  }
  double bytesOf(int64_t elements) const {
    return static_cast<double>(elements) * rates_.elementBytes;
  }
  double memoryTime(double bytes) const {
    return bytes / rates_.memoryBytesPerSecond;
  }
  static double toNanoseconds(double seconds) {
    return std::max(1.0, std::round(seconds * 1e9));
  }

  NodeId addNode(double seconds, double outputBytes,
                 const std::vector<NodeId> &inputs, const char *opType) {
    double compute = toNanoseconds(seconds + rates_.launchSeconds);
    double transfer = toNanoseconds(outputBytes / rates_.linkBytesPerSecond +
                                    rates_.linkLatencySeconds);
    NodeId v = builder_.addNode(compute, transfer, opType);
    builder_.setOutputBytes(v, outputBytes);
    for (NodeId u : inputs)
      if (u >= 0)
        builder_.addEdge(u, v);
    return v;
  }

  CostRates rates_;
  GraphBuilder builder_;
};

bool checkPositive(int64_t value, const char *what, std::string *error) {
  if (value >= 1)
    return true;
  setError(error, std::string(what) + " must be at least 1, got " +
                      std::to_string(value));
  return false;
}

/// RMS norm: x * rsqrt(mean(x^2)) (the learned scale folds into the next
/// matmul's weights).
BlockTensor rmsNorm(DecomposedGraphBuilder &b, const BlockTensor &x) {
  BlockTensor squares = b.elementwise(x);
  BlockTensor sums = b.rowReduce(squares);
  BlockTensor scales = b.elementwise(sums);
  return b.binary(x, scales);
}

BlockTensor transformerLayer(DecomposedGraphBuilder &b, const BlockTensor &x,
                             const TransformerShape &s) {
  int32_t ps = s.sequenceParts, ph = s.headGroups, pf = s.ffnParts;
  // Attention: q, k, v split by head group (their columns).
  BlockTensor normed = rmsNorm(b, x);
  BlockTensor wq = b.input(s.model, s.model, 1, ph);
  BlockTensor wk = b.input(s.model, s.model, 1, ph);
  BlockTensor wv = b.input(s.model, s.model, 1, ph);
  BlockTensor q = b.matmul(normed, wq, ps, ph);
  BlockTensor k = b.matmul(normed, wk, ps, ph);
  BlockTensor v = b.matmul(normed, wv, ps, ph);
  std::vector<BlockTensor> heads;
  for (int32_t g = 0; g < q.colParts; ++g) {
    BlockTensor scores =
        b.matmul(q.columnBlock(g), k.columnBlock(g), ps, ps, true);
    BlockTensor exps = b.elementwise(scores);
    BlockTensor sums = b.rowReduce(exps);
    BlockTensor probs = b.binary(exps, sums);
    heads.push_back(b.matmul(probs, v.columnBlock(g), ps, 1));
  }
  BlockTensor attention = b.concatColumns(heads);
  BlockTensor wo = b.input(s.model, s.model, attention.colParts, 1);
  BlockTensor projected = b.matmul(attention, wo, ps, 1);
  BlockTensor residual = b.binary(x, projected);
  // Gated MLP: down(silu(gate(x)) * up(x)), hidden split in pf blocks.
  BlockTensor normed2 = rmsNorm(b, residual);
  BlockTensor wGate = b.input(s.model, s.ffn, 1, pf);
  BlockTensor wUp = b.input(s.model, s.ffn, 1, pf);
  BlockTensor gate = b.elementwise(b.matmul(normed2, wGate, ps, pf));
  BlockTensor up = b.matmul(normed2, wUp, ps, pf);
  BlockTensor hidden = b.binary(gate, up);
  BlockTensor wDown = b.input(s.ffn, s.model, pf, 1);
  BlockTensor down = b.matmul(hidden, wDown, ps, 1);
  return b.binary(residual, down);
}

std::optional<GeneratedGraph> finish(DecomposedGraphBuilder &builder,
                                     std::string name, std::string *error) {
  std::optional<Graph> graph = builder.build(error);
  if (!graph)
    return std::nullopt;
  if (graph->numNodes() == 0) {
    setError(error, name + ": generated graph has no nodes");
    return std::nullopt;
  }
  return GeneratedGraph{std::move(name), std::move(*graph)};
}

} // namespace

std::optional<GeneratedGraph>
doppler::placement::generateChainMatmul(const ChainMatmulShape &shape,
                                        const CostRates &rates,
                                        std::string *error) {
  if (!checkPositive(shape.numMatrices - 1, "number of products", error) ||
      !checkPositive(shape.size, "matrix size", error) ||
      !checkPositive(shape.partitions, "partitions", error))
    return std::nullopt;
  DecomposedGraphBuilder b(rates);
  int32_t p = shape.partitions;
  BlockTensor product = b.input(shape.size, shape.size, p, p);
  for (int32_t i = 1; i < shape.numMatrices; ++i)
    product = b.matmul(product, b.input(shape.size, shape.size, p, p), p, p);
  return finish(b,
                "chain-mm-n" + std::to_string(shape.numMatrices) + "-s" +
                    std::to_string(shape.size) + "-p" + std::to_string(p),
                error);
}

std::optional<GeneratedGraph>
doppler::placement::generateFeedForward(const FeedForwardShape &shape,
                                        const CostRates &rates,
                                        std::string *error) {
  if (shape.widths.size() < 2) {
    setError(error, "a feed-forward network needs at least 2 widths");
    return std::nullopt;
  }
  if (!checkPositive(shape.batch, "batch", error) ||
      !checkPositive(shape.batchPartitions, "batch partitions", error) ||
      !checkPositive(shape.featurePartitions, "feature partitions", error))
    return std::nullopt;
  for (int64_t w : shape.widths)
    if (!checkPositive(w, "width", error))
      return std::nullopt;
  DecomposedGraphBuilder b(rates);
  int32_t pb = shape.batchPartitions, pf = shape.featurePartitions;
  BlockTensor x = b.input(shape.batch, shape.widths[0], pb, pf);
  std::string name = "ffnn-b" + std::to_string(shape.batch);
  for (size_t i = 1; i < shape.widths.size(); ++i) {
    BlockTensor w = b.input(shape.widths[i - 1], shape.widths[i], pf, pf);
    x = b.matmul(x, w, pb, pf);
    if (i + 1 < shape.widths.size())
      x = b.elementwise(x); // activation
    name += "-" + std::to_string(shape.widths[i]);
  }
  name += "-pb" + std::to_string(pb) + "-pf" + std::to_string(pf);
  return finish(b, std::move(name), error);
}

std::optional<GeneratedGraph>
doppler::placement::generateTransformer(const TransformerShape &shape,
                                        const CostRates &rates,
                                        std::string *error) {
  if (!checkPositive(shape.sequence, "sequence", error) ||
      !checkPositive(shape.model, "model width", error) ||
      !checkPositive(shape.ffn, "ffn width", error) ||
      !checkPositive(shape.layers, "layers", error) ||
      !checkPositive(shape.sequenceParts, "sequence partitions", error) ||
      !checkPositive(shape.headGroups, "head groups", error) ||
      !checkPositive(shape.ffnParts, "ffn partitions", error))
    return std::nullopt;
  DecomposedGraphBuilder b(rates);
  BlockTensor x = b.input(shape.sequence, shape.model, shape.sequenceParts, 1);
  for (int32_t l = 0; l < shape.layers; ++l)
    x = transformerLayer(b, x, shape);
  return finish(b,
                "transformer-s" + std::to_string(shape.sequence) + "-d" +
                    std::to_string(shape.model) + "-L" +
                    std::to_string(shape.layers) + "-ps" +
                    std::to_string(shape.sequenceParts) + "-ph" +
                    std::to_string(shape.headGroups) + "-pf" +
                    std::to_string(shape.ffnParts),
                error);
}

std::optional<GeneratedGraph>
doppler::placement::generateRandomLayered(const RandomLayeredShape &shape,
                                          const CostRates &rates,
                                          std::string *error) {
  if (!checkPositive(shape.numNodes, "node count", error) ||
      !checkPositive(shape.minWidth, "minimum width", error) ||
      !checkPositive(shape.maxInDegree, "maximum in-degree", error))
    return std::nullopt;
  if (shape.maxWidth < shape.minWidth) {
    setError(error, "maximum width is below the minimum width");
    return std::nullopt;
  }
  Random random(shape.seed);
  GraphBuilder builder;
  auto ns = [](double seconds) { return std::max(1.0, std::round(seconds * 1e9)); };
  std::vector<std::vector<NodeId>> layers;
  while (builder.numNodes() < shape.numNodes) {
    int32_t width = static_cast<int32_t>(
        random.between(shape.minWidth, shape.maxWidth));
    width = std::min(width, shape.numNodes - builder.numNodes());
    std::vector<NodeId> layer;
    for (int32_t i = 0; i < width; ++i) {
      // A matmul-like (compute-bound) or elementwise (memory-bound) op on
      // a tile of 1k..8k square elements.
      double side = std::round(random.logUniform(1024, 8192));
      double bytes = side * side * rates.elementBytes;
      bool matmulLike = random.uniform() < 0.4;
      double seconds =
          matmulLike ? 2 * side * side * side / rates.flopsPerSecond
                     : 3 * bytes / rates.memoryBytesPerSecond;
      NodeId v = builder.addNode(
          ns(seconds + rates.launchSeconds),
          ns(bytes / rates.linkBytesPerSecond + rates.linkLatencySeconds),
          "einsummable");
      builder.setOutputBytes(v, bytes);
      // Predecessors from the previous two layers (the first layer has
      // none; later ones always have at least one, keeping one component
      // per layer chain).
      if (!layers.empty()) {
        std::vector<NodeId> pool = layers.back();
        if (layers.size() >= 2)
          pool.insert(pool.end(), layers[layers.size() - 2].begin(),
                      layers[layers.size() - 2].end());
        int32_t degree = static_cast<int32_t>(random.between(
            1, std::min<int64_t>(shape.maxInDegree, pool.size())));
        for (int32_t d = 0; d < degree; ++d)
          builder.addEdge(pool[random.below(static_cast<uint32_t>(
                              d == 0 ? layers.back().size() : pool.size()))],
                          v);
      }
      layer.push_back(v);
    }
    layers.push_back(std::move(layer));
  }
  std::optional<Graph> graph = builder.build(error);
  if (!graph)
    return std::nullopt;
  return GeneratedGraph{"random-layered-n" + std::to_string(shape.numNodes) +
                            "-s" + std::to_string(shape.seed),
                        std::move(*graph)};
}

std::vector<GeneratedGraph>
doppler::placement::generateTrainingSet(const TrainingSetOptions &options) {
  std::vector<GeneratedGraph> graphs;
  if ((options.families & kAllFamilies) == 0)
    return graphs;
  Random random(deriveSeed(options.seed, 0x7261696e));
  auto pick = [&](std::initializer_list<int64_t> values) {
    return *(values.begin() + random.below(static_cast<uint32_t>(values.size())));
  };
  int64_t attempts = 0;
  while (static_cast<int32_t>(graphs.size()) < options.count &&
         attempts < 100000 + 100ll * options.count) {
    ++attempts;
    CostRates rates;
    rates.flopsPerSecond = random.logUniform(250e12, 700e12);
    rates.memoryBytesPerSecond = random.logUniform(1.5e12, 3.3e12);
    rates.linkBytesPerSecond = random.logUniform(
        options.minLinkBytesPerSecond, options.maxLinkBytesPerSecond);
    std::optional<GeneratedGraph> generated;
    const uint32_t draw = random.below(5);
    static constexpr uint32_t kFamilyOfDraw[5] = {
        kChainMatmulFamily, kFeedForwardFamily, kTransformerFamily,
        kTransformerFamily, kRandomLayeredFamily};
    if (!(options.families & kFamilyOfDraw[draw]))
      continue;
    switch (draw) {
    case 0: {
      ChainMatmulShape s;
      s.numMatrices = static_cast<int32_t>(random.between(3, 7));
      s.size = pick({2048, 4096, 8192, 16384});
      s.partitions = static_cast<int32_t>(pick({2, 2, 3, 4}));
      generated = generateChainMatmul(s, rates);
      break;
    }
    case 1: {
      FeedForwardShape s;
      s.batch = pick({1024, 4096, 16384});
      int32_t layers = static_cast<int32_t>(random.between(2, 4));
      s.widths = {pick({1024, 4096, 8192})};
      for (int32_t i = 0; i < layers; ++i)
        s.widths.push_back(pick({1024, 4096, 8192, 16384}));
      s.batchPartitions = static_cast<int32_t>(pick({1, 2, 4}));
      s.featurePartitions = static_cast<int32_t>(pick({2, 2, 4}));
      generated = generateFeedForward(s, rates);
      break;
    }
    case 2:
    case 3: {
      TransformerShape s;
      s.sequence = pick({1024, 2048, 4096, 8192});
      s.model = pick({1024, 2048, 4096});
      s.ffn = s.model * 8 / 3 / 256 * 256;
      s.layers = static_cast<int32_t>(pick({1, 1, 2}));
      s.sequenceParts = static_cast<int32_t>(pick({1, 2, 2, 4}));
      s.headGroups = static_cast<int32_t>(pick({1, 2, 4}));
      s.ffnParts = static_cast<int32_t>(pick({1, 2, 4}));
      generated = generateTransformer(s, rates);
      break;
    }
    default: {
      RandomLayeredShape s;
      s.numNodes = static_cast<int32_t>(
          random.between(options.minNodes, std::max(options.minNodes,
                                                    options.maxNodes)));
      s.minWidth = static_cast<int32_t>(random.between(1, 4));
      s.maxWidth = s.minWidth + static_cast<int32_t>(random.between(2, 12));
      s.maxInDegree = static_cast<int32_t>(random.between(1, 4));
      s.seed = random.next();
      generated = generateRandomLayered(s, rates);
      break;
    }
    }
    if (!generated || generated->graph.numNodes() < options.minNodes ||
        generated->graph.numNodes() > options.maxNodes)
      continue;
    generated->name =
        "g" + std::to_string(graphs.size()) + "-" + generated->name;
    graphs.push_back(std::move(*generated));
  }
  return graphs;
}

std::optional<uint32_t>
doppler::placement::parseGraphFamilies(const std::string &text,
                                       std::string *error) {
  static constexpr std::pair<const char *, uint32_t> kNames[] = {
      {"chain", kChainMatmulFamily},
      {"ffnn", kFeedForwardFamily},
      {"transformer", kTransformerFamily},
      {"random", kRandomLayeredFamily},
      {"all", kAllFamilies}};
  uint32_t families = 0;
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find(',', begin);
    if (end == std::string::npos)
      end = text.size();
    const std::string name = text.substr(begin, end - begin);
    bool known = false;
    for (const auto &[candidate, bits] : kNames)
      if (name == candidate) {
        families |= bits;
        known = true;
      }
    if (!known) {
      if (error)
        *error = "unknown graph family '" + name +
                 "' (valid: chain, ffnn, transformer, random, all)";
      return std::nullopt;
    }
    begin = end + 1;
  }
  return families;
}

std::string doppler::placement::formatReferenceGraph(const Graph &graph) {
  std::ostringstream out;
  auto integer = [](double value) {
    char buffer[32];
    std::snprintf(buffer, sizeof(buffer), "%.0f", std::round(value));
    return std::string(buffer);
  };
  out << graph.numNodes() << "\n\n";
  for (int32_t e = 0; e < graph.numEdges(); ++e)
    out << (e ? ", " : "") << graph.edgeSource(e);
  out << "\n";
  for (int32_t e = 0; e < graph.numEdges(); ++e)
    out << (e ? ", " : "") << graph.edgeTarget(e);
  out << "\n";
  for (NodeId v = 0; v < graph.numNodes(); ++v) {
    out << integer(graph.computeCost(v)) << "," << integer(graph.transferCost(v));
    if (!graph.opType(v).empty())
      out << "," << graph.opType(v);
    out << "\n";
  }
  return out.str();
}

bool doppler::placement::writeReferenceGraph(const Graph &graph,
                                             const std::string &path,
                                             std::string *error) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) {
    setError(error, "cannot write '" + path + "'");
    return false;
  }
  file << formatReferenceGraph(graph);
  file.flush();
  if (!file) {
    setError(error, "error while writing '" + path + "'");
    return false;
  }
  return true;
}
