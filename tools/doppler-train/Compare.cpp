//===- Compare.cpp - doppler-train --compare and --baseline ---------------===//
//
// The comparisons: a model against the two heuristics it has priors on
// (critical path and join-aware) on every (graph, device count) pair:
// makespans, ratios and geometric means; with --capacity-factor, under
// memory capacities, before and after fitting. And the learned baselines
// (GDP, Placeto) trained per pair against critical path.
//
//===----------------------------------------------------------------------===//

#include "TrainTool.h"

#include "Doppler/Placement/Heuristics.h"
#include "Doppler/Placement/Learning/Baselines.h"
#include "Doppler/Placement/Learning/DualPolicy.h"
#include "Doppler/Placement/MemoryFit.h"
#include "Doppler/Placement/Simulator.h"
#include "Doppler/Placement/System.h"
#include "Doppler/Support/ParseNumber.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

using namespace doppler::placement;

namespace doppler_train {
namespace {

/// A placement judged under memory capacities: its relative overflow (sum
/// over devices of (peak - capacity) / capacity where positive), then
/// fitted (fitToMemory) and the fitted placement's makespan.
struct MemoryJudgement {
  double overflow = 0;
  bool fits = false;
  double fittedMakespan = 0;
};

MemoryJudgement judgeUnderMemory(const Graph &graph, const System &system,
                                 const std::vector<DeviceId> &placement,
                                 uint64_t seed) {
  MemoryFitOptions options;
  options.seed = seed;
  std::string error;
  std::optional<MemoryFitResult> fit =
      fitToMemory(graph, system, placement, options, &error);
  if (!fit)
    fail(error);
  // The fit simulated the input first: its peaks are the overflow's.
  MemoryJudgement judgement;
  for (DeviceId d = 0; d < system.numDevices(); ++d)
    judgement.overflow +=
        std::max(0.0, fit->initialPeakMemory[d] - system.memoryCapacity(d)) /
        system.memoryCapacity(d);
  judgement.fits = fit->feasible;
  judgement.fittedMakespan = fit->makespan;
  return judgement;
}

/// --compare with --capacity-factor: critical path and the learned policy
/// (which reads the capacities if it is memory-aware) under memory.
int compareUnderMemory(const Arguments &args, LearnedPolicy &policy,
                       const std::vector<TrainingGraph> &graphs,
                       const std::vector<int32_t> &devices) {
  std::printf("%-44s %4s %10s %10s %14s %14s %8s\n", "graph", "D", "cp-over",
              "over", "cp-fitted", "fitted", "ratio");
  int64_t pairs = 0, cpOver = 0, learnedOver = 0, cpFits = 0, learnedFits = 0;
  int64_t bothFit = 0;
  double cpOverSum = 0, learnedOverSum = 0, logRatio = 0;
  std::string error;
  for (const TrainingGraph &g : graphs)
    for (int32_t d : devices) {
      const double least = leastHeuristicPeak(g.graph, d);
      if (least <= 0)
        fail(g.name + ": --capacity-factor needs graphs with output bytes");
      std::optional<System> system =
          SystemBuilder(d)
              .setMemoryCapacities(
                  std::vector<double>(d, args.capacityFactor * least))
              .build(&error);
      if (!system)
        fail(error);
      PlaceOptions options;
      options.memoryCapacities = system->memoryCapacities();
      options.samples = static_cast<int32_t>(args.samples);
      options.seed = static_cast<uint64_t>(args.seed);
      std::optional<PlacementResult> learned =
          policy.place(g.graph, d, options, &error);
      if (!learned)
        fail(g.name + ": " + error);
      const uint64_t seed = static_cast<uint64_t>(args.seed);
      MemoryJudgement cp =
          judgeUnderMemory(g.graph, *system, placeCriticalPath(g.graph, d), seed);
      MemoryJudgement ours =
          judgeUnderMemory(g.graph, *system, learned->assignment, seed);
      double ratio = ours.fittedMakespan / cp.fittedMakespan;
      std::printf("%-44s %4d %10.4f %10.4f %14.6g %14.6g %8.4f%s\n",
                  g.name.c_str(), d, cp.overflow, ours.overflow,
                  cp.fittedMakespan, ours.fittedMakespan, ratio,
                  ours.fits ? "" : " (no fit)");
      ++pairs;
      cpOver += cp.overflow > 0;
      learnedOver += ours.overflow > 0;
      cpOverSum += cp.overflow;
      learnedOverSum += ours.overflow;
      cpFits += cp.fits;
      learnedFits += ours.fits;
      if (cp.fits && ours.fits) {
        ++bothFit;
        logRatio += std::log(ratio);
      }
    }
  std::printf("summary: %lld pairs at %g x the least heuristic peak; before "
              "fitting, critical path overflows on %lld (mean relative "
              "overflow %.4f), learned on %lld (%.4f); fitted: critical path "
              "fits %lld, learned %lld; where both fit (%lld), geometric-mean "
              "fitted makespan ratio learned / critical path %.4f\n",
              static_cast<long long>(pairs), args.capacityFactor,
              static_cast<long long>(cpOver), cpOverSum / pairs,
              static_cast<long long>(learnedOver), learnedOverSum / pairs,
              static_cast<long long>(cpFits),
              static_cast<long long>(learnedFits),
              static_cast<long long>(bothFit),
              bothFit ? std::exp(logRatio / bothFit) : 1.0);
  return 0;
}

} // namespace

int compare(const Arguments &args) {
  std::string error;
  std::unique_ptr<LearnedPolicy> policy =
      args.compare == "default" ? LearnedPolicy::loadDefault(&error)
                                : LearnedPolicy::load(args.compare, &error);
  if (!policy)
    fail(error);
  std::vector<TrainingGraph> graphs = loadGraphs(args);
  if (graphs.empty())
    fail("no graphs to compare on");
  std::vector<int32_t> devices = parseDevices(args.devices.empty() ? "4" : args.devices);
  if (args.capacityFactor > 0)
    return compareUnderMemory(args, *policy, graphs, devices);
  // Each pair against both heuristics the policy has priors on; "best" is
  // the better of the two on that pair (so its ratio is the learned
  // policy's gain over choosing the right heuristic per graph).
  std::printf("%-44s %4s %14s %14s %14s %8s %8s", "graph", "D",
              "critical-path", "join-aware", "learned", "/cp", "/best");
  if (args.samples > 0)
    std::printf(" %14s %8s",
                ("best-of-" + std::to_string(args.samples)).c_str(), "/best");
  std::printf("\n");
  struct Tally {
    int64_t noWorseCp = 0, noWorseBest = 0, above5 = 0;
    double logCp = 0, logBest = 0, worst = 0;
    void add(double makespan, double critical, double best) {
      noWorseCp += makespan <= critical * (1 + 1e-12);
      noWorseBest += makespan <= best * (1 + 1e-12);
      const double ratio = makespan / best;
      above5 += ratio > 1.05;
      logCp += std::log(makespan / critical);
      logBest += std::log(ratio);
      worst = std::max(worst, ratio);
    }
  } greedyTally, sampledTally;
  int64_t pairs = 0, joinBetter = 0;
  double greedySeconds = 0;
  PlaceOptions greedyOptions;
  greedyOptions.horizonNodes = static_cast<int32_t>(args.horizon);
  for (const TrainingGraph &g : graphs)
    for (int32_t d : devices) {
      Simulator simulator(g.graph, d);
      const double critical = simulator.run(placeCriticalPath(g.graph, d));
      const double join = simulator.run(placeJoinAware(g.graph, d));
      const double best = std::min(critical, join);
      joinBetter += join < critical;
      const auto begin = std::chrono::steady_clock::now();
      std::optional<PlacementResult> greedy =
          policy->place(g.graph, d, greedyOptions, &error);
      if (!greedy)
        fail(g.name + ": " + error);
      greedySeconds += std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - begin)
                           .count();
      std::printf("%-44s %4d %14.6g %14.6g %14.6g %8.4f %8.4f", g.name.c_str(),
                  d, critical, join, greedy->makespan,
                  greedy->makespan / critical, greedy->makespan / best);
      ++pairs;
      greedyTally.add(greedy->makespan, critical, best);
      if (args.samples > 0) {
        PlaceOptions options = greedyOptions;
        options.samples = static_cast<int32_t>(args.samples);
        options.seed = static_cast<uint64_t>(args.seed);
        std::optional<PlacementResult> sampled =
            policy->place(g.graph, d, options, &error);
        if (!sampled)
          fail(g.name + ": " + error);
        std::printf(" %14.6g %8.4f", sampled->makespan,
                    sampled->makespan / best);
        sampledTally.add(sampled->makespan, critical, best);
      }
      std::printf("\n");
    }
  auto percent = [&](int64_t count) { return 100.0 * count / pairs; };
  std::printf("summary: %lld pairs; greedy no worse than critical path on "
              "%lld (%.1f%%), geometric-mean ratio %.4f\n",
              static_cast<long long>(pairs),
              static_cast<long long>(greedyTally.noWorseCp),
              percent(greedyTally.noWorseCp),
              std::exp(greedyTally.logCp / pairs));
  std::printf("against the better heuristic (join-aware better on %lld): "
              "greedy no worse on %lld (%.1f%%), geometric-mean ratio %.4f, "
              "worst %.4f, above 1.05x on %lld\n",
              static_cast<long long>(joinBetter),
              static_cast<long long>(greedyTally.noWorseBest),
              percent(greedyTally.noWorseBest),
              std::exp(greedyTally.logBest / pairs), greedyTally.worst,
              static_cast<long long>(greedyTally.above5));
  if (args.samples > 0)
    std::printf("best-of-%lld: no worse than critical path on %lld (%.1f%%), "
                "ratio %.4f; against the better heuristic no worse on %lld "
                "(%.1f%%), geometric-mean ratio %.4f, worst %.4f\n",
                static_cast<long long>(args.samples),
                static_cast<long long>(sampledTally.noWorseCp),
                percent(sampledTally.noWorseCp),
                std::exp(sampledTally.logCp / pairs),
                static_cast<long long>(sampledTally.noWorseBest),
                percent(sampledTally.noWorseBest),
                std::exp(sampledTally.logBest / pairs), sampledTally.worst);
  std::printf("greedy placements took %.3f s in all\n", greedySeconds);
  return 0;
}

