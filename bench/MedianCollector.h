//===- MedianCollector.h - Keep benchmark medians for ratios ----*- C++ -*-===//
//
// A console reporter that also remembers each benchmark's median times, so a
// program can print ratios against a baseline measured in the same run.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_BENCH_MEDIANCOLLECTOR_H
#define DOPPLER_BENCH_MEDIANCOLLECTOR_H

#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace doppler::bench {

class MedianCollector : public benchmark::ConsoleReporter {
public:
  /// Median real and CPU time per iteration, in the benchmark's time unit.
  struct Medians {
    double real = 0, cpu = 0;
  };

  void ReportRuns(const std::vector<Run> &runs) override {
    for (const Run &run : runs)
      if (run.run_type == Run::RT_Aggregate && run.aggregate_name == "median")
        medians[run.run_name.function_name] = {run.GetAdjustedRealTime(),
                                               run.GetAdjustedCPUTime()};
    ConsoleReporter::ReportRuns(runs);
  }

  /// The medians of `name` (zeros when it did not run).
  Medians get(const std::string &name) const {
    auto it = medians.find(name);
    return it == medians.end() ? Medians() : it->second;
  }

  std::map<std::string, Medians> medians;
};

/// Runs the registered benchmarks (after benchmark::Initialize) through
/// `reporter`. Returns false, after saying why, on unknown arguments.
inline bool runBenchmarks(int &argc, char **argv, MedianCollector &reporter) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv))
    return false;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return true;
}

/// Registers "KIND/WORKLOAD" for every (kind name, function) of `kinds` and
/// every element of `workloads` (which outlive the run and have a `name`),
/// the function getting a pointer to its workload: microseconds,
/// `repetitions` repetitions of at least `minTime` seconds, aggregates only.
template <typename Kinds, typename Workloads>
void registerPerWorkload(const Kinds &kinds, const Workloads &workloads,
                         double minTime, int repetitions) {
  for (const auto &workload : workloads)
    for (const auto &[kind, fn] : kinds)
      benchmark::RegisterBenchmark(
          (std::string(kind) + "/" + workload.name).c_str(), fn, &workload)
          ->Unit(benchmark::kMicrosecond)
          ->MinTime(minTime)
          ->Repetitions(repetitions)
          ->ReportAggregatesOnly(true);
}

/// Prints a table of the median real times of registerPerWorkload's
/// benchmarks: a row per workload, a column per kind, each "value
/// (ratiox)" against the `baseline` kind of the same workload, the value
/// `valueWidth` wide with `valuePrecision` decimals, the ratio with
/// `ratioPrecision`.
template <typename Kinds, typename Workloads>
void printRatioTable(const MedianCollector &reporter, const Kinds &kinds,
                     const Workloads &workloads, const char *baseline,
                     int valueWidth, int valuePrecision, int ratioPrecision) {
  std::printf("%-28s", "graph");
  for (const auto &[kind, fn] : kinds)
    std::printf(" %*s", valueWidth + 10, kind);
  std::printf("\n");
  for (const auto &workload : workloads) {
    auto median = [&](const char *kind) {
      return reporter.get(std::string(kind) + "/" + workload.name).real;
    };
    const double base = median(baseline);
    std::printf("%-28s", workload.name.c_str());
    for (const auto &[kind, fn] : kinds) {
      double value = median(kind);
      std::printf(" %*.*f (%6.*fx)", valueWidth, valuePrecision, value,
                  ratioPrecision, base > 0 ? value / base : 0.0);
    }
    std::printf("\n");
  }
}

} // namespace doppler::bench

#endif // DOPPLER_BENCH_MEDIANCOLLECTOR_H
