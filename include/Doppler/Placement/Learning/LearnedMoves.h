//===- LearnedMoves.h - Learned improvement moves (issue 32) ----*- C++ -*-===//
//
// Learned improvement instead of learned construction. The better heuristic
// (critical path or join-aware, by the simulator) places; then, for a
// bounded number of simulator runs, a learned move proposer picks which
// node goes to which device:
//
//   - candidates: every node on the current schedule's critical chain and
//     every direct producer or consumer of one, each to every other device;
//   - each candidate (v, d) is described by kMoveFeatureCount cheap
//     features of the current schedule (on the chain or next to it, slack,
//     the transfers the move adds or saves, how much earlier v's inputs
//     would be ready on d, how long v waited for its device, the load of d
//     against v's device, ...), and a logistic model (MoveModel) scores it;
//   - candidates are tried in score order, each judged by one exact
//     simulator run; the first that improves (a lower makespan, or the same
//     makespan with a lower sum of finish times, so plateaus are crossed
//     without cycling) is kept, and the candidates are derived again.
//
// The model is trained (fitMoveModel) on the simulator's verdicts on
// candidate moves of the training graphs (collectMoveExamples: at every
// step of a hill climb from the better heuristic, a seeded sample of the
// candidates, each labelled by whether it improves). Everything is
// deterministic: no clock decides anything unless a time budget is given.
// Torch-free (DopplerLearningLoader).
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_PLACEMENT_LEARNING_LEARNEDMOVES_H
#define DOPPLER_PLACEMENT_LEARNING_LEARNEDMOVES_H

#include "Doppler/Placement/Graph.h"
#include "Doppler/Placement/Heuristics.h"
#include "Doppler/Placement/Simulator.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace doppler::placement {

struct LearnedPolicyOptions;

/// The policy name tools know the learned improvement by.
inline constexpr std::string_view kLearnedMovesPolicyName = "learned-moves";

inline constexpr int kMoveFeatureCount = 13;
/// The features' names, in order (for reports and the model file).
extern const std::array<const char *, kMoveFeatureCount> kMoveFeatureNames;

/// A logistic model over standardised move features.
struct MoveModel {
  std::array<double, kMoveFeatureCount> mean{}, scale{}, weight{};
  double bias = 0;
  /// Higher: likelier to improve.
  double score(const std::array<double, kMoveFeatureCount> &features) const;
  /// The model trained by scripts/train_default_model.sh, compiled in.
  static const MoveModel &embedded();
};

/// The model file: '//' comment lines, then the 40 numbers (means, scales,
/// weights, bias) in C++ initializer syntax, so that the embedded default
/// (LearnedMovesModel.inc) is such a file.
bool writeMoveModel(const MoveModel &model, const std::string &path,
                    const std::string &comment, std::string *error = nullptr);
std::optional<MoveModel> readMoveModel(const std::string &path,
                                       std::string *error = nullptr);
std::optional<MoveModel> parseMoveModel(std::string_view text,
                                        std::string *error = nullptr);

struct LearnedMovesOptions {
  /// Simulator runs for the moves (the start's own run not counted).
  int64_t maxEvaluations = 64;
  /// Wall-clock seconds; 0: none (then the result depends only on the
  /// inputs).
  double seconds = 0;
  /// Ablation: try the same candidates in a seeded random order instead of
  /// the model's.
  bool randomOrder = false;
  /// The share of tries drawn at random from the untried candidates, the
  /// rest best-first by the model (0: the model's order only).
  double explore = 0;
  uint64_t seed = 0;
  /// Judge moves by an estimate first (MoveState.h in lib/Placement/
  /// Learning: heads and tails of the current schedule, O(degree) a move)
  /// and run the simulator only to confirm: each round, the moves the
  /// estimate says shorten the makespan, best estimate first (the model's
  /// score among equal estimates), up to `batch` of them that do not touch
  /// one another applied together and confirmed by one run; if that run
  /// does not improve, the best `singleTries` of them one at a time, then
  /// the model's best `singleTries` of the rest (plateau moves). A move is
  /// kept only when the simulator says it improves, as without the
  /// estimate. maxEvaluations still bounds the simulator runs.
  bool estimate = false;
  /// With `estimate`: a bound on the climb's work, in nodes and edges
  /// visited, each kind weighed by what it costs on the held-out
  /// real-program graphs: each simulator run and each schedule read
  /// (heads, tails, the chain) the graph's nodes and edges; each node
  /// estimated on every device its degree + 2D; each move described for
  /// the model (features and score) its node's degree + 6. No run starts
  /// once it is reached; 0: none. Deterministic, unlike `seconds`.
  int64_t maxWork = 0;
  int32_t batch = 8;
  /// After a kept batch, up to this many batches in all from the same
  /// estimates before they are made again.
  int32_t batchesPerRound = 1;
  int32_t singleTries = 4;
};

