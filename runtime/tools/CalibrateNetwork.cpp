//===- CalibrateNetwork.cpp - The network between ranks, timed ------------===//
//
// CalibrateNetwork.h.
//
//===----------------------------------------------------------------------===//

#include "CalibrateNetwork.h"

#include "CalibrateBench.h"

#include "doppler/runtime/CpuBackend.h"
#include "doppler/runtime/Executor.h"

#include <algorithm>
#include <numeric>

namespace doppler::runtime::calibrate {

namespace {

/// The median hop of `elements` f32 values from device 0 to device 1 and
/// back (CalibrateNetwork.h): half the round trip on rank 0's clock, less
/// the middle task's duration.
Result<double> timeHop(Executor &executor, std::mt19937_64 &generator,
                       int repeat, int64_t elements) {
  Bench bench(generator);
  TaskGraph &graph = bench.graph;
  ValueId x = bench.input(0, {elements});
  ValueId produced =
      *graph.addEinsum(0, "i->i", JoinKind::Neg, std::nullopt, {x});
  ValueId there = *graph.addTransfer(produced, 1);
  ValueId middle =
      *graph.addEinsum(1, "i->i", JoinKind::Neg, std::nullopt, {there});
  ValueId back = *graph.addTransfer(middle, 0);
  ValueId consumer =
      *graph.addEinsum(0, "i->i", JoinKind::Neg, std::nullopt, {back});
  if (Status status = graph.markOutput(consumer); !status)
    return status;
  return medianOverRuns(executor, bench, repeat, [&](const RunResult &run) {
    const TaskTiming &first = run.tasks[produced], &last = run.tasks[consumer],
                     &turn = run.tasks[middle];
    double trip = (last.start - first.end) - (turn.end - turn.start);
    return std::max(trip, 0.0) / 2;
  });
}

} // namespace

Result<NetworkFigure> measureNetwork(const std::shared_ptr<Transport> &transport,
                                     std::mt19937_64 &generator, int repeat,
                                     int64_t largestBytes) {
  int ranks = transport->ranks();
  if (ranks < 2)
    return Status::failure("timing the network needs at least 2 ranks, got " +
                           std::to_string(ranks));
  // One device per rank: device r on rank r; only ranks 0 and 1 send.
  std::vector<int> owners(static_cast<size_t>(ranks));
  std::iota(owners.begin(), owners.end(), 0);
  transport->setDeviceRanks(std::move(owners));
  CpuBackendOptions cpu;
  cpu.numDevices = ranks;
  Result<std::unique_ptr<Backend>> backend = createCpuBackend(cpu);
  if (!backend)
    return backend.status();
  ExecutorOptions options;
  options.transport = transport;
  Executor executor(std::move(*backend), options);

  // The first round trips of a fresh executor and transport are slow (2 ms
  // instead of 0.2 on the 2-core VM: connections, first-touch pages): a
  // discarded round of 4-byte hops first.
  if (Result<double> warmUp = timeHop(executor, generator, repeat, 1); !warmUp)
    return warmUp.status();
  NetworkFigure figure;
  std::vector<int64_t> sizes = {4, int64_t(64) << 10, int64_t(1) << 20};
  if (largestBytes > sizes.back())
    sizes.push_back(largestBytes);
  for (int64_t bytes : sizes) {
    Result<double> hop =
        timeHop(executor, generator, repeat, std::max<int64_t>(bytes / 4, 1));
    if (!hop)
      return hop.status();
    figure.samples.push_back({std::max<int64_t>(bytes / 4, 1) * 4, *hop});
  }
  figure.latency = figure.samples.front().hop;
  figure.bandwidth = fitBandwidth(figure.samples, figure.latency);
  return figure;
}

} // namespace doppler::runtime::calibrate
