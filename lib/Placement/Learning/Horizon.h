//===- Horizon.h - Bounded-horizon completions for large graphs -*- C++ -*-===//
//
// ModelConfig::lookahead's completions place the whole rest of the graph
// by the heuristic rule for every device of every step and simulate each:
// O(N^2 D) for a graph, affordable up to about 500 nodes at D = 8. Past
// that, the completions are replaced by these: for the node v being
// placed and each of its most promising devices d, the rule (the
// critical-path order, earliest-start device) places the next few nodes
// only -- the window's candidates with the largest bottom levels and the
// successors v makes ready -- on the estimated schedule the environment
// keeps, and the completion's makespan is estimated as
//
//   max( max over the horizon's nodes u (v included) of
//            finish(u) + tail(u),                        (a path to a sink)
//        (sum over devices of their free times + the compute not yet
//         placed nor in the horizon) / D )               (the work left)
//
// tail(u): over u's successors s outside the horizon, the longest
// transfer u -> s + bottom level of s (METHOD's b-level, every transfer
// counted); successors inside it count through their own finish, which
// holds the transfers the choice causes there. The policy reads these
// values as it reads the completions' makespans (standardised across
// devices, a prior on the smallest). A step costs O(M (H + 1) D + H D P): M devices tried, H
// nodes in the horizon, P inputs per node; independent of the graph's size.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_LIB_PLACEMENT_LEARNING_HORIZON_H
#define DOPPLER_LIB_PLACEMENT_LEARNING_HORIZON_H

#include "Doppler/Placement/Environment.h"
#include "Doppler/Placement/Graph.h"

#include <cstdint>
#include <vector>

namespace doppler::placement::learning {

/// The horizon measured in docs/Method.md section 11 (doppler-train
/// --compare --horizon 8): the window's candidates the rule places after v
/// (v's newly ready successors come on top, as many again at most).
constexpr int32_t kHorizonNodes = 8;
/// Devices tried per step: those with the smallest est(v, d); the others
/// read as the worst tried (never the shortest).
constexpr int32_t kHorizonDevices = 8;

class HorizonLookahead {
public:
  /// Per graph: `bottom` (computeBottomLevels, the rule's order) must
  /// outlive the episode. O(N + E).
  void reset(const Graph &graph, int32_t numDevices,
             const std::vector<double> &bottom, int32_t horizonNodes);
  /// Fills `makespans` (numDevices values) with the estimate for v on each
  /// device and returns the device with the smallest (the lowest id among
  /// equals). `window`: the step's candidates (v among them).
  DeviceId evaluate(const PlacementEnvironment &env, NodeId v,
                    ArrayView<NodeId> window, double *makespans);

private:
  /// Chooses the horizon's nodes into horizon_ and their input-ready times
  /// per device (for those whose inputs are all placed) into ready_.
  void chooseHorizon(const PlacementEnvironment &env, NodeId v,
                     ArrayView<NodeId> window);
  /// The longest path below u leaving the horizon (see above).
  double tail(NodeId u) const;
  /// The estimate with v on `d`, its est there `start`.
  double estimate(const PlacementEnvironment &env, NodeId v, DeviceId d,
                  double start);

  const Graph *graph_ = nullptr;
  const std::vector<double> *bottom_ = nullptr;
  int32_t numDevices_ = 0;
  int32_t horizonNodes_ = kHorizonNodes;
  double totalCompute_ = 0;
  std::vector<char> inHorizon_;      // [N]: v and horizon_, in evaluate()
  // Scratch.
  std::vector<NodeId> horizon_;      // in the rule's order
  std::vector<char> afterV_;         // per horizon node: reads v
  std::vector<double> ready_;        // [horizon][D]: inputs' arrival, v aside
  std::vector<double> free_;         // [D]
  std::vector<double> startOfV_;     // [D]: est(v, d)
  std::vector<DeviceId> tried_;
  std::vector<char> isTried_;        // [D]
};

} // namespace doppler::placement::learning

#endif // DOPPLER_LIB_PLACEMENT_LEARNING_HORIZON_H
