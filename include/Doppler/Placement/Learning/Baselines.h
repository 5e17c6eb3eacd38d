//===- Baselines.h - The paper's learned baselines: GDP, Placeto -*- C++ -*-===//
//
// The two learned placers the Doppler paper compares with, trained per
// graph on the same simulator as the dual policy and counted in the same
// episodes (one complete placement of the graph per episode):
//
//   GDP (Zhou et al., 2019): GraphSAGE node embeddings (two layers, pooled
//   neighbour aggregation over the undirected graph), a self-attention
//   placer over the nodes in topological order, and a device per node drawn
//   from its softmax, all nodes at once; trained with PPO (clipped ratio
//   per decision, a moving-average baseline, an entropy bonus).
//
//   Placeto (Addanki et al., 2019): an MDP that visits the nodes in
//   topological order and moves each to a device; the state is the graph
//   with the current placement as node features, embedded by message
//   passing from parents and from children, and summarised for the visited
//   node by its own embedding and the means over its ancestors, its
//   descendants and the nodes parallel to it; the reward of a step is the
//   makespan it saves. REINFORCE with a per-step moving-average baseline.
//   An episode starts from a random placement.
//
// Simplifications (documented, not hidden): GDP's Transformer-XL placer is
// one multi-head self-attention layer over all nodes in topological order
// with sinusoidal position encodings (the graphs here fit one segment;
// without positions the placer cannot tell symmetric nodes apart and did
// not learn); Placeto's full top-down and bottom-up passes are three
// rounds of synchronous message passing each way. The judge is the
// reference-semantics simulator.
//
// The header is free of LibTorch; the functions are exported from
// libDopplerLearning.so and never throw.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_PLACEMENT_LEARNING_BASELINES_H
#define DOPPLER_PLACEMENT_LEARNING_BASELINES_H

#include "Doppler/Placement/Graph.h"
#include "Doppler/Placement/Learning/Export.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace doppler::placement {

enum class BaselineKind { GDP, Placeto };

/// "gdp" or "placeto"; nullopt otherwise.
DOPPLER_LEARNING_API std::optional<BaselineKind>
parseBaselineKind(std::string_view name) noexcept;
DOPPLER_LEARNING_API const char *baselineName(BaselineKind kind) noexcept;

/// One episode's figures.
struct BaselineCurvePoint {
  int32_t episode = 0;    ///< 1-based
  double seconds = 0;     ///< wall time since training began
  double makespan = 0;    ///< the episode's (final) placement
  double bestMakespan = 0; ///< the least makespan simulated so far
};

struct BaselineOptions {
  BaselineKind kind = BaselineKind::GDP;
  /// Complete placements of the graph (GDP: sampled placements; Placeto:
  /// passes over all nodes).
  int32_t episodes = 200;
  uint64_t seed = 0;
  int32_t hiddenSize = 64;
  /// Adam's step size. GDP's 3e-3 and batch of 16 were chosen on the ffnn
  /// at D = 4 among {3e-4, 1e-3, 3e-3} x {4, 16, 32}: the only setting
  /// whose mean makespan fell clearly within 3000 episodes.
  double learningRate = 3e-3;
  double entropyWeight = 1e-3;
  /// GDP: placements sampled per PPO update, and epochs over them.
  int32_t batchSize = 16;
  int32_t ppoEpochs = 4;
  /// Called after every episode (e.g. to print a log line).
  std::function<void(const BaselineCurvePoint &)> progress;
};

struct BaselineResult {
  std::vector<DeviceId> assignment; ///< the best placement simulated
  double makespan = 0;
  std::vector<BaselineCurvePoint> curve;
  int64_t simulatorRuns = 0;
  double seconds = 0;
};

/// Trains a fresh GDP or Placeto model on `graph` for numDevices devices.
/// Errors: numDevices < 1, episodes < 1, an empty graph, Placeto on more
/// than 2048 nodes (its group masks are quadratic).
DOPPLER_LEARNING_API std::optional<BaselineResult>
trainBaseline(const Graph &graph, int32_t numDevices,
              const BaselineOptions &options,
              std::string *error = nullptr) noexcept;

} // namespace doppler::placement

#endif // DOPPLER_PLACEMENT_LEARNING_BASELINES_H
