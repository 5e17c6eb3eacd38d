//===- Horizon.cpp - Bounded-horizon completions for large graphs ---------===//

#include "Horizon.h"

#include <algorithm>
#include <limits>
#include <numeric>

using namespace doppler::placement;
using namespace doppler::placement::learning;

void HorizonLookahead::reset(const Graph &graph, int32_t numDevices,
                             const std::vector<double> &bottom,
                             int32_t horizonNodes) {
  graph_ = &graph;
  bottom_ = &bottom;
  numDevices_ = numDevices;
  horizonNodes_ = std::max(0, horizonNodes);
  totalCompute_ = graph.totalCompute();
  inHorizon_.assign(graph.numNodes(), 0);
  free_.resize(numDevices);
  startOfV_.resize(numDevices);
}

void HorizonLookahead::chooseHorizon(const PlacementEnvironment &env, NodeId v,
                                     ArrayView<NodeId> window) {
  const Graph &graph = *graph_;
  const std::vector<double> &bottom = *bottom_;
  const int32_t D = numDevices_;
  horizon_.clear();
  // The window's other candidates with the largest bottom levels.
  for (NodeId u : window)
    if (u != v)
      horizon_.push_back(u);
  auto byBottom = [&](NodeId a, NodeId b) {
    return bottom[a] > bottom[b] || (bottom[a] == bottom[b] && a < b);
  };
  if (horizon_.size() > static_cast<size_t>(horizonNodes_)) {
    std::partial_sort(horizon_.begin(), horizon_.begin() + horizonNodes_,
                      horizon_.end(), byBottom);
    horizon_.resize(horizonNodes_);
  }
  // The successors v makes ready (every other input placed), as many again.
  size_t fromWindow = horizon_.size();
  for (NodeId w : graph.successors(v)) {
    if (horizon_.size() - fromWindow >= static_cast<size_t>(horizonNodes_))
      break;
    ArrayView<NodeId> inputs = graph.predecessors(w);
    if (std::all_of(inputs.begin(), inputs.end(), [&](NodeId p) {
          return p == v || env.isPlaced(p);
        }) &&
        std::find(horizon_.begin() + fromWindow, horizon_.end(), w) ==
            horizon_.end())
      horizon_.push_back(w);
  }
  // The rule's order: largest bottom level first.
  std::sort(horizon_.begin(), horizon_.end(), byBottom);
  // Input arrival per device, v's own output aside (it depends on v's
  // device: estimate() adds it).
  const size_t H = horizon_.size();
  ready_.assign(H * D, 0.0);
  afterV_.assign(H, 0);
  for (size_t i = 0; i < H; ++i) {
    NodeId u = horizon_[i];
    ArrayView<NodeId> inputs = graph.predecessors(u);
    ArrayView<int32_t> edges = graph.predecessorEdges(u);
    double *ready = &ready_[i * D];
    for (size_t k = 0; k < inputs.size(); ++k) {
      NodeId p = inputs[k];
      if (p == v) {
        afterV_[i] = 1;
        continue;
      }
      const double finish = env.estimatedFinish(p);
      const DeviceId from = env.deviceOf(p);
      for (DeviceId e = 0; e < D; ++e)
        ready[e] = std::max(ready[e],
                            finish + env.transferCost(edges[k], from, e));
    }
  }
}

double HorizonLookahead::estimate(const PlacementEnvironment &env, NodeId v,
                                  DeviceId d, double start) {
  const Graph &graph = *graph_;
  const int32_t D = numDevices_;
  double placedCompute = 0;
  for (DeviceId e = 0; e < D; ++e) {
    free_[e] = env.deviceFreeTime(e);
    placedCompute += env.deviceLoad(e);
  }
  const double finishOfV = start + graph.computeCost(v);
  free_[d] = std::max(free_[d], finishOfV);
  double path = finishOfV + tail(v);
  double horizonCompute = graph.computeCost(v);
  for (size_t i = 0; i < horizon_.size(); ++i) {
    NodeId u = horizon_[i];
    const double *ready = &ready_[i * D];
    // v's output reaches u on e at finishOfV, plus the transfer elsewhere.
    int32_t edgeFromV = -1;
    if (afterV_[i]) {
      ArrayView<NodeId> inputs = graph.predecessors(u);
      ArrayView<int32_t> edges = graph.predecessorEdges(u);
      for (size_t k = 0; k < inputs.size(); ++k)
        if (inputs[k] == v)
          edgeFromV = edges[k];
    }
    double best = std::numeric_limits<double>::infinity();
    DeviceId bestDevice = 0;
    for (DeviceId e = 0; e < D; ++e) {
      double t = std::max(free_[e], ready[e]);
      if (edgeFromV >= 0)
        t = std::max(t, finishOfV + env.transferCost(edgeFromV, d, e));
      if (t < best) {
        best = t;
        bestDevice = e;
      }
    }
    const double finish = best + graph.computeCost(u);
    free_[bestDevice] = finish;
    path = std::max(path, finish + tail(u));
    horizonCompute += graph.computeCost(u);
  }
  double busy = std::accumulate(free_.begin(), free_.end(), 0.0);
  double left = std::max(0.0, totalCompute_ - placedCompute - horizonCompute);
  return std::max(path, (busy + left) / D);
}

double HorizonLookahead::tail(NodeId u) const {
  const Graph &graph = *graph_;
  const std::vector<double> &bottom = *bottom_;
  double longest = 0;
  for (int32_t e = graph.succBegin(u); e < graph.succEnd(u); ++e) {
    NodeId s = graph.edgeTarget(e);
    if (!inHorizon_[s])
      longest = std::max(longest, graph.edgeCost(e) + bottom[s]);
  }
  return longest;
}

DeviceId HorizonLookahead::evaluate(const PlacementEnvironment &env, NodeId v,
                                    ArrayView<NodeId> window,
                                    double *makespans) {
  const int32_t D = numDevices_;
  chooseHorizon(env, v, window);
  inHorizon_[v] = 1;
  for (NodeId u : horizon_)
    inHorizon_[u] = 1;
  env.earliestStarts(v, startOfV_.data());
  tried_.resize(D);
  std::iota(tried_.begin(), tried_.end(), 0);
  const int32_t M = std::min(D, kHorizonDevices);
  auto earlier = [&](DeviceId a, DeviceId b) {
    return startOfV_[a] < startOfV_[b] || (startOfV_[a] == startOfV_[b] && a < b);
  };
  if (M < D)
    std::partial_sort(tried_.begin(), tried_.begin() + M, tried_.end(),
                      earlier);
  tried_.resize(M);
  DeviceId best = -1;
  double worst = -std::numeric_limits<double>::infinity();
  for (DeviceId d : tried_) {
    makespans[d] = estimate(env, v, d, startOfV_[d]);
    worst = std::max(worst, makespans[d]);
    if (best < 0 || makespans[d] < makespans[best] ||
        (makespans[d] == makespans[best] && d < best))
      best = d;
  }
  inHorizon_[v] = 0;
  for (NodeId u : horizon_)
    inHorizon_[u] = 0;
  if (M < D) {
    isTried_.assign(D, 0);
    for (DeviceId d : tried_)
      isTried_[d] = 1;
    for (DeviceId d = 0; d < D; ++d)
      if (!isTried_[d])
        makespans[d] = worst;
  }
  return best;
}
