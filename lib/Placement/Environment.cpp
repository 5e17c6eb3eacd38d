//===- Environment.cpp - The sequential placement decision process -------===//

#include "Doppler/Placement/Environment.h"

#include "Doppler/Support/ErrorString.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace doppler::placement {

bool PlacementEnvironment::reset(const Graph &graph, int32_t numDevices,
                                 StartEstimate estimate, std::string *error) {
  if (numDevices < 1) {
    setError(error, "device count must be at least 1, got " +
                        std::to_string(numDevices));
    return false;
  }
  graph_ = &graph;
  numDevices_ = numDevices;
  estimate_ = estimate;
  const int32_t numNodes = graph.numNodes();

  // assign() and clear() keep capacity, so repeated episodes do not allocate.
  device_.assign(numNodes, -1);
  start_.assign(numNodes, 0.0);
  finish_.assign(numNodes, 0.0);
  unplacedPreds_.resize(numNodes);
  candidateFlag_.assign(numNodes, 0);
  candidates_.clear();
  candidates_.reserve(numNodes);
  order_.clear();
  order_.reserve(numNodes);
  for (NodeId v = 0; v < numNodes; ++v) {
    unplacedPreds_[v] = graph.inDegree(v);
    if (unplacedPreds_[v] == 0) {
      candidates_.push_back(v);
      candidateFlag_[v] = 1;
    }
  }
  if (static_cast<int32_t>(onDevice_.size()) < numDevices)
    onDevice_.resize(numDevices);
  for (int32_t d = 0; d < numDevices; ++d) {
    onDevice_[d].clear();
    onDevice_[d].reserve(numNodes);
  }
  free_.assign(numDevices, 0.0);
  load_.assign(numDevices, 0.0);
  sameDeviceReady_.assign(numDevices, 0.0);
  crossDeviceReady_.assign(numDevices, 0.0);
  estScratch_.assign(numDevices, 0.0);
  siblingScratch_.assign(numDevices, 0.0);
  estimatedMakespan_ = 0;
  memoryOn_ = false;
  updatePairAware();
  return true;
}

void PlacementEnvironment::setSystem(const System *system) {
  system_ = system;
  updatePairAware();
}

void PlacementEnvironment::updatePairAware() {
  pairAware_ = system_ && graph_ && graph_->hasOutputBytes() &&
               system_->numDevices() == numDevices_;
}

void PlacementEnvironment::setMemoryCapacities(
    const std::vector<double> &capacities) {
  const Graph &graph = *graph_;
  memoryOn_ = false;
  if (!graph.hasOutputBytes() ||
      static_cast<int32_t>(capacities.size()) != numDevices_ ||
      std::none_of(capacities.begin(), capacities.end(),
                   [](double c) { return std::isfinite(c) && c > 0; }))
    return;
  memoryOn_ = true;
  capacity_ = capacities;
  live_.assign(numDevices_, 0.0);
  peakLive_.assign(numDevices_, 0.0);
  const int32_t numNodes = graph.numNodes();
  unplacedSuccs_.resize(numNodes);
  copyBegin_.resize(numNodes);
  copyCount_.assign(numNodes, 0);
  int32_t slots = 0;
  for (NodeId u = 0; u < numNodes; ++u) {
    unplacedSuccs_[u] = graph.outDegree(u);
    copyBegin_[u] = slots;
    // A value is on its producer's device and on at most one more device
    // per reader (and never on more than all of them).
    slots += std::min(graph.outDegree(u) + 1, numDevices_);
  }
  copyDevice_.resize(slots);
}

bool PlacementEnvironment::hasCopy(NodeId u, DeviceId d) const {
  const DeviceId *begin = copyDevice_.data() + copyBegin_[u];
  return std::find(begin, begin + copyCount_[u], d) != begin + copyCount_[u];
}

