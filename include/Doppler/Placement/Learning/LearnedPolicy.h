//===- LearnedPolicy.h - Place with the learned policy, on demand -*- C++ -*-===//
//
// The entry point for tools and passes. It lives in a small static library
// (DopplerLearningLoader) that does not link LibTorch: the first call loads
// libDopplerLearning.so with dlopen and resolves its extern "C" entry table,
// so a binary pays LibTorch's start-up (~0.7 s) only when it really places
// with the learned policy, and works without LibTorch installed otherwise.
//
// Where the library is looked for, first hit wins:
//   1. $DOPPLER_LEARNING_LIBRARY (a path to the .so);
//   2. <dir>/../lib/libDopplerLearning.so and <dir>/libDopplerLearning.so,
//      where <dir> holds the binary (or plugin) that contains this loader;
//   3. the same next to the running executable (/proc/self/exe);
//   4. libDopplerLearning.so on the dynamic loader's search path.
// A failure reads "learned policy unavailable: ..." and says what was tried.
//
// Thread safe: loading happens once; models are cached by path inside the
// library, and calls into it are serialised.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_PLACEMENT_LEARNING_LEARNEDPOLICY_H
#define DOPPLER_PLACEMENT_LEARNING_LEARNEDPOLICY_H

#include "Doppler/Placement/Graph.h"
#include "Doppler/Placement/Heuristics.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace doppler::placement {

struct LearnedPolicyOptions {
  /// A model file; empty: the default model embedded in the library.
  std::string modelPath;
  /// 0: the greedy rollout. K > 0: K rollouts (the greedy one and K-1
  /// sampled, SEL at temperatures rising from 1 to 24), the best by the
  /// simulator is kept.
  int32_t samples = 0;
  uint64_t seed = 0;
  /// Wall-clock seconds the sampled rollouts may take (the greedy one
  /// always runs); 0: no limit (PlaceOptions::samplingSeconds).
  double samplingSeconds = 0;
  /// Memory capacity of each device in bytes (numDevices values; infinity:
  /// unlimited), or empty: a memory-aware model reads them
  /// (PlaceOptions::memoryCapacities).
  std::vector<double> memoryCapacities;
  /// learned-moves (LearnedMoves.h): simulator runs for the moves; -1:
  /// defaultMoveEvaluations() runs within defaultMoveWork(). Its model is
  /// `modelPath` (a move model file; empty: the embedded one).
  int64_t moveEvaluations = -1;
};

/// Device of every node by id. Errors: numDevices < 1, an unreadable model,
/// or "learned policy unavailable: ..." when the library cannot be loaded.
std::optional<std::vector<DeviceId>>
placeWithLearnedPolicy(const Graph &graph, int32_t numDevices,
                       const LearnedPolicyOptions &options,
                       std::string *error = nullptr) noexcept;

/// Loads the library if needed; false (with the reason) when it cannot be.
bool isLearnedPolicyAvailable(std::string *error = nullptr) noexcept;

/// The path of the loaded library ("" before loading or after a failure).
std::string learnedPolicyLibraryPath() noexcept;

/// The name tools and passes know the learned policy by.
inline constexpr std::string_view kLearnedPolicyName = "doppler";

/// Every policy a tool or pass accepts: the learned one first, then
/// learned-moves (LearnedMoves.h), then heuristicPolicyNames().
const std::vector<std::string> &placementPolicyNames();

/// Places with the policy called `name`: the learned policy (with
/// `learned`; its seed is `heuristic.seed`) for kLearnedPolicyName, else the
/// heuristic of createPolicy(). Errors as theirs, and "unknown policy ..."
/// listing placementPolicyNames().
std::optional<std::vector<DeviceId>>
placeWithNamedPolicy(std::string_view name, const Graph &graph,
                     int32_t numDevices, const PolicyOptions &heuristic,
                     const LearnedPolicyOptions &learned,
                     std::string *error = nullptr);

} // namespace doppler::placement

#endif // DOPPLER_PLACEMENT_LEARNING_LEARNEDPOLICY_H
