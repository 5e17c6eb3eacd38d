//===- Analysis.cpp - Levels, bounds and features of a graph -------------===//

#include "Doppler/Placement/Analysis.h"

#include <algorithm>
#include <cmath>

namespace doppler::placement {

std::vector<NodeId> Levels::path(NodeId v) const {
  std::vector<NodeId> nodes;
  appendPath(v, nodes);
  return nodes;
}

void Levels::appendPath(NodeId v, std::vector<NodeId> &out) const {
  for (NodeId node = v; node >= 0; node = pathNext[node])
    out.push_back(node);
}

namespace {

/// Levels along `order` (every node after the `neighbours` it reads): a
/// node's value is its compute cost, plus, when it has neighbours, its
/// transfer cost and the largest neighbour's value (the first of equals),
/// which pathNext records.
template <typename Order, typename Neighbours>
Levels longestLevels(const Graph &graph, const Order &order,
                     Neighbours neighbours) {
  Levels levels;
  levels.value.assign(graph.numNodes(), 0.0);
  levels.pathNext.assign(graph.numNodes(), -1);
  for (NodeId v : order) {
    NodeId best = -1;
    double bestValue = 0;
    for (NodeId w : neighbours(v)) {
      // Strictly greater: the first of equal neighbours wins.
      if (best < 0 || levels.value[w] > bestValue) {
        best = w;
        bestValue = levels.value[w];
      }
    }
    levels.pathNext[v] = best;
    levels.value[v] = best < 0 ? graph.computeCost(v)
                               : graph.computeCost(v) +
                                     graph.transferCost(v) + bestValue;
  }
  return levels;
}

} // namespace

Levels computeBottomLevels(const Graph &graph) {
  // Successors come later in a topological order: walk it backwards.
  const std::vector<NodeId> &order = graph.topologicalOrder();
  return longestLevels(graph,
                       std::vector<NodeId>(order.rbegin(), order.rend()),
                       [&](NodeId v) {
                         return graph.successors(v);
                       });
}

Levels computeTopLevels(const Graph &graph) {
  return longestLevels(graph, graph.topologicalOrder(),
                       [&](NodeId v) {
                         return graph.predecessors(v);
                       });
}

double computeOnlyCriticalPathLength(const Graph &graph) {
  std::vector<double> longest(graph.numNodes(), 0.0);
  double overall = 0;
  const std::vector<NodeId> &order = graph.topologicalOrder();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    NodeId v = *it;
    double tail = 0;
    for (NodeId w : graph.successors(v))
      tail = std::max(tail, longest[w]);
    longest[v] = graph.computeCost(v) + tail;
    overall = std::max(overall, longest[v]);
  }
  return overall;
}

namespace {
/// The source with the largest b-level (smallest id among equals), or -1.
NodeId criticalSource(const Graph &graph, const Levels &bottom) {
  NodeId best = -1;
  for (NodeId v = 0; v < graph.numNodes(); ++v) {
    if (graph.inDegree(v) != 0)
      continue;
    if (best < 0 || bottom.value[v] > bottom.value[best])
      best = v;
  }
  return best;
}
} // namespace

std::vector<NodeId> criticalPath(const Graph &graph) {
  Levels bottom = computeBottomLevels(graph);
  NodeId source = criticalSource(graph, bottom);
  return source < 0 ? std::vector<NodeId>{} : bottom.path(source);
}

double criticalPathLength(const Graph &graph) {
  Levels bottom = computeBottomLevels(graph);
  NodeId source = criticalSource(graph, bottom);
  return source < 0 ? 0.0 : bottom.value[source];
}

double makespanLowerBound(const Graph &graph, int32_t numDevices) {
  double total = 0;
  for (double cost : graph.computeCosts())
    total += cost;
  return std::max(computeOnlyCriticalPathLength(graph),
                  total / std::max<int32_t>(numDevices, 1));
}

FeatureMatrix computeNodeFeatures(const Graph &graph, const Levels &bottom,
                                  const Levels &top) {
  FeatureMatrix features;
  features.rows = graph.numNodes();
  features.cols = kNumNodeFeatures;
  features.values.assign(static_cast<size_t>(features.rows) * features.cols,
                         0.0);
  for (NodeId v = 0; v < graph.numNodes(); ++v) {
    double incoming = 0;
    for (int32_t e : graph.predecessorEdges(v))
      incoming += graph.edgeCost(e);
    double outgoing = 0;
    for (int32_t e = graph.succBegin(v); e < graph.succEnd(v); ++e)
      outgoing += graph.edgeCost(e);
    features.at(v, kComputeCostFeature) = graph.computeCost(v);
    features.at(v, kBottomLevelFeature) = bottom.value[v];
    features.at(v, kTopLevelFeature) = top.value[v];
    features.at(v, kIncomingTransferFeature) = incoming;
    features.at(v, kOutgoingTransferFeature) = outgoing;
  }
  return features;
}

FeatureMatrix computeNodeFeatures(const Graph &graph) {
  return computeNodeFeatures(graph, computeBottomLevels(graph),
                             computeTopLevels(graph));
}

FeatureMatrix computeEdgeFeatures(const Graph &graph) {
  FeatureMatrix features;
  features.rows = graph.numEdges();
  features.cols = 1;
  features.values.resize(graph.numEdges());
  for (int32_t e = 0; e < graph.numEdges(); ++e)
    features.values[e] = graph.edgeCost(e);
  return features;
}

void standardizeColumns(double *values, int32_t rows, int32_t cols,
                        double epsilon) {
  if (rows <= 0)
    return;
  for (int32_t col = 0; col < cols; ++col) {
    double sum = 0;
    for (int32_t row = 0; row < rows; ++row)
      sum += values[row * cols + col];
    const double mean = sum / rows;
    // Two passes: costs span many orders of magnitude (1e4 .. 1e14), where
    // E[x^2] - E[x]^2 would cancel badly.
    double squares = 0;
    for (int32_t row = 0; row < rows; ++row) {
      double centred = values[row * cols + col] - mean;
      squares += centred * centred;
    }
    const double scale = 1.0 / (std::sqrt(squares / rows) + epsilon);
    for (int32_t row = 0; row < rows; ++row) {
      double &x = values[row * cols + col];
      x = (x - mean) * scale;
    }
  }
}

void standardizeColumns(FeatureMatrix &matrix, double epsilon) {
  standardizeColumns(matrix.values.data(), matrix.rows, matrix.cols, epsilon);
}

double GraphAnalysis::lowerBound(int32_t numDevices) const {
  return std::max(computeOnlyCriticalPathLength,
                  totalCompute / std::max<int32_t>(numDevices, 1));
}

GraphAnalysis analyzeGraph(const Graph &graph) {
  GraphAnalysis analysis;
  analysis.bottom = computeBottomLevels(graph);
  analysis.top = computeTopLevels(graph);
  NodeId source = criticalSource(graph, analysis.bottom);
  analysis.criticalPathLength =
      source < 0 ? 0.0 : analysis.bottom.value[source];
  analysis.computeOnlyCriticalPathLength = computeOnlyCriticalPathLength(graph);
  for (double cost : graph.computeCosts())
    analysis.totalCompute += cost;
  analysis.nodeFeatures =
      computeNodeFeatures(graph, analysis.bottom, analysis.top);
  standardizeColumns(analysis.nodeFeatures);
  analysis.edgeFeatures = computeEdgeFeatures(graph);
  standardizeColumns(analysis.edgeFeatures);
  return analysis;
}

} // namespace doppler::placement