void PlacementEnvironment::placeMemory(NodeId v, DeviceId d) {
  const Graph &graph = *graph_;
  // v's inputs come to d (once per value), v's output appears; the peak is
  // taken while v runs, before anything it was the last reader of is freed.
  for (NodeId u : graph.predecessors(v))
    if (!hasCopy(u, d)) {
      copyDevice_[copyBegin_[u] + copyCount_[u]++] = d;
      live_[d] += graph.outputBytes(u);
    }
  copyDevice_[copyBegin_[v] + copyCount_[v]++] = d;
  live_[d] += graph.outputBytes(v);
  peakLive_[d] = std::max(peakLive_[d], live_[d]);
  for (NodeId u : graph.predecessors(v)) {
    if (--unplacedSuccs_[u] != 0)
      continue;
    const DeviceId *copies = copyDevice_.data() + copyBegin_[u];
    for (int32_t i = 0; i < copyCount_[u]; ++i)
      live_[copies[i]] -= graph.outputBytes(u);
  }
}

void PlacementEnvironment::memoryPressure(NodeId v, double *out) const {
  if (!memoryOn_) {
    std::fill(out, out + numDevices_, 0.0);
    return;
  }
  const Graph &graph = *graph_;
  for (DeviceId d = 0; d < numDevices_; ++d) {
    if (!std::isfinite(capacity_[d]) || capacity_[d] <= 0) {
      out[d] = 0;
      continue;
    }
    double projected = live_[d] + graph.outputBytes(v);
    for (NodeId u : graph.predecessors(v))
      if (!hasCopy(u, d))
        projected += graph.outputBytes(u);
    out[d] = projected / capacity_[d];
  }
}

bool PlacementEnvironment::raisesOverflow(double pressure, DeviceId d) const {
  if (!memoryOn_ || !std::isfinite(capacity_[d]) || capacity_[d] <= 0)
    return false;
  return pressure > 1 && pressure * capacity_[d] > peakLive_[d];
}

bool PlacementEnvironment::step(NodeId v, DeviceId d, std::string *error) {
  if (!graph_ || v < 0 || v >= graph_->numNodes() || !candidateFlag_[v]) {
    setError(error, "node " + std::to_string(v) + " is not a candidate");
    return false;
  }
  if (d < 0 || d >= numDevices_) {
    setError(error, "device " + std::to_string(d) + " is out of range (" +
                        std::to_string(numDevices_) + " devices)");
    return false;
  }
  const Graph &graph = *graph_;
  const double begin = estimate_ == StartEstimate::DeviceLoad
                           ? load_[d]
                           : earliestStart(v, d);
  device_[v] = d;
  start_[v] = begin;
  finish_[v] = begin + graph.computeCost(v);
  load_[d] += graph.computeCost(v);
  // In DeviceLoad mode this is the new load, as in the reference.
  free_[d] = finish_[v];
  estimatedMakespan_ = std::max(estimatedMakespan_, finish_[v]);
  order_.push_back(v);
  onDevice_[d].push_back(v);
  if (memoryOn_)
    placeMemory(v, d);

  // Keep the candidates in the order they arrived.
  candidateFlag_[v] = 0;
  candidates_.erase(std::find(candidates_.begin(), candidates_.end(), v));
  for (NodeId w : graph.successors(v)) {
    if (--unplacedPreds_[w] == 0) {
      candidates_.push_back(w);
      candidateFlag_[w] = 1;
    }
  }
  return true;
}

double PlacementEnvironment::earliestStart(NodeId v, DeviceId d) const {
  const Graph &graph = *graph_;
  double ready = free_[d];
  ArrayView<NodeId> preds = graph.predecessors(v);
  ArrayView<int32_t> edges = graph.predecessorEdges(v);
  for (size_t i = 0; i < preds.size(); ++i) {
    NodeId u = preds[i];
    double arrival = finish_[u];
    if (device_[u] != d)
      arrival += pairAware_
                     ? pairTransferCost(graph, *system_, edges[i], device_[u], d)
                     : graph.edgeCost(edges[i]);
    ready = std::max(ready, arrival);
  }
  return ready;
}

