//===- GraphGenerator.h - Synthetic decomposed dataflow graphs --*- C++ -*-===//
//
// Seeded generators of training and benchmark graphs with the structure of
// the reference workloads (shared/data/graphs): tensors split into blocks,
// one node per block operation, the partial products of a split contraction
// summed by an aggregation node, and "formation" nodes where a tensor is
// re-split. Costs are times on an H100-like device: FLOPs over a compute
// rate or bytes over a memory rate (whichever bounds the operation) plus a
// launch overhead, and the transfer cost of a node is its output's bytes
// over a link rate plus a latency. Times are whole nanoseconds, so that a
// generated graph survives the reference text format unchanged.
//
// Families: chains of matrix multiplications, feed-forward networks,
// transformer blocks and stacks of layers (RMS norm, attention split into
// head groups, gated MLP), and random layered DAGs.
//
// MLIR-free and LibTorch-free; nothing throws. Same seed => same graphs.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_PLACEMENT_LEARNING_GRAPHGENERATOR_H
#define DOPPLER_PLACEMENT_LEARNING_GRAPHGENERATOR_H

#include "Doppler/Placement/Graph.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace doppler::placement {

/// The device and link a generated graph's costs are computed for.
struct CostRates {
  double flopsPerSecond = 400e12;       ///< dense matmul throughput
  double memoryBytesPerSecond = 2.5e12; ///< HBM bandwidth
  double linkBytesPerSecond = 150e9;    ///< device-to-device bandwidth
  double launchSeconds = 4e-6;          ///< per-operation overhead
  double linkLatencySeconds = 5e-6;     ///< per-transfer overhead
  int32_t elementBytes = 2;             ///< bf16
};

/// A generated graph and a name that says what it is
/// ("transformer-s2048-d2048-L1-ps2-ph4-pf2").
struct GeneratedGraph {
  std::string name;
  Graph graph;
};

struct ChainMatmulShape {
  int32_t numMatrices = 4; ///< >= 2 (numMatrices - 1 products)
  int64_t size = 4096;     ///< square matrices of size x size
  int32_t partitions = 2;  ///< blocks per dimension
};

struct FeedForwardShape {
  int64_t batch = 4096;
  std::vector<int64_t> widths = {4096, 16384, 4096}; ///< input, hidden..., out
  int32_t batchPartitions = 2;
  int32_t featurePartitions = 2;
};

struct TransformerShape {
  int64_t sequence = 2048;
  int64_t model = 2048;      ///< model width d
  int64_t ffn = 5504;        ///< gated-MLP hidden width
  int32_t layers = 1;        ///< stacked blocks
  int32_t sequenceParts = 2; ///< blocks along the sequence
  int32_t headGroups = 4;    ///< attention heads split into this many groups
  int32_t ffnParts = 2;      ///< blocks along the MLP hidden width
};

struct RandomLayeredShape {
  int32_t numNodes = 200;
  int32_t minWidth = 2, maxWidth = 12;
  /// Most predecessors a node draws from the previous two layers.
  int32_t maxInDegree = 3;
  uint64_t seed = 0;
};

std::optional<GeneratedGraph> generateChainMatmul(const ChainMatmulShape &shape,
                                                  const CostRates &rates,
                                                  std::string *error = nullptr);
std::optional<GeneratedGraph>
generateFeedForward(const FeedForwardShape &shape, const CostRates &rates,
                    std::string *error = nullptr);
std::optional<GeneratedGraph>
generateTransformer(const TransformerShape &shape, const CostRates &rates,
                    std::string *error = nullptr);
std::optional<GeneratedGraph>
generateRandomLayered(const RandomLayeredShape &shape, const CostRates &rates,
                      std::string *error = nullptr);

/// The generator's graph families, as bits of TrainingSetOptions::families.
enum GraphFamily : uint32_t {
  kChainMatmulFamily = 1u << 0,
  kFeedForwardFamily = 1u << 1,
  kTransformerFamily = 1u << 2,
  kRandomLayeredFamily = 1u << 3,
  kAllFamilies = (1u << 4) - 1,
};

/// Parses a comma-separated list of family names (chain, ffnn, transformer,
/// random, or all) into GraphFamily bits; nullopt (and `error`) on an
/// unknown name or an empty list.
std::optional<uint32_t> parseGraphFamilies(const std::string &text,
                                           std::string *error = nullptr);

/// A mixed training (or held-out) set.
struct TrainingSetOptions {
  int32_t count = 100;
  uint64_t seed = 0;
  /// Graphs outside [minNodes, maxNodes] are redrawn.
  int32_t minNodes = 40;
  int32_t maxNodes = 320;
  /// Link rates are drawn log-uniformly from this range, so that transfers
  /// range from cheap (NVLink-class) to dominant (PCIe-class).
  double minLinkBytesPerSecond = 20e9;
  double maxLinkBytesPerSecond = 450e9;
  /// The families drawn from (GraphFamily bits). The draws are those of
  /// the full mix with the other families' graphs skipped, so a subset of
  /// families keeps each graph's shape distribution.
  uint32_t families = kAllFamilies;
};

/// `options.count` graphs of the chosen families, sizes and split counts,
/// seeded. Fewer when `options.families` is 0.
std::vector<GeneratedGraph>
generateTrainingSet(const TrainingSetOptions &options);

/// The reference text format of `graph` (METHOD section 8), with no input
/// nodes. Costs are written as integers (rounded to nearest).
std::string formatReferenceGraph(const Graph &graph);
/// Writes formatReferenceGraph(graph) to `path`.
bool writeReferenceGraph(const Graph &graph, const std::string &path,
                         std::string *error = nullptr);

} // namespace doppler::placement

#endif // DOPPLER_PLACEMENT_LEARNING_GRAPHGENERATOR_H