/// --baseline: GDP or Placeto trained per (graph, D) pair for --episodes
/// episodes; a line per pair, a summary, and with --log one JSON line per
/// episode (the sample-efficiency curve).
int trainBaselines(const Arguments &args) {
  std::optional<BaselineKind> kind = parseBaselineKind(args.baseline);
  if (!kind)
    fail("--baseline must be gdp or placeto, not '" + args.baseline + "'");
  if (!args.stages.empty())
    fail("--baseline trains its own model: --stages does not apply");
  if (args.episodes.empty())
    fail("--baseline needs --episodes N");
  std::optional<int64_t> episodes = doppler::parseInt64(args.episodes);
  if (!episodes || *episodes < 1 ||
      *episodes > std::numeric_limits<int32_t>::max())
    fail("--baseline: --episodes needs one whole number >= 1, got '" +
         args.episodes + "'");
  std::vector<TrainingGraph> graphs = loadGraphs(args);
  if (graphs.empty())
    fail("no graphs to train on");
  std::vector<int32_t> devices =
      parseDevices(args.devices.empty() ? "4" : args.devices);
  std::FILE *log = nullptr;
  if (!args.log.empty() && !(log = std::fopen(args.log.c_str(), "w")))
    fail("cannot write '" + args.log + "': " + std::strerror(errno));
  const char *name = baselineName(*kind);
  std::printf("%-44s %4s %14s %14s %8s %9s\n", "graph", "D", "critical-path",
              name, "ratio", "seconds");
  double logRatio = 0;
  int64_t pairs = 0;
  for (const TrainingGraph &g : graphs)
    for (int32_t d : devices) {
      BaselineOptions options;
      options.kind = *kind;
      options.episodes = static_cast<int32_t>(*episodes);
      options.seed = static_cast<uint64_t>(args.seed);
      if (log)
        options.progress = [&](const BaselineCurvePoint &point) {
          std::fprintf(log,
                       "{\"graph\":\"%s\",\"devices\":%d,\"baseline\":\"%s\","
                       "\"episode\":%d,\"seconds\":%.6f,\"makespan\":%.17g,"
                       "\"best_makespan\":%.17g}\n",
                       g.name.c_str(), d, name, point.episode, point.seconds,
                       point.makespan, point.bestMakespan);
        };
      std::string error;
      std::optional<BaselineResult> result =
          trainBaseline(g.graph, d, options, &error);
      if (!result)
        fail(g.name + ": " + error);
      Simulator simulator(g.graph, d);
      double critical = simulator.run(placeCriticalPath(g.graph, d));
      double ratio = result->makespan / critical;
      std::printf("%-44s %4d %14.6g %14.6g %8.4f %9.2f\n", g.name.c_str(), d,
                  critical, result->makespan, ratio, result->seconds);
      logRatio += std::log(ratio);
      ++pairs;
    }
  if (log)
    std::fclose(log);
  std::printf("summary: %lld pairs; %s best / critical path, geometric mean "
              "%.4f (%lld episodes each)\n",
              static_cast<long long>(pairs), name,
              std::exp(logRatio / static_cast<double>(pairs)),
              static_cast<long long>(*episodes));
  return 0;
}

} // namespace doppler_train