/// Where the policy's time went, in steady-clock seconds (measured, never
/// read by any decision): the two heuristics' passes (one
/// placeCriticalPathAndJoinAware call), the judge's runs of them (and of
/// the start, where the climb makes one), reading each kept
/// schedule (ready times, tails, the chain and its neighbours:
/// MoveState::keep), the estimate's heads and tails (keepEstimates),
/// estimating, scoring and ranking candidate moves, and the runs that
/// confirm moves. `rounds`: schedules read.
struct LearnedMovesProfile {
  double heuristics = 0, startRuns = 0;
  double keep = 0, estimateSetup = 0, ranking = 0, confirmRuns = 0;
  int64_t rounds = 0;
};

struct LearnedMovesResult {
  std::vector<DeviceId> assignment;
  double makespan = 0, initialMakespan = 0;
  int64_t evaluations = 0, accepted = 0;
  /// With `estimate`: the work counted against maxWork.
  int64_t work = 0;
  double seconds = 0;
  /// With `estimate`: moves estimated; batches confirmed by a run and
  /// kept; single moves the estimate ranked as shortening, run and kept;
  /// plateau moves of the model's order, run and kept.
  int64_t estimates = 0, batchesTried = 0, batchesKept = 0;
  int64_t estimatedTried = 0, estimatedKept = 0;
  int64_t modelTried = 0, modelKept = 0;
  LearnedMovesProfile profile;
};

/// Improves `start` as described above; never worse than it. Errors: an
/// invalid start.
std::optional<LearnedMovesResult>
improveWithLearnedMoves(Simulator &judge, ArrayView<DeviceId> start,
                        const MoveModel &model,
                        const LearnedMovesOptions &options,
                        std::string *error = nullptr);

/// The better of critical path and join-aware by `judge`'s makespan
/// (critical path on a tie), both placed by one
/// placeCriticalPathAndJoinAware call with `heuristic`'s estimate and
/// system (the placements placeWithPolicy gives); `name` gets
/// "critical-path" or "join-aware" and `makespan` its makespan where given.
/// Errors: a device count below 1.
std::optional<std::vector<DeviceId>>
placeBetterHeuristic(Simulator &judge, const PolicyOptions &heuristic,
                     std::string_view *name = nullptr,
                     double *makespan = nullptr, std::string *error = nullptr);

/// The policy: the better of critical path and join-aware (by `judge`),
/// improved by improveWithLearnedMoves.
std::optional<LearnedMovesResult>
placeWithLearnedMoves(Simulator &judge, const PolicyOptions &heuristic,
                      const MoveModel &model,
                      const LearnedMovesOptions &options,
                      std::string *error = nullptr);

/// The policy's default budget: 2048 runs, fewer where a run is long, so
/// that the runs visit at most 2 x 10^7 nodes and edges (about a second on
/// one core), and at least 16.
int64_t defaultMoveEvaluations(const Graph &graph, int32_t numDevices);
/// The policy's default work budget (LearnedMovesOptions::maxWork), sized
/// to issue 32's time bar: the two heuristics and their runs take about
/// 2.1-2.6x the better one's own time, and this much climbing about 0.5x
/// more. kMoveWorkPerPass passes of (n + e)(1 + D/16) (a heuristic pass's
/// work grows with D as rolloutRunVisits() counts it).
int64_t defaultMoveWork(const Graph &graph, int32_t numDevices);
inline constexpr double kMoveWorkPerPass = 4;

