//===- LearnedConstruct.h - Annealing distilled, a construction -*- C++ -*-===//
//
// An experiment of issue 32 (docs/Method.md section 12, "Distilling
// annealing into a construction: measured, not kept"): a list-scheduling
// pass with critical path's cost shape whose device rule (PLC) is a linear
// scorer trained to pick the device annealing from the better heuristic
// put each node on. Not a placement policy: doppler-train --construct
// trains and measures it.
//
//   SEL: critical path's (largest b-level; among equal b-levels the
//        candidate that can start soonest, of the first 16).
//   PLC: argmax over devices d of w . f(v, d), f of kConstructFeatureCount
//        features read off the environment's estimated schedule in O(1)
//        per device after an O(in-degree + D) gather (est(v, d) against
//        the smallest, the join split, data-ready time, the wait for the
//        device, its load, the share of v's input cost already there,
//        whether the latest input's producer is there, critical path's
//        and join-aware's own choices, and products with v's b-level);
//        optionally only among the devices within a window of the
//        earliest start (ConstructModel::window).
//
// Training (collectConstructExamples, fitConstructModel): per training
// pair, a placement found by annealing (the teacher). Behaviour cloning
// rolls in along the teacher's devices (each step places the teacher's
// device, the label). DAgger-style rounds roll in with the learned rule (or
// a seeded mixture) and label each step with the teacher's device renamed
// by the device permutation that best matches the two placements so far
// (devices are interchangeable: a teacher's "device 5" is the learned
// pass's device that holds the same nodes), with the device of the
// producer the teacher puts the node with, or by the device whose
// completion by critical path's rule the simulator finds shortest
// (ConstructRollIn). The fit is a conditional logit (softmax over the
// devices of one step), Newton steps from zero: deterministic. Torch-free
// (DopplerLearningLoader).
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_PLACEMENT_LEARNING_LEARNEDCONSTRUCT_H
#define DOPPLER_PLACEMENT_LEARNING_LEARNEDCONSTRUCT_H

#include "Doppler/Placement/Graph.h"
#include "Doppler/Placement/Simulator.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace doppler::placement {

inline constexpr int kConstructFeatureCount = 16;
extern const std::array<const char *, kConstructFeatureCount>
    kConstructFeatureNames;

/// A linear device scorer over standardised features.
struct ConstructModel {
  std::array<double, kConstructFeatureCount> mean{}, scale{}, weight{};
  /// PLC considers only the devices whose est_gap (est(v, d) over the
  /// smallest, in units of c(v) + the mean compute) is at most this; 0:
  /// every device. The rest of the model's file after the weights.
  double window = 0;
  ConstructModel() { scale.fill(1); }
  double score(const double *features) const;
};

/// One step's features, numDevices rows of kConstructFeatureCount, and the
/// teacher's device (the label).
struct ConstructExample {
  std::vector<double> features;
  int32_t numDevices = 0;
  DeviceId label = 0;
};

/// The learned construction: critical path's SEL, `model`'s PLC.
std::vector<DeviceId> placeLearnedConstruct(const Graph &graph,
                                            int32_t numDevices,
                                            const ConstructModel &model);

/// How collectConstructExamples rolls in and labels.
struct ConstructRollIn {
  /// Probability that a step places the teacher's device (renamed, below)
  /// rather than the model's: 1 is behaviour cloning along the teacher, 0
  /// the model's own roll-in (DAgger), in between a seeded mixture.
  double follow = 1;
  uint64_t seed = 0;
  /// The label is the teacher's device renamed by the permutation of
  /// devices that best matches the two placements so far (compute placed
  /// together, matched greedily), recomputed every `remapEvery` steps.
  int32_t remapEvery = 16;
  /// Where the teacher puts v with one of its producers: the label is that
  /// producer's device here (the dearest such edge), not the renamed one.
  bool followProducers = false;
  /// Examples keep only the devices within this est_gap of the smallest
  /// (ConstructModel::window; 0: all); a step whose label is outside is
  /// not kept.
  double window = 0;
  /// AggreVaTe-style labels instead of the teacher's: each device (of the
  /// window) is tried for the step's node, the rest completed by critical
  /// path's rule (completePlacement) and judged by this simulator; the
  /// label is the shortest (the lowest id among equals). Null: the
  /// teacher's labels.
  Simulator *judge = nullptr;
};

/// Appends one example per node of `graph` to `out`, labelled by
/// `teacher`'s placement, rolling in as `rollIn` says with `model` (null:
/// critical path's device) deciding the steps that do not follow it.
void collectConstructExamples(const Graph &graph, int32_t numDevices,
                              const std::vector<DeviceId> &teacher,
                              const ConstructModel *model,
                              const ConstructRollIn &rollIn,
                              std::vector<ConstructExample> &out);

/// Conditional logit over each example's devices, standardised features,
/// Newton steps from zero (at most `iterations`, L2 `l2`); each example
/// weighs the same. Deterministic.
/// `loss`, when given, gets the final mean negative log-likelihood.
ConstructModel fitConstructModel(const std::vector<ConstructExample> &examples,
                                 int32_t iterations = 30, double l2 = 1e-3,
                                 double *loss = nullptr);

/// Share of `examples` whose label is the model's argmax.
double constructAgreement(const ConstructModel &model,
                          const std::vector<ConstructExample> &examples);

/// The model file: '//' comment lines, then 3 x kConstructFeatureCount + 1
/// numbers (means, scales, weights, window) separated by commas or blanks.
bool writeConstructModel(const ConstructModel &model, const std::string &path,
                         const std::string &comment,
                         std::string *error = nullptr);
std::optional<ConstructModel> readConstructModel(const std::string &path,
                                                 std::string *error = nullptr);

} // namespace doppler::placement

#endif // DOPPLER_PLACEMENT_LEARNING_LEARNEDCONSTRUCT_H
