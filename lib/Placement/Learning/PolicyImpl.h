//===- PolicyImpl.h - LearnedPolicy's hidden state --------------*- C++ -*-===//
//
// Internal: shared by DualPolicy.cpp and Trainer.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_LIB_PLACEMENT_LEARNING_POLICYIMPL_H
#define DOPPLER_LIB_PLACEMENT_LEARNING_POLICYIMPL_H

#include "PolicyNetwork.h"
#include "Rollout.h"

#include "Doppler/Placement/Environment.h"
#include "Doppler/Placement/Learning/DualPolicy.h"

#include <memory>

namespace doppler::placement {

class LearnedPolicy::Impl {
public:
  explicit Impl(learning::DualPolicyNetwork network)
      : network(std::move(network)) {}

  /// A LearnedPolicy owning `network`.
  static std::unique_ptr<LearnedPolicy> wrap(learning::DualPolicyNetwork network);

  /// The greedy rollout plus samples - 1 sampled ones; the best by the
  /// simulator wins. `trace` (optional) receives the greedy rollout's
  /// steps.
  PlacementResult place(const Graph &graph, int32_t numDevices,
                        const PlaceOptions &options,
                        std::vector<learning::StepTrace> *trace);

  learning::DualPolicyNetwork network;
  learning::RolloutEngine engine;
  PlacementEnvironment environment;
};

} // namespace doppler::placement

#endif // DOPPLER_LIB_PLACEMENT_LEARNING_POLICYIMPL_H