/// The policy as tools and passes call it (placeWithNamedPolicy): the
/// model of `learned.modelPath` (empty: embedded), `learned.moveEvaluations`
/// runs (-1: the default), judged by the reference simulator.
std::optional<std::vector<DeviceId>>
placeWithLearnedMovesPolicy(const Graph &graph, int32_t numDevices,
                            const PolicyOptions &heuristic,
                            const LearnedPolicyOptions &learned,
                            std::string *error = nullptr);

/// The heads-and-tails estimate (LearnedMovesOptions::estimate) of the
/// makespan after moving each `moves[i].first` to device `.second` alone,
/// from `placement`'s schedule by `judge` (valid placement, other device).
std::vector<double>
estimateMoveMakespans(Simulator &judge, ArrayView<DeviceId> placement,
                      const std::vector<std::pair<NodeId, DeviceId>> &moves);

/// How the estimate agrees with the simulator on every candidate move of
/// `placement` (the chain's neighbourhood to every other device), each
/// also judged by a simulator run.
struct MoveEstimateAgreement {
  int64_t candidates = 0;
  int64_t estimatedBetter = 0, simulatedBetter = 0, bothBetter = 0;
  int64_t exact = 0;   ///< estimate within 1e-9 of the simulated makespan
  double spearman = 0; ///< rank correlation of estimate and simulation
  /// Whether the move the estimate ranks first shortens the makespan, and
  /// the best simulated makespan over the best estimated one's.
  bool bestEstimatedImproves = false;
  double bestSimulated = 0, bestEstimated = 0;
};
MoveEstimateAgreement checkMoveEstimates(Simulator &judge,
                                         ArrayView<DeviceId> placement);

struct MoveExample {
  std::array<double, kMoveFeatureCount> features{};
  bool improves = false;
};

/// Training data: a hill climb of `rounds` steps from `start`; at each,
/// up to `perRound` candidates drawn with `seed` are judged by the
/// simulator and appended to `out`, and the best improving one is kept
/// (none: another sample from the same state; the climb ends after three
/// fruitless samples in a row).
void collectMoveExamples(Simulator &judge, ArrayView<DeviceId> start,
                         int32_t rounds, int32_t perRound, uint64_t seed,
                         std::vector<MoveExample> &out);

/// Logistic regression, classes weighted equally, full-batch gradient
/// descent from zero (deterministic).
MoveModel fitMoveModel(const std::vector<MoveExample> &examples,
                       int32_t iterations = 400, double l2 = 1e-3);

/// Where a refinement's gain comes from: `start` against `end` (e.g. the
/// better heuristic against 60 s of annealing from it).
struct PlacementGainAnalysis {
  struct Side {
    double makespan = 0;
    int32_t chainNodes = 0;
    /// Along the critical chain: compute, transfers, the rest (idle);
    /// chainQueued is the part of chainCompute the chain reaches through
    /// a device's order (a node that waited for the one its device ran
    /// before it) rather than through a data edge: load, not dependence.
    double chainCompute = 0, chainTransfer = 0, chainWait = 0;
    double chainQueued = 0;
    double crossCommunication = 0; ///< edge cost of every cross edge
    double maxBusy = 0, meanBusy = 0;
  };
  Side start, end;
  int32_t nodes = 0, moved = 0;
  int32_t movedOnChain = 0;   ///< moved nodes on start's critical chain
  int32_t movedNearChain = 0; ///< ... or a producer/consumer of one
  /// start with only the moved nodes on or near its chain moved, and with
  /// only the others.
  double chainMovesOnly = 0, otherMovesOnly = 0;
};
PlacementGainAnalysis analysePlacementGain(Simulator &judge,
                                           ArrayView<DeviceId> start,
                                           ArrayView<DeviceId> end);

} // namespace doppler::placement

#endif // DOPPLER_PLACEMENT_LEARNING_LEARNEDMOVES_H
