//===- Analysis.h - Static analyses of a placement graph --------*- C++ -*-===//
//
// Longest-path levels (b-level, t-level) with the path each one follows, the
// critical path, the makespan lower bound, and the node and edge features
// that the learned policies consume (shared/METHOD.md sections 3 and 7).
// Everything here depends on the graph alone, not on a placement, so it is
// computed once per graph. MLIR-free; nothing throws.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_PLACEMENT_ANALYSIS_H
#define DOPPLER_PLACEMENT_ANALYSIS_H

#include "Doppler/Placement/Graph.h"

#include <cstdint>
#include <vector>

namespace doppler::placement {

/// One longest-path level per node, and the path that realises it.
///
/// Path costs count `c(w) + m(w)` for every node w on the path except the
/// last one, which counts `c(w)` only (METHOD section 3). Among equally long
/// continuations the first one wins: for b-levels the first successor in
/// edge order (as the reference does), for t-levels the predecessor with the
/// smallest id.
struct Levels {
  /// Level of each node.
  std::vector<double> value;
  /// The node after v on v's path, or -1 where the path ends.
  std::vector<NodeId> pathNext;

  /// The whole path of `v`, starting at v.
  std::vector<NodeId> path(NodeId v) const;
  /// Appends the path of `v` to `out` (no allocation once `out` has room).
  void appendPath(NodeId v, std::vector<NodeId> &out) const;
};

/// b-level: longest path from v down to any sink; the path runs v -> ... ->
/// sink.
Levels computeBottomLevels(const Graph &graph);

/// t-level: the same on the reversed graph; the path runs v -> ... -> source
/// backwards along edges. Note that v itself counts `c(v) + m(v)` unless it
/// is a source (then `c(v)`), exactly as in the reference, so a t-level is
/// not the classic "earliest start" but includes v.
Levels computeTopLevels(const Graph &graph);

/// Length of the longest path counting compute costs only.
double computeOnlyCriticalPathLength(const Graph &graph);

/// The critical path: the b-level path of the source with the largest
/// b-level (smallest id among equals); empty for an empty graph.
std::vector<NodeId> criticalPath(const Graph &graph);
/// Its length: the largest b-level (0 for an empty graph).
double criticalPathLength(const Graph &graph);

/// Lower bound on the makespan of any placement on `numDevices` devices
/// (METHOD section 7): max(compute-only critical path, total compute / D).
/// `numDevices` must be at least 1.
double makespanLowerBound(const Graph &graph, int32_t numDevices);

/// A dense row-major matrix of features.
struct FeatureMatrix {
  int32_t rows = 0;
  int32_t cols = 0;
  std::vector<double> values; // rows * cols

  double &at(int32_t row, int32_t col) { return values[row * cols + col]; }
  double at(int32_t row, int32_t col) const {
    return values[row * cols + col];
  }
};

/// Node feature columns, in this order.
enum NodeFeature : int32_t {
  kComputeCostFeature = 0,
  kBottomLevelFeature = 1,
  kTopLevelFeature = 2,
  kIncomingTransferFeature = 3, ///< sum of incoming edge costs
  kOutgoingTransferFeature = 4, ///< sum of outgoing edge costs
  kNumNodeFeatures = 5
};

/// The 5 raw (unstandardised) node features; one row per node. Edge sums
/// count each distinct edge once (METHOD section 1; the reference's DGL
/// graph would count a repeated edge twice).
FeatureMatrix computeNodeFeatures(const Graph &graph, const Levels &bottom,
                                  const Levels &top);
/// The same, computing the levels itself.
FeatureMatrix computeNodeFeatures(const Graph &graph);

/// The edge feature: one row per edge id, one column, the edge's transfer
/// cost.
FeatureMatrix computeEdgeFeatures(const Graph &graph);

/// Standardises every column in place: (x - mean) / (std + epsilon), with
/// the population standard deviation. A constant column becomes all zeros.
void standardizeColumns(FeatureMatrix &matrix, double epsilon = 1e-6);
/// The same on a raw row-major buffer.
void standardizeColumns(double *values, int32_t rows, int32_t cols,
                        double epsilon = 1e-6);

/// Everything above for one graph, computed together.
struct GraphAnalysis {
  Levels bottom;
  Levels top;
  double criticalPathLength = 0;
  double computeOnlyCriticalPathLength = 0;
  double totalCompute = 0;
  /// Standardised node features (rows: nodes) and edge features (rows:
  /// edges), ready for a network.
  FeatureMatrix nodeFeatures;
  FeatureMatrix edgeFeatures;

  double lowerBound(int32_t numDevices) const;
};

GraphAnalysis analyzeGraph(const Graph &graph);

} // namespace doppler::placement

#endif // DOPPLER_PLACEMENT_ANALYSIS_H
