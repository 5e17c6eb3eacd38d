//===- Budget.cpp - Placement under a budget, the default -----------------===//
//
// Starts from the named policy (and, for the learned one, its two heuristic
// priors), refines the best by simulated annealing. See Budget.h.
//
//===----------------------------------------------------------------------===//

#include "Doppler/Placement/Learning/Budget.h"
#include "Doppler/Support/Stopwatch.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

using namespace doppler::placement;

namespace {

/// Node-or-edge visits the simulator makes per second on one core, as
/// measured with `doppler-place --policy critical-path --budget-ms 1000`
/// on the three shared graphs (25-33 million; the lower end is used).
constexpr double kVisitsPerSecond = 25e6;
/// Runs per (node, device) pair at most: on small graphs the annealing has
/// long converged by then (a 10-node graph on 4 devices stops at 8000).
constexpr int64_t kRunsPerNodeDevice = 200;

std::string formatMakespan(double makespan) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", makespan);
  return text;
}

} // namespace

int64_t doppler::placement::defaultBudgetEvaluations(const Graph &graph,
                                                     int32_t numDevices) {
  const double nodes = static_cast<double>(graph.numNodes());
  if (nodes == 0 || numDevices < 1)
    return 0;
  const double seconds = std::min(10.0, std::sqrt(std::max(1.0, nodes / 500)));
  const double visits =
      nodes + static_cast<double>(graph.numEdges()) + numDevices;
  const double byTime = seconds * kVisitsPerSecond / visits;
  const double bySize = static_cast<double>(kRunsPerNodeDevice) * nodes *
                        static_cast<double>(numDevices);
  return std::max<int64_t>(1, static_cast<int64_t>(std::min(byTime, bySize)));
}

std::optional<BudgetedPlacement> doppler::placement::placeWithinBudget(
    Simulator &judge, const Graph &graph, int32_t numDevices,
    const BudgetedPlaceOptions &options, std::string *error) {
  auto begin = std::chrono::steady_clock::now();
  BudgetedPlacement placed;
  std::vector<std::vector<DeviceId>> assignments;
  auto addStart = [&](std::string name, std::vector<DeviceId> assignment) {
    double makespan = judge.run(assignment);
    placed.starts.push_back({std::move(name), makespan});
    assignments.push_back(std::move(assignment));
  };

  // Sampled rollouts spend the budget too: each is judged by one simulator
  // run, so they are bounded by the runs of a budget in runs, and take at
  // most the time of a budget in time (refinement gets what is left).
  LearnedPolicyOptions learnedOptions = options.learned;
  if (options.evaluations > 0 && learnedOptions.samples > options.evaluations)
    learnedOptions.samples = static_cast<int32_t>(options.evaluations);
  if (options.seconds > 0)
    learnedOptions.samplingSeconds = options.seconds;
  std::optional<std::vector<DeviceId>> own =
      placeWithNamedPolicy(options.policy, graph, numDevices, options.heuristic,
                           learnedOptions, error);
  if (!own)
    return std::nullopt;
  const bool learned = options.policy == kLearnedPolicyName;
  std::string ownName = options.policy;
  if (learned)
    ownName += learnedOptions.samples > 1
                   ? " best of " + std::to_string(learnedOptions.samples)
                   : std::string(" greedy");
  addStart(std::move(ownName), std::move(*own));

  const bool budgeted = options.evaluations > 0 || options.seconds > 0;
  // The learned policy's priors as starts too: a budgeted default is then
  // never worse than either heuristic. And everything on one device: a
  // program of small ops (the zoo's models on a CPU, where a hop between
  // devices costs 10 us) may run fastest unsplit, and a placement on D
  // devices should never be predicted slower than on one.
  if (learned && budgeted) {
    for (const char *prior : {"critical-path", "join-aware"}) {
      std::optional<std::vector<DeviceId>> start = placeWithPolicy(
          prior, graph, numDevices, options.heuristic, error);
      if (!start)
        return std::nullopt;
      addStart(prior, std::move(*start));
    }
    if (numDevices > 1)
      addStart("single", placeSingle(graph, numDevices));
    // On several nodes, pipeline stages across them (all the nodes, then
    // half of them, ... down to two: with one batch, stages run one after
    // the other, and fewer stages cross the network less) and the
    // critical-path rule inside each node, plain and owner-computes: what
    // the network costs least.
    const System *system = options.heuristic.system;
    if (system && system->numNodes() > 1 &&
        system->numDevices() == numDevices)
      for (int32_t stages = system->numNodes(); stages >= 2; stages /= 2)
        for (double slack : {0.0, kHierarchicalLocalitySlack})
          addStart("hierarchical " + std::to_string(stages) + " nodes" +
                       (slack > 0 ? " local" : ""),
                   placeHierarchical(graph, *system, stages, slack));
  }
  // The first of the least makespans: the policy's own on a tie.
  placed.best = static_cast<size_t>(
      std::min_element(placed.starts.begin(), placed.starts.end(),
                       [](const BudgetStart &a, const BudgetStart &b) {
                         return a.makespan < b.makespan;
                       }) -
      placed.starts.begin());
  placed.assignment = std::move(assignments[placed.best]);
  placed.makespan = placed.starts[placed.best].makespan;

  if (budgeted) {
    SearchOptions search;
    search.seed = options.heuristic.seed;
    search.maxEvaluations = options.evaluations;
    // The time left after the starts (at least a millisecond, so that a
    // budget the starts used up still reads as a budget).
    if (options.seconds > 0)
      search.timeBudgetSeconds =
          std::max(1e-3, options.seconds - secondsSince(begin));
    search.targetMakespan = options.targetMakespan;
    std::optional<SearchResult> refined =
        refinePlacement(judge, placed.assignment, search, error);
    if (!refined)
      return std::nullopt;
    placed.assignment = refined->assignment;
    placed.makespan = refined->makespan;
    placed.refinement = std::move(refined);
  }
  placed.seconds = secondsSince(begin);
  return placed;
}

std::string
doppler::placement::describeBudgetedPlacement(const BudgetedPlacement &placed) {
  std::string text;
  for (size_t i = 0; i < placed.starts.size(); ++i) {
    if (i)
      text += ", ";
    text += placed.starts[i].name + " " +
            formatMakespan(placed.starts[i].makespan);
    if (i == placed.best && placed.starts.size() > 1)
      text += " (best)";
  }
  if (const std::optional<SearchResult> &refined = placed.refinement) {
    char tail[96];
    std::snprintf(tail, sizeof tail, " in %lld run%s, %.2f s",
                  static_cast<long long>(refined->evaluations),
                  refined->evaluations == 1 ? "" : "s", refined->seconds);
    text += "; refined " + formatMakespan(refined->initialMakespan) + " -> " +
            formatMakespan(refined->makespan) + tail;
  }
  return text;
}
