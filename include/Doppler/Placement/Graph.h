//===- Graph.h - Cost-annotated dataflow DAG for placement ------*- C++ -*-===//
//
// The graph every placement component works on: a compact DAG in CSR form
// with a compute cost c(v) and an output transfer cost m(v) per node and a
// cost per edge (by default its producer's m). MLIR-free. Errors never throw
// across this API: builders return std::nullopt and fill an error string.
// See shared/METHOD.md sections 1 and 8.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_PLACEMENT_GRAPH_H
#define DOPPLER_PLACEMENT_GRAPH_H

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace doppler::placement {

using NodeId = int32_t;
using DeviceId = int32_t;

/// A read-only view of a contiguous range (C++17 stand-in for std::span).
template <typename T> class ArrayView {
public:
  ArrayView() = default;
  ArrayView(const T *data, size_t size) : data_(data), size_(size) {}
  ArrayView(const std::vector<T> &v) : data_(v.data()), size_(v.size()) {}
  const T *begin() const { return data_; }
  const T *end() const { return data_ + size_; }
  const T *data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const T &operator[](size_t i) const { return data_[i]; }

private:
  const T *data_ = nullptr;
  size_t size_ = 0;
};

/// Immutable DAG. Node ids are 0..numNodes()-1. Edges are distinct
/// (repeated (u, v) pairs are merged when building, METHOD section 1) and
/// numbered 0..numEdges()-1 in *edge order*: source id ascending, and for
/// one source its destinations in order of first appearance. The simulator's
/// tie-breaking depends on that order.
class Graph {
public:
  Graph() = default;

  int32_t numNodes() const { return static_cast<int32_t>(compute_.size()); }
  int32_t numEdges() const { return static_cast<int32_t>(edgeDst_.size()); }

  double computeCost(NodeId v) const { return compute_[v]; }
  double transferCost(NodeId v) const { return transfer_[v]; }
  const std::vector<double> &computeCosts() const { return compute_; }
  const std::vector<double> &transferCosts() const { return transfer_; }
  /// Optional op-type label per node ("einsummable", ...; may be empty).
  const std::string &opType(NodeId v) const { return opType_[v]; }

  /// Outgoing edges of `v` are the edge ids succBegin(v)..succEnd(v)-1.
  int32_t succBegin(NodeId v) const { return succOffset_[v]; }
  int32_t succEnd(NodeId v) const { return succOffset_[v + 1]; }
  NodeId edgeSource(int32_t e) const { return edgeSrc_[e]; }
  NodeId edgeTarget(int32_t e) const { return edgeDst_[e]; }
  /// Cost of moving the producer's output along edge `e` when its ends are
  /// on different devices.
  double edgeCost(int32_t e) const { return edgeCost_[e]; }
  /// All edge targets and costs, indexed by edge id.
  const std::vector<NodeId> &edgeTargets() const { return edgeDst_; }
  const std::vector<double> &edgeCosts() const { return edgeCost_; }

  ArrayView<NodeId> successors(NodeId v) const {
    return {edgeDst_.data() + succOffset_[v],
            static_cast<size_t>(succOffset_[v + 1] - succOffset_[v])};
  }
  /// Distinct predecessors of `v`, in ascending id order.
  ArrayView<NodeId> predecessors(NodeId v) const {
    return {predNode_.data() + predOffset_[v],
            static_cast<size_t>(predOffset_[v + 1] - predOffset_[v])};
  }
  /// Edge ids matching predecessors(v) one to one.
  ArrayView<int32_t> predecessorEdges(NodeId v) const {
    return {predEdge_.data() + predOffset_[v],
            static_cast<size_t>(predOffset_[v + 1] - predOffset_[v])};
  }
  int32_t inDegree(NodeId v) const {
    return predOffset_[v + 1] - predOffset_[v];
  }
  int32_t outDegree(NodeId v) const {
    return succOffset_[v + 1] - succOffset_[v];
  }

  /// A topological order (Kahn's algorithm, smallest ready id first).
  const std::vector<NodeId> &topologicalOrder() const { return topo_; }

  double totalCompute() const;

  /// Size in bytes of each node's output, for memory and bandwidth models.
  /// Optional: empty unless the builder was given sizes (reference graphs
  /// carry none).
  bool hasOutputBytes() const { return !outputBytes_.empty(); }
  double outputBytes(NodeId v) const { return outputBytes_[v]; }
  const std::vector<double> &outputBytesList() const { return outputBytes_; }

private:
  friend class GraphBuilder;
  std::vector<double> compute_, transfer_;
  std::vector<std::string> opType_;
  std::vector<int32_t> succOffset_; // size numNodes()+1
  std::vector<NodeId> edgeSrc_, edgeDst_;
  std::vector<double> edgeCost_;
  std::vector<int32_t> predOffset_; // size numNodes()+1
  std::vector<NodeId> predNode_;
  std::vector<int32_t> predEdge_;
  std::vector<NodeId> topo_;
  std::vector<double> outputBytes_; // empty, or one per node
};

/// Collects nodes and edges, then validates and freezes them into a Graph.
class GraphBuilder {
public:
  /// Adds a node; returns its id (ids are consecutive from 0).
  NodeId addNode(double computeCost, double transferCost,
                 std::string opType = {});
  /// Adds an edge u -> v. `cost` defaults to transferCost(u). A repeated
  /// (u, v) pair is kept once (the first cost wins).
  void addEdge(NodeId u, NodeId v, std::optional<double> cost = std::nullopt);
  /// Sets the output size of node `v` in bytes. Once any node has a size,
  /// the graph has output bytes and nodes without one count 0.
  void setOutputBytes(NodeId v, double bytes);

  int32_t numNodes() const { return static_cast<int32_t>(compute_.size()); }

  /// Validates and builds. Errors (one line, no trailing period): an edge
  /// naming a node id that does not exist ("edge 3: target 99 is not a node
  /// (graph has 76 nodes)"), a negative or non-finite cost ("node 5: compute
  /// cost -1 is negative"), a self loop, a cycle ("cycle: 4 -> 7 -> 9 -> 4").
  std::optional<Graph> build(std::string *error = nullptr) const;

private:
  std::vector<double> compute_, transfer_;
  std::vector<std::string> opType_;
  struct PendingEdge {
    NodeId src, dst;
    std::optional<double> cost;
  };
  std::vector<PendingEdge> edges_;
  // Sparse until build(): (node, bytes), last setting wins.
  std::vector<std::pair<NodeId, double>> outputBytes_;
};

/// Reads the reference text format (METHOD section 8). Errors name the file
/// line: "graph.txt:3: expected 80 edge destinations, found 79".
std::optional<Graph> readReferenceGraph(const std::string &path,
                                        std::string *error = nullptr);
/// The same, from text already in memory; `name` is used in messages.
std::optional<Graph> parseReferenceGraph(const std::string &text,
                                         const std::string &name,
                                         std::string *error = nullptr);

} // namespace doppler::placement

#endif // DOPPLER_PLACEMENT_GRAPH_H
