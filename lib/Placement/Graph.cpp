//===- Graph.cpp - Cost-annotated dataflow DAG ----------------------------===//
//
// Validation and freezing of a GraphBuilder into the CSR Graph.
//
//===----------------------------------------------------------------------===//

#include "Doppler/Placement/Graph.h"

#include "Doppler/Support/ErrorString.h"
#include "Doppler/Support/Limits.h"
#include "Doppler/Support/NumberFormat.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <numeric>
#include <queue>
#include <unordered_set>

using namespace doppler::placement;
using doppler::formatShortest;
using doppler::setError;

namespace {

/// Empty when `value` is a valid cost; otherwise why not ("-1 is negative").
std::string checkCost(double value) {
  if (!std::isfinite(value))
    return formatShortest(value) + " is not finite";
  if (value < 0)
    return formatShortest(value) + " is negative";
  return {};
}

/// Finds a cycle among `blocked` nodes (those Kahn's algorithm could not
/// order) and renders it as "a -> b -> c -> a", starting at its smallest id.
std::string describeCycle(int32_t numNodes,
                          const std::vector<std::vector<NodeId>> &preds,
                          const std::vector<int32_t> &remainingInDegree) {
  auto isBlocked = [&](NodeId v) { return remainingInDegree[v] > 0; };
  NodeId start = 0;
  while (start < numNodes && !isBlocked(start))
    ++start;
  // Every blocked node has a blocked predecessor, so walking backwards along
  // the smallest blocked predecessor must revisit a node: that closes a
  // cycle.
  std::vector<int32_t> positionOnWalk(numNodes, -1);
  std::vector<NodeId> walk;
  NodeId current = start;
  while (positionOnWalk[current] < 0) {
    positionOnWalk[current] = static_cast<int32_t>(walk.size());
    walk.push_back(current);
    NodeId next = -1;
    for (NodeId p : preds[current])
      if (isBlocked(p) && (next < 0 || p < next))
        next = p;
    current = next;
  }
  // walk[i+1] -> walk[i] are edges; reverse the loop to read it forwards.
  std::vector<NodeId> cycle(walk.begin() + positionOnWalk[current], walk.end());
  std::reverse(cycle.begin(), cycle.end());
  std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()),
              cycle.end());
  std::string text = "cycle: ";
  for (NodeId v : cycle)
    text += std::to_string(v) + " -> ";
  return text + std::to_string(cycle.front());
}

/// Empty when every node's compute and transfer costs are valid; otherwise
/// the first problem ("node 5: compute cost -1 is negative").
std::string checkNodeCosts(const std::vector<double> &compute,
                           const std::vector<double> &transfer) {
  for (NodeId v = 0; v < static_cast<NodeId>(compute.size()); ++v) {
    if (std::string why = checkCost(compute[v]); !why.empty())
      return "node " + std::to_string(v) + ": compute cost " + why;
    if (std::string why = checkCost(transfer[v]); !why.empty())
      return "node " + std::to_string(v) + ": transfer cost " + why;
  }
  return {};
}

/// Spreads the (node, bytes) settings into one entry per node (0 where
/// unset, the last setting wins); empty, or why a setting is invalid.
std::string
denseOutputBytes(int32_t numNodes,
                 const std::vector<std::pair<NodeId, double>> &sparse,
                 const std::string &nodeCount, std::vector<double> &dense) {
  dense.assign(numNodes, 0.0);
  for (auto [v, bytes] : sparse) {
    if (v < 0 || v >= numNodes)
      return "output bytes given for " + std::to_string(v) +
             ", which is not a node" + nodeCount;
    if (std::string why = checkCost(bytes); !why.empty())
      return "node " + std::to_string(v) + ": output bytes " + why;
    dense[v] = bytes;
  }
  return {};
}

/// Empty when edge `index` (src -> dst, optional cost) joins two distinct
/// nodes with a valid cost; otherwise why not ("edge 3: target 99 is not a
/// node (graph has 76 nodes)").
std::string checkEdge(size_t index, NodeId src, NodeId dst,
                      const std::optional<double> &cost, int32_t numNodes,
                      const std::string &nodeCount) {
  const std::string where = "edge " + std::to_string(index) + ": ";
  if (src < 0 || src >= numNodes)
    return where + "source " + std::to_string(src) + " is not a node" +
           nodeCount;
  if (dst < 0 || dst >= numNodes)
    return where + "target " + std::to_string(dst) + " is not a node" +
           nodeCount;
  if (src == dst)
    return where + "self loop on node " + std::to_string(src);
  if (cost)
    if (std::string why = checkCost(*cost); !why.empty())
      return where + "cost " + why;
  return {};
}

/// Kahn's algorithm, smallest ready id first, so the order is canonical.
/// Leaves each node's count of unordered predecessors in
/// `remainingInDegree` (all 0 unless there is a cycle).
std::vector<NodeId> topologicalOrder(const Graph &graph,
                                     std::vector<int32_t> &remainingInDegree) {
  const int32_t numNodes = graph.numNodes();
  remainingInDegree.assign(numNodes, 0);
  std::priority_queue<NodeId, std::vector<NodeId>, std::greater<NodeId>> ready;
  for (NodeId v = 0; v < numNodes; ++v) {
    remainingInDegree[v] = graph.inDegree(v);
    if (remainingInDegree[v] == 0)
      ready.push(v);
  }
  std::vector<NodeId> order;
  order.reserve(numNodes);
  while (!ready.empty()) {
    NodeId u = ready.top();
    ready.pop();
    order.push_back(u);
    for (NodeId w : graph.successors(u))
      if (--remainingInDegree[w] == 0)
        ready.push(w);
  }
  return order;
}

} // namespace