void PlacementEnvironment::pairEarliestStarts(NodeId v, double *out) const {
  const Graph &graph = *graph_;
  for (DeviceId d = 0; d < numDevices_; ++d)
    out[d] = free_[d];
  for (NodeId u : graph.predecessors(v)) {
    const DeviceId du = device_[u];
    const double finish = finish_[u];
    const double bytes = graph.outputBytes(u);
    for (DeviceId d = 0; d < numDevices_; ++d) {
      double arrival = finish;
      if (d != du) {
        const Link &link = system_->link(du, d);
        arrival += link.latency + bytes / link.bandwidth;
      }
      out[d] = std::max(out[d], arrival);
    }
  }
}

void PlacementEnvironment::gatherInputTimes(NodeId v) const {
  const Graph &graph = *graph_;
  std::fill(sameDeviceReady_.begin(), sameDeviceReady_.end(), 0.0);
  std::fill(crossDeviceReady_.begin(), crossDeviceReady_.end(), 0.0);
  ArrayView<NodeId> preds = graph.predecessors(v);
  ArrayView<int32_t> edges = graph.predecessorEdges(v);
  for (size_t i = 0; i < preds.size(); ++i) {
    NodeId u = preds[i];
    DeviceId du = device_[u];
    sameDeviceReady_[du] = std::max(sameDeviceReady_[du], finish_[u]);
    crossDeviceReady_[du] =
        std::max(crossDeviceReady_[du], finish_[u] + graph.edgeCost(edges[i]));
  }
}

void PlacementEnvironment::earliestStarts(NodeId v, double *out) const {
  if (pairAware_) {
    pairEarliestStarts(v, out);
    return;
  }
  gatherInputTimes(v);
  // An input on device d' delays a consumer on d != d' by its transfer: keep
  // the two largest cross-device arrivals so each d can skip its own.
  double best = 0, second = 0;
  DeviceId bestDevice = -1;
  for (DeviceId d = 0; d < numDevices_; ++d) {
    double arrival = crossDeviceReady_[d];
    if (arrival > best) {
      second = best;
      best = arrival;
      bestDevice = d;
    } else if (arrival > second) {
      second = arrival;
    }
  }
  for (DeviceId d = 0; d < numDevices_; ++d) {
    double fromElsewhere = d == bestDevice ? second : best;
    out[d] = std::max({free_[d], sameDeviceReady_[d], fromElsewhere});
  }
}

DeviceId PlacementEnvironment::earliestDevice(NodeId v) const {
  earliestStarts(v, estScratch_.data());
  return static_cast<DeviceId>(
      std::min_element(estScratch_.begin(), estScratch_.end()) -
      estScratch_.begin());
}

void PlacementEnvironment::deviceFeatures(NodeId v, double *out,
                                          int32_t columns) const {
  const Graph &graph = *graph_;
  constexpr double kNone = std::numeric_limits<double>::infinity();
  for (DeviceId d = 0; d < numDevices_; ++d) {
    double *row = out + d * kNumDeviceFeatures;
    row[kDeviceLoadFeature] = load_[d];
    row[kInputComputeFeature] = 0;
    row[kInputMinStartFeature] = kNone;
    row[kInputMaxFinishFeature] = 0;
  }
  for (NodeId u : graph.predecessors(v)) {
    double *row = out + device_[u] * kNumDeviceFeatures;
    row[kInputComputeFeature] += graph.computeCost(u);
    row[kInputMinStartFeature] = std::min(row[kInputMinStartFeature], start_[u]);
    row[kInputMaxFinishFeature] =
        std::max(row[kInputMaxFinishFeature], finish_[u]);
  }
  for (DeviceId d = 0; d < numDevices_; ++d) {
    double *row = out + d * kNumDeviceFeatures;
    if (row[kInputMinStartFeature] == kNone)
      row[kInputMinStartFeature] = 0;
  }
  earliestStarts(v, estScratch_.data());
  for (DeviceId d = 0; d < numDevices_; ++d)
    out[d * kNumDeviceFeatures + kEarliestStartFeature] = estScratch_[d];
  if (columns <= kJoinSplitFeature)
    return;
  joinSplitCosts(v, estScratch_.data());
  for (DeviceId d = 0; d < numDevices_; ++d)
    out[d * kNumDeviceFeatures + kJoinSplitFeature] = estScratch_[d];
  if (columns <= kMemoryPressureFeature)
    return;
  memoryPressure(v, estScratch_.data());
  for (DeviceId d = 0; d < numDevices_; ++d)
    out[d * kNumDeviceFeatures + kMemoryPressureFeature] = estScratch_[d];
}

