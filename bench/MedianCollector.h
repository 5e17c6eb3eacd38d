//===- MedianCollector.h - Keep benchmark medians for ratios ----*- C++ -*-===//
//
// A console reporter that also remembers each benchmark's median times, so a
// program can print ratios against a baseline measured in the same run.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_BENCH_MEDIANCOLLECTOR_H
#define DOPPLER_BENCH_MEDIANCOLLECTOR_H

#include <benchmark/benchmark.h>

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

} // namespace doppler::bench

#endif // DOPPLER_BENCH_MEDIANCOLLECTOR_H