double Graph::totalCompute() const {
  return std::accumulate(compute_.begin(), compute_.end(), 0.0);
}

NodeId GraphBuilder::addNode(double computeCost, double transferCost,
                             std::string opType) {
  compute_.push_back(computeCost);
  transfer_.push_back(transferCost);
  opType_.push_back(std::move(opType));
  return static_cast<NodeId>(compute_.size() - 1);
}

void GraphBuilder::addEdge(NodeId u, NodeId v, std::optional<double> cost) {
  edges_.push_back({u, v, cost});
}

void GraphBuilder::setOutputBytes(NodeId v, double bytes) {
  outputBytes_.emplace_back(v, bytes);
}

std::optional<Graph> GraphBuilder::build(std::string *error) const {
  const int32_t numNodes = this->numNodes();
  const std::string nodeCount =
      " (graph has " + std::to_string(numNodes) + " nodes)";
  if (std::string why = checkNodeCosts(compute_, transfer_); !why.empty()) {
    setError(error, why);
    return std::nullopt;
  }

  Graph graph;
  graph.compute_ = compute_;
  graph.transfer_ = transfer_;
  graph.opType_ = opType_;
  if (!outputBytes_.empty())
    if (std::string why = denseOutputBytes(numNodes, outputBytes_, nodeCount,
                                           graph.outputBytes_);
        !why.empty()) {
      setError(error, why);
      return std::nullopt;
    }

  // Check every edge, drop repeats (first occurrence wins), and bucket the
  // survivors by source so that edge order is source ascending, then order
  // of first appearance.
  std::vector<std::vector<int32_t>> keptBySource(numNodes);
  std::unordered_set<uint64_t> seenPairs;
  seenPairs.reserve(edges_.size() * 2);
  for (size_t i = 0; i < edges_.size(); ++i) {
    const PendingEdge &edge = edges_[i];
    if (std::string why =
            checkEdge(i, edge.src, edge.dst, edge.cost, numNodes, nodeCount);
        !why.empty()) {
      setError(error, why);
      return std::nullopt;
    }
    uint64_t key =
        (static_cast<uint64_t>(static_cast<uint32_t>(edge.src)) << 32) |
        static_cast<uint32_t>(edge.dst);
    if (seenPairs.insert(key).second)
      keptBySource[edge.src].push_back(static_cast<int32_t>(i));
  }

  graph.succOffset_.assign(numNodes + 1, 0);
  std::vector<std::vector<NodeId>> preds(numNodes);
  std::vector<std::vector<int32_t>> predEdges(numNodes);
  for (NodeId u = 0; u < numNodes; ++u) {
    graph.succOffset_[u] = static_cast<int32_t>(graph.edgeDst_.size());
    for (int32_t pending : keptBySource[u]) {
      const PendingEdge &edge = edges_[pending];
      auto id = static_cast<int32_t>(graph.edgeDst_.size());
      graph.edgeSrc_.push_back(u);
      graph.edgeDst_.push_back(edge.dst);
      graph.edgeCost_.push_back(edge.cost ? *edge.cost : transfer_[u]);
      // Sources come in ascending order, so each predecessor list ends up
      // sorted without a sort.
      preds[edge.dst].push_back(u);
      predEdges[edge.dst].push_back(id);
    }
  }
  graph.succOffset_[numNodes] = static_cast<int32_t>(graph.edgeDst_.size());

  graph.predOffset_.assign(numNodes + 1, 0);
  for (NodeId v = 0; v < numNodes; ++v) {
    graph.predOffset_[v] = static_cast<int32_t>(graph.predNode_.size());
    graph.predNode_.insert(graph.predNode_.end(), preds[v].begin(),
                           preds[v].end());
    graph.predEdge_.insert(graph.predEdge_.end(), predEdges[v].begin(),
                           predEdges[v].end());
  }
  graph.predOffset_[numNodes] = static_cast<int32_t>(graph.predNode_.size());

  // Every makespan is at most the sum of all compute and edge costs (one
  // device doing everything, then every transfer in turn), and every
  // feature (levels, edge sums) at most that too; capping the sum keeps
  // them, and the squares that standardising them takes, finite.
  double total = 0;
  for (double c : graph.compute_)
    total += c;
  for (double m : graph.edgeCost_)
    total += m;
  if (!(total <= doppler::kMaxTotalCost)) {
    setError(error,
             "the compute and transfer costs sum to " +
                 (std::isfinite(total) ? formatShortest(total)
                                       : std::string("more than a double holds")) +
                 ", past the limit of " +
                 formatShortest(doppler::kMaxTotalCost) +
                 " (makespans and features would overflow)");
    return std::nullopt;
  }

  std::vector<int32_t> remainingInDegree;
  graph.topo_ = topologicalOrder(graph, remainingInDegree);
  if (static_cast<int32_t>(graph.topo_.size()) != numNodes) {
    setError(error, describeCycle(numNodes, preds, remainingInDegree));
    return std::nullopt;
  }
  return graph;
}