void PlacementEnvironment::joinSplitCosts(NodeId v, double *out) const {
  if (pairAware_) {
    pairJoinSplitCosts(v, out);
    return;
  }
  const Graph &graph = *graph_;
  // Per device, the split cost of the placed siblings on it; a device pays
  // the total minus its own share.
  std::fill(siblingScratch_.begin(), siblingScratch_.end(), 0.0);
  double total = 0;
  for (int32_t e = graph.succBegin(v); e < graph.succEnd(v); ++e) {
    NodeId w = graph.edgeTarget(e);
    const double ownCost = graph.edgeCost(e);
    ArrayView<NodeId> inputs = graph.predecessors(w);
    ArrayView<int32_t> inEdges = graph.predecessorEdges(w);
    for (size_t j = 0; j < inputs.size(); ++j) {
      NodeId u = inputs[j];
      if (u == v || device_[u] < 0)
        continue;
      double split = std::min(ownCost, graph.edgeCost(inEdges[j]));
      siblingScratch_[device_[u]] += split;
      total += split;
    }
  }
  for (DeviceId d = 0; d < numDevices_; ++d)
    out[d] = total - siblingScratch_[d];
}

void PlacementEnvironment::pairJoinSplitCosts(NodeId v, double *out) const {
  const Graph &graph = *graph_;
  // As above, each placed sibling u of v (another input of a successor w)
  // on device du charges v on d != du the least that w waits for: v's value
  // moved d -> du or u's moved du -> d, now by the pair's link.
  std::fill(out, out + numDevices_, 0.0);
  for (int32_t e = graph.succBegin(v); e < graph.succEnd(v); ++e) {
    NodeId w = graph.edgeTarget(e);
    ArrayView<NodeId> inputs = graph.predecessors(w);
    ArrayView<int32_t> inEdges = graph.predecessorEdges(w);
    for (size_t j = 0; j < inputs.size(); ++j) {
      NodeId u = inputs[j];
      const DeviceId du = device_[u];
      if (u == v || du < 0)
        continue;
      for (DeviceId d = 0; d < numDevices_; ++d)
        if (d != du)
          out[d] += std::min(pairTransferCost(graph, *system_, e, d, du),
                             pairTransferCost(graph, *system_, inEdges[j], du,
                                              d));
    }
  }
}

} // namespace doppler::placement

//===----------------------------------------------------------------------===//
// CandidateOrder
//===----------------------------------------------------------------------===//

void doppler::placement::CandidateOrder::reset(int32_t numNodes,
                                               const double *key) {
  key_ = key;
  entries_.clear();
  arrival_.assign(numNodes, 0);
  nextArrival_ = 0;
  known_ = 0;
}

void doppler::placement::CandidateOrder::sync(
    const PlacementEnvironment &env) {
  // The environment keeps its candidates in arrival order: removing a
  // placed one keeps the others' order, new ones are appended. So the
  // entries past `known_` are exactly the arrivals since the last sync.
  ArrayView<NodeId> candidates = env.candidates();
  for (size_t i = known_; i < candidates.size(); ++i) {
    NodeId v = candidates[i];
    arrival_[v] = nextArrival_++;
    entries_.insert(Entry{key_[v], arrival_[v], v});
  }
  known_ = candidates.size();
}

void doppler::placement::CandidateOrder::remove(NodeId v) {
  if (entries_.erase(Entry{key_[v], arrival_[v], v}))
    --known_;
}

void doppler::placement::CandidateOrder::firstInEnvironmentOrder(
    size_t count, std::vector<NodeId> &out) {
  scratch_.clear();
  for (auto it = entries_.begin(); it != entries_.end() && scratch_.size() < count;
       ++it)
    scratch_.push_back({it->arrival, it->node});
  std::sort(scratch_.begin(), scratch_.end());
  out.clear();
  for (const auto &entry : scratch_)
    out.push_back(entry.second);
}
