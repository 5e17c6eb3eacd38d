//===- doppler-calibrate.cpp - A system description measured on this host -===//
//
// Times the CPU backend through the executor (so every figure includes what
// doppler-run pays per task) and writes a system description in the JSON
// format of docs/SystemDescription.md, which doppler-annotate-costs{system=
// FILE} and doppler-pipeline{system=FILE} read:
//
//   launch_overhead     the median step (one task's start to the next's)
//                       of a chain of K one-element einsums on one device,
//                       the others idle, as every overhead (dispatch +
//                       hand-off per task; a median, so that another
//                       process's scheduler slice is not spread over the
//                       chain: CalibrateBench.h, medianStep);
//   peak_flops f32/f64  mul/add contractions of 2 N^3 FLOPs in four layouts
//                       (ij,jk->ik; ij,kj->ik; bij,bjk->bik; sd,dhe->hse),
//                       two each: FLOPs / (time - 8 launch_overhead);
//   memory_bandwidth    32 elementwise adds of M-element f32 tensors, over
//                       8 pairs of inputs in turn (streamed, not cached):
//                       32 * 12 M bytes / (time - 32 launch_overhead);
//   join_throughput     per join kind (all but identity), 128 elementwise
//                       einsums of J cache-resident f32 elements:
//                       128 J / (time - 128 launch_overhead);
//   links latency       from the end of a one-element producer on device 0
//                       to the start of its consumer on device 1 (the copy
//                       and the idle consumer's wake-up);
//   links bandwidth     the same for a B-byte value: B / (time - latency).
//   hand_off            the worker's idle time between dependent tasks in
//                       a model-like graph, less that between queued
//                       independent tasks, which launch_overhead and every
//                       kind's overhead then hold instead of a chain's
//                       (CalibrateKernels.h: HandOffFigure).
//
// The einsums of one figure are independent, so a device's worker runs them
// back to back. Each run is timed per device, from its first task's start
// to its last task's end: how late a sleeping worker woke up (on a VM, up
// to milliseconds) says nothing about the device's rate.
//
// Devices share the host: doppler-run gives each virtual device a worker
// thread, and D of them may outnumber the cores or share a core's FPU and
// the memory bus. So every compute rate is measured with the same kernel
// running on all D devices at once (--alone: on one device, the rest
// idle), i.e. the rate a device gets while the others are busy too, which
// is what a well-balanced placement sees most of the time. The per-task
// overheads and the hand-off are timed on one device, the others idle
// (kOverheadDevices, CalibrateBench.h): they matter for small tasks, which
// the pipeline keeps on one device. Links are timed alone (one transfer at
// a time).
//
// Each figure is the median of --repeat runs after a warm-up. Inputs are
// seeded (mt19937_64, --seed). The figures describe this host as the CPU
// backend sees it, with the link model off (doppler-run's default): run
// doppler-run with the same --devices and no --link-* options.
//
// Under mpirun (R ranks, the nodes of runs across processes), every rank
// measures its own D devices, all ranks at once so that the host's load is
// that of R x D busy devices, and then the network between ranks 0 and 1
// (CalibrateNetwork.h: round trips through the executor and the MPI
// transport, messages of several sizes). Rank 0 writes a description of R
// nodes of D devices (its own figures) joined by that network, one NIC per
// node (each rank's progress thread moves one message at a time). The
// ranks must be given the same command line (hashes compared: a mismatch
// is an error on every rank).
//
//   [mpirun -np R] doppler-calibrate [-o system.json] [--devices D]
//                     [--repeat N] [--alone] [--gemm-size N]
//                     [--elementwise-elements M] [--join-elements J]
//                     [--transfer-bytes B] [--seed S] [--no-grids] [--json]
//
//===----------------------------------------------------------------------===//

#include "ArgParser.h"
#include "CalibrateBench.h"
#include "CalibrateKernels.h"
#include "CalibrateNetwork.h"
#include "MpiRun.h"
#include "RunSupport.h"

#include "Doppler/Support/Limits.h"
#include "Doppler/Support/NumberFormat.h"

#include <nlohmann/json.hpp>

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <new>
#include <optional>
#include <random>
#include <thread>

using namespace doppler;
using namespace doppler::runtime;
using namespace doppler::runtime::calibrate;

namespace {

/// Calibrates across processes when started by mpirun.
tools::MpiRun mpi;

int fail(const std::string &message) {
  mpi.failIfActive("doppler-calibrate", message); // ends every rank
  std::cerr << "doppler-calibrate: error: " << message << "\n";
  return 1;
}

struct Options {
  std::string output;
  int64_t devices = 2;
  int64_t repeat = 7;
  bool alone = false;
  int64_t gemmSize = 512;
  int64_t elementwise = int64_t(1) << 20;
  int64_t joinElements = int64_t(1) << 14;
  int64_t transferBytes = int64_t(8) << 20;
  int64_t seed = 0;
  bool noGrids = false;
  bool json = false;
};

/// Reads the command line into `options`; an exit code when the tool is
/// done (--help) or the arguments are wrong.
std::optional<int> parseArguments(int argc, char **argv, Options &options) {
  using namespace tools;
  // Counts of at least 1 (--seed: 0), all refused with the same words.
  auto count = [](std::string name, int64_t *target, std::string valueName,
                  std::string help, double minimum = 1) {
    return integerOption({std::move(name)}, target, std::move(valueName),
                         std::move(help), "needs a positive integer", minimum);
  };
  ArgParser parser(
      "doppler-calibrate",
      {
          textOption({"-o", "--output"}, &options.output, "system.json",
                     "write the system description (JSON) to this file",
                     "needs a file name"),
          count("--devices", &options.devices, "D",
                "devices of the description (default 2)"),
          count("--repeat", &options.repeat, "N",
                "timed runs per figure; the median is kept (default 7)"),
          flagOption({"--alone"}, &options.alone,
                     "time compute figures on one device, the rest idle"),
          count("--gemm-size", &options.gemmSize, "N",
                "N of the N x N x N contractions (default 512)"),
          count("--elementwise-elements", &options.elementwise, "M",
                "elements of the bandwidth adds (default 1048576)"),
          count("--join-elements", &options.joinElements, "J",
                "elements per join throughput einsum (default 16384)"),
          count("--transfer-bytes", &options.transferBytes, "B",
                "bytes of the link bandwidth copy (default 8388608)"),
          count("--seed", &options.seed, "S", "seed of the inputs (default 0)",
                0),
          flagOption({"--no-grids"}, &options.noGrids,
                     "skip the convolutions' and contractions' GEMM-shape "
                     "grids (quicker; one rate for each)"),
          flagOption({"--json"}, &options.json,
                     "print the figures as JSON instead of text"),
      });
  if (std::optional<int> exitCode = parser.parse(argc, argv))
    return exitCode;
  if (options.devices > kMaxDevices)
    return fail("--devices " + std::to_string(options.devices) +
                " is more than the limit of " + std::to_string(kMaxDevices));
  // Sizes are capped so that every tensor the benchmarks allocate stays at
  // most 1 GiB (f64): far above what calibration needs, and refused up front
  // instead of failing an allocation (or running for days) later.
  struct Cap {
    const char *name;
    int64_t value, limit;
  };
  for (const Cap &cap : {Cap{"--gemm-size", options.gemmSize, 8192},
                         Cap{"--elementwise-elements", options.elementwise,
                             int64_t(1) << 27},
                         Cap{"--join-elements", options.joinElements,
                             int64_t(1) << 27},
                         Cap{"--transfer-bytes", options.transferBytes,
                             int64_t(1) << 30}})
    if (cap.value > cap.limit)
      return fail(std::string(cap.name) + " " + std::to_string(cap.value) +
                  " is more than the limit of " + std::to_string(cap.limit));
  return std::nullopt;
}

/// Every rate below times a batch of independent tasks per device (kTasks
/// or a multiple): a device's worker runs them back to back, so a rate is
/// not at the mercy of one task's timing.
constexpr int kTasks = 8;

/// How long the link measurement's producer runs: past the 1 ms for which
/// the executor keeps an idle compute worker spinning at a run's start.
constexpr double kParkedAfterSeconds = 3e-3;

/// What the calibration measured (the figures of the file comment).
struct Figures {
  double overhead = 0;
  double peak[2] = {0, 0}; // f32, f64
  double bandwidth = 0;
  std::vector<std::pair<JoinKind, double>> joinRates;
  double latency = 0;
  double linkBandwidth = 0;
  /// The hops the link figures were fitted through.
  std::vector<HopSample> linkHops;
  std::vector<KernelFigure> kernels;
  HandOffFigure handOff;
  /// Under mpirun with 2 ranks or more: the ranks (nodes) and the network.
  int ranks = 1;
  std::optional<NetworkFigure> network;
};

/// Times benches on the CPU backend's devices; each measure*() sets one
/// group of figures, in the order main() calls them (they draw their
/// inputs from one seeded generator).
class Calibrator {
public:
  Calibrator(Executor &executor, const Options &options, int busy)
      : executor_(executor), options_(options),
        repeat_(static_cast<int>(options.repeat)), busy_(busy),
        generator_(static_cast<uint64_t>(options.seed)) {}

  /// Per-task overhead: a chain of tiny tasks on kOverheadDevices devices.
  Status measureOverhead(Figures &figures) {
    constexpr int kChain = 200;
    Bench bench(generator_);
    for (int d = 0; d < kOverheadDevices; ++d) {
      ValueId last = bench.input(d, {1});
      for (int k = 0; k < kChain; ++k)
        last = *bench.graph.addEinsum(d, "i->i", JoinKind::Neg, std::nullopt,
                                      {last});
      if (Status status = bench.graph.markOutput(last); !status)
        return status;
    }
    Result<double> step = timeChainSteps(executor_, bench, repeat_);
    if (!step)
      return step.status();
    figures.overhead = *step;
    return Status();
  }

  /// Contraction rate for f32 and f64: 2 N^3 FLOPs in each of four layouts
  /// that blocked models use (plain, transposed operand, batched, output
  /// with permuted indices); the runtime's kernel reaches its peak on the
  /// first and a little less on the others, which is what placed programs
  /// mostly run. Two of each per device.
  Status measureContractions(Figures &figures) {
    struct Layout {
      const char *spec;
      std::vector<Shape> shapes;
      double flops;
    };
    int64_t n = options_.gemmSize, quarter = std::max<int64_t>(n / 4, 1);
    double cube = 2.0 * n * n * n, batched = 2.0 * n * n * 4 * quarter;
    const Layout layouts[] = {
        {"ij,jk->ik", {{n, n}, {n, n}}, cube},
        {"ij,kj->ik", {{n, n}, {n, n}}, cube},
        {"bij,bjk->bik", {{4, n, quarter}, {4, quarter, n}}, batched},
        {"sd,dhe->hse", {{n, n}, {n, 4, quarter}}, batched}};
    double contractionFlops = 0;
    for (const Layout &layout : layouts)
      contractionFlops += layout.flops;
    for (int precision = 0; precision < 2; ++precision) {
      ElementType type = precision == 0 ? ElementType::F32 : ElementType::F64;
      Result<double> time = timeOnBusyDevices([&](Bench &bench, int d) {
        for (const Layout &layout : layouts) {
          ValueId a = bench.input(d, layout.shapes[0], type);
          ValueId b = bench.input(d, layout.shapes[1], type);
          auto contract = [&] {
            return bench.graph.addEinsum(d, layout.spec, JoinKind::Mul,
                                         AggKind::Add, {a, b});
          };
          if (Status status = addIndependent(bench, 2, contract); !status)
            return status;
        }
        return Status();
      });
      if (!time)
        return time.status();
      figures.peak[precision] =
          2 * contractionFlops /
          computeTime(*time, 2 * std::size(layouts) * figures.overhead);
    }
    return Status();
  }

  /// Memory bandwidth: an elementwise add (two reads, one write).
  Status measureBandwidth(Figures &figures) {
    int64_t m = options_.elementwise;
    // kTasks pairs of inputs, each read by 4 tasks in turn: streamed from
    // memory (the other pairs evict it from the caches in between), not
    // from a cache that repeated reads of the same tensors would warm.
    constexpr int kAdds = 4 * kTasks;
    Result<double> time = timeOnBusyDevices([&](Bench &bench, int d) {
      std::vector<std::pair<ValueId, ValueId>> pairs;
      for (int k = 0; k < kTasks; ++k)
        pairs.emplace_back(bench.input(d, {m}), bench.input(d, {m}));
      int next = 0;
      return addIndependent(bench, kAdds, [&] {
        auto [a, b] = pairs[next++ % pairs.size()];
        return bench.graph.addEinsum(d, "i,i->i", JoinKind::Add, std::nullopt,
                                     {a, b});
      });
    });
    if (!time)
      return time.status();
    figures.bandwidth =
        kAdds * 12.0 * m / computeTime(*time, kAdds * figures.overhead);
    return Status();
  }

  /// Join throughputs: independent elementwise einsums over one small
  /// input (cache resident, so the join and not memory sets the pace),
  /// inputs in [0.5, 2) where every join is finite and off its special-case
  /// paths.
  Status measureJoins(Figures &figures) {
    constexpr int kJoinTasks = 16 * kTasks;
    for (unsigned k = 0; k < kNumJoinKinds; ++k) {
      JoinKind join = static_cast<JoinKind>(k);
      if (join == JoinKind::Identity)
        continue; // a copy: what memory_bandwidth measures
      int64_t m = options_.joinElements;
      Result<double> time = timeOnBusyDevices([&](Bench &bench, int d) {
        std::vector<ValueId> operands = {
            bench.input(d, {m}, ElementType::F32, 0.5, 2.0)};
        if (joinArity(join) == 2)
          operands.push_back(bench.input(d, {m}, ElementType::F32, 0.5, 2.0));
        std::string spec = joinArity(join) == 2 ? "i,i->i" : "i->i";
        return addIndependent(bench, kJoinTasks, [&] {
          return bench.graph.addEinsum(d, spec, join, std::nullopt, operands,
                                       0.5);
        });
      });
      if (!time)
        return time.status();
      double applications = static_cast<double>(kJoinTasks) * m;
      double seconds = computeTime(*time, kJoinTasks * figures.overhead);
      figures.joinRates.emplace_back(join, applications / seconds);
    }
    return Status();
  }

  /// Per kind of task, its fixed cost and its kernel's own rate
  /// (CalibrateKernels.h).
  Status measureKernelCosts(Figures &figures) {
    Result<std::vector<KernelFigure>> kernels = measureKernels(
        executor_, generator_, busy_, repeat_, figures.peak[0],
        double(options_.gemmSize), !options_.noGrids, figures.bandwidth);
    if (!kernels)
      return kernels.status();
    figures.kernels = std::move(*kernels);
    return Status();
  }

  /// The hand-off (last: the rates above take off the chain's overhead):
  /// each overhead becomes a queued task's (less the chain's gap less a
  /// fan's, at least the fan's: under load that can exceed a step timed
  /// apart), and a task its device waited for pays model's gap - fan's.
  Status measureHandOffs(Figures &figures) {
    Result<HandOffFigure> handOff =
        measureHandOff(executor_, generator_, repeat_);
    if (!handOff)
      return handOff.status();
    const double least = handOff->queued, rebate = handOff->rebate();
    figures.handOff = *handOff;
    figures.overhead = std::max(least, figures.overhead - rebate);
    for (KernelFigure &kernel : figures.kernels)
      kernel.overhead = std::max(least, kernel.overhead - rebate);
    return Status();
  }

  /// Links, one transfer at a time: hops from the end of a producer on
  /// device 0 to the start of its consumer on device 1 (parked), as the
  /// runtime makes them: 4 B and 64 KiB copied by the producer's worker
  /// right after its task (inlineCopyBytes: the hop is that copy on its
  /// core and the consumer's wake-up), 1 MiB and B bytes by the
  /// destination's copy worker (its wake-up, the copy, the consumer's
  /// wake-up), or by the producer's where no core is spare (largeCopies).
  /// Latency is the 4-byte hop; bandwidth the least-squares fit of the
  /// larger hops to latency + bytes / bandwidth (as between ranks).
  Status measureLinks(Figures &figures) {
    std::vector<int64_t> sizes = {4, int64_t(64) << 10, int64_t(1) << 20};
    if (options_.transferBytes > sizes.back())
      sizes.push_back(options_.transferBytes);
    for (int64_t bytes : sizes) {
      int64_t elements = std::max<int64_t>(bytes / 4, 1);
      Result<double> hop = timeHandOff(elements);
      if (!hop)
        return hop.status();
      figures.linkHops.push_back({elements * 4, *hop});
    }
    figures.latency = figures.linkHops.front().hop;
    figures.linkBandwidth = fitBandwidth(figures.linkHops, figures.latency);
    return Status();
  }

private:
  /// Times `add(bench, device)` placed on each of the busy devices at once.
  Result<double>
  timeOnBusyDevices(const std::function<Status(Bench &, int)> &add) {
    Bench bench(generator_);
    for (int d = 0; d < busy_; ++d)
      if (Status status = add(bench, d); !status)
        return status;
    return timeDevices(executor_, bench, repeat_);
  }

  /// Median seconds from the end of a producer of `elements` on device 0
  /// to the start of its consumer on device 1.
  Result<double> timeHandOff(int64_t elements) {
    Bench bench(generator_);
    // The producer keeps device 0 busy past the start spin of device 1's
    // idle worker (the executor's kStartSpin, 1 ms), so the value reaches a
    // parked worker, as it does in a placed program whenever the consumer's
    // device ran out of work: a copy produced at a run's start would find
    // it spinning and leave the wake-up out (measured on the 2-core VM:
    // 8-9 us that way against 35-70 us in placed programs' traces).
    ValueId produced =
        *bench.graph.addDelay(0, kParkedAfterSeconds, {}, {elements});
    ValueId moved = *bench.graph.addTransfer(produced, 1);
    // The hop a placed program pays: until the consumer on the other
    // device starts (its idle worker woken), not only until the copy ends.
    ValueId consumer =
        *bench.graph.addEinsum(1, "i->i", JoinKind::Neg, std::nullopt, {moved});
    if (Status status = bench.graph.markOutput(consumer); !status)
      return status;
    std::vector<double> samples;
    for (int run = 0; run <= repeat_; ++run) {
      Result<RunResult> result = executor_.run(bench.graph, bench.inputs);
      if (!result)
        return result.status();
      if (run > 0) // the first run is a warm-up
        samples.push_back(result->tasks[consumer].start -
                          result->tasks[produced].end);
    }
    std::nth_element(samples.begin(), samples.begin() + samples.size() / 2,
                     samples.end());
    return samples[samples.size() / 2];
  }

  Executor &executor_;
  const Options &options_;
  int repeat_;
  int busy_;
  std::mt19937_64 generator_;
};

/// Host memory the devices may share, in bytes: MemAvailable (what can be
/// allocated without swapping, caches included) rather than all physical
/// memory, which other processes and the kernel already hold part of. All
/// physical memory where /proc/meminfo is missing; 0 if neither is known.
double hostMemoryBytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key, unit;
  double kib = 0;
  while (meminfo >> key >> kib) {
    std::getline(meminfo, unit);
    if (key == "MemAvailable:" && kib > 0)
      return kib * 1024;
  }
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && pageSize > 0 ? static_cast<double>(pages) * pageSize
                                   : 0;
}

/// The ranks sharing this host: Open MPI's local size under mpirun, else
/// all of them (one host, as on a loopback).
int ranksOnThisHost(int ranks) {
  if (const char *local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE"))
    if (int count = std::atoi(local); count > 0)
      return count;
  return ranks;
}

/// The system description (docs/SystemDescription.md) of the figures.
nlohmann::json describeSystem(const Options &options, const Figures &figures) {
  // Each device on the host gets an equal share; 4 GB (the cpu presets'
  // figure) when the host does not say.
  const double host = hostMemoryBytes();
  const double memory =
      host > 0 ? host / (options.devices * ranksOnThisHost(figures.ranks))
               : 4e9;
  nlohmann::json throughputs = nlohmann::json::object();
  for (auto [join, rate] : figures.joinRates)
    throughputs[std::string(joinKindName(join))] = rate;
  nlohmann::json kernels = nlohmann::json::object();
  for (const KernelFigure &kernel : figures.kernels) {
    nlohmann::json entry = {{"overhead", kernel.overhead}};
    if (kernel.flops > 0)
      entry["flops"] = kernel.flops;
    if (kernel.halfSize > 0)
      entry["half_size"] = kernel.halfSize;
    if (kernel.gemvBandwidth > 0)
      entry["gemv_bandwidth"] = kernel.gemvBandwidth;
    if (kernel.gatherTime > 0)
      entry["gather_time"] = kernel.gatherTime;
    if (kernel.rowTime > 0)
      entry["row_time"] = kernel.rowTime;
    if (!kernel.grid.empty())
      entry["grid"] = kernel.grid.json();
    kernels[kernel.kind] = entry;
  }
  const double *peak = figures.peak;
  nlohmann::json devices = {
      {{"name", "cpu"},
       {"count", options.devices},
       {"peak_flops",
        {{"f32", peak[0]}, {"f64", peak[1]}, {"default", peak[0]}}},
       {"memory_bytes", memory},
       {"memory_bandwidth", figures.bandwidth},
       {"launch_overhead", figures.overhead},
       {"hand_off", figures.handOff.handOff()},
       {"hand_off_bytes", figures.handOff.bytes},
       {"join_throughput", throughputs},
       {"kernels", kernels}}};
  nlohmann::json links = {{"bandwidth", figures.linkBandwidth},
                          {"latency", figures.latency}};
  if (!figures.network)
    return {{"name", "calibrated-cpu"}, {"devices", devices}, {"links", links}};
  // One node per rank, each a copy of rank 0's figures.
  return {{"name", "calibrated-cpu-" + std::to_string(figures.ranks) + "n"},
          {"nodes",
           {{{"name", "rank"},
             {"count", figures.ranks},
             {"nics", 1},
             {"devices", devices},
             {"links", links}}}},
          {"network",
           {{"bandwidth", figures.network->bandwidth},
            {"latency", figures.network->latency}}}};
}

/// " 4 B 31.2 us 65536 B 35.0 us ...", then a new line.
void printHops(const std::vector<HopSample> &hops) {
  for (const HopSample &sample : hops)
    std::cout << " " << sample.bytes << " B "
              << formatSignificant(sample.hop * 1e6, 3) << " us";
  std::cout << "\n";
}

/// Hops as JSON: [{"bytes": B, "hop_s": S}, ...].
nlohmann::json hopsJson(const std::vector<HopSample> &hops) {
  nlohmann::json list = nlohmann::json::array();
  for (const HopSample &sample : hops)
    list.push_back({{"bytes", sample.bytes}, {"hop_s", sample.hop}});
  return list;
}

/// The figures as text, for people.
void printFigures(const Options &options, const Figures &figures, int busy,
                  unsigned cores) {
  int devices = static_cast<int>(options.devices);
  std::cout << "calibrated the CPU backend (median of " << options.repeat
            << " runs each, " << busy << " of " << devices
            << " device(s) busy at once, " << cores << " core(s)):\n"
            << "  launch overhead: "
            << formatSignificant(figures.overhead * 1e6, 3)
            << " us per task\n"
            << "  f32 contractions (N = " << options.gemmSize
            << ", 4 layouts): " << formatSignificant(figures.peak[0] / 1e9, 4)
            << " GFLOP/s\n"
            << "  f64 contractions: "
            << formatSignificant(figures.peak[1] / 1e9, 4)
            << " GFLOP/s\n"
            << "  memory bandwidth (elementwise add, " << options.elementwise
            << " elements): " << formatSignificant(figures.bandwidth / 1e9, 4)
            << " GB/s\n"
            << "  joins (" << options.joinElements
            << " elements, G applications/s):";
  for (auto [join, rate] : figures.joinRates)
    std::cout << " " << joinKindName(join) << " "
              << formatSignificant(rate / 1e9, 3);
  std::cout << "\n  tasks (us per task; kernel rate in GFLOP/s):";
  for (const KernelFigure &kernel : figures.kernels) {
    std::cout << " " << kernel.kind << " "
              << formatSignificant(kernel.overhead * 1e6, 3);
    if (kernel.flops > 0)
      std::cout << " (" << formatSignificant(kernel.flops / 1e9, 3)
                << (kernel.halfSize > 0
                        ? ", half at " + formatSignificant(kernel.halfSize, 3)
                        : std::string())
                << ")";
    if (kernel.gemvBandwidth > 0)
      std::cout << " [gemv " << formatSignificant(kernel.gemvBandwidth / 1e9, 3)
                << " GB/s]";
    if (kernel.gatherTime > 0 || kernel.rowTime > 0)
      std::cout << " [walk " << formatSignificant(kernel.gatherTime * 1e9, 3)
                << " ns per gathered element, "
                << formatSignificant(kernel.rowTime * 1e9, 3) << " per row]";
    if (!kernel.grid.empty()) {
      auto [low, high] = std::minmax_element(kernel.grid.flops.begin(),
                                             kernel.grid.flops.end());
      std::cout << " [" << kernel.grid.flops.size() << " GEMM shapes "
                << formatSignificant(*low / 1e9, 3) << "-"
                << formatSignificant(*high / 1e9, 3) << " in "
                << formatSignificant(kernel.grid.seconds, 2) << " s]";
    }
  }
  std::cout << "\n  hand-off (idle between tasks): "
            << formatSignificant(figures.handOff.model * 1e6, 3)
            << " us between dependent tasks of a model-like graph, "
            << formatSignificant(figures.handOff.chain * 1e6, 3)
            << " of a chain, "
            << formatSignificant(figures.handOff.queued * 1e6, 3)
            << " between queued ones (the overheads above are a queued "
               "task's; hand_off, the first less the last, is paid by a "
               "task its device waited for)";
  std::cout << "\n  link: latency "
            << formatSignificant(figures.latency * 1e6, 3) << " us, bandwidth "
            << formatSignificant(figures.linkBandwidth / 1e9, 4)
            << " GB/s; hops:";
  printHops(figures.linkHops);
  if (figures.network) {
    std::cout << "  network between ranks 0 and 1 (" << figures.ranks
              << " ranks): latency "
              << formatSignificant(figures.network->latency * 1e6, 3)
              << " us, bandwidth "
              << formatSignificant(figures.network->bandwidth / 1e9, 4)
              << " GB/s; hops:";
    printHops(figures.network->samples);
  }
  if (devices > static_cast<int>(cores) && cores > 0)
    std::cout << "note: " << devices << " devices share " << cores
              << " core(s); the rates are each device's share with all "
                 "of them busy\n";
  if (!options.output.empty())
    std::cout << "wrote " << options.output << " ("
              << (figures.network ? std::to_string(figures.ranks) +
                                        " nodes of " +
                                        std::to_string(options.devices)
                                  : std::to_string(options.devices))
              << " devices)\n";
}

} // namespace

namespace {
/// Under mpirun, the CPU backend pins device d's compute worker to the
/// (d mod C)-th of the C cores a process may use, d counted over every
/// rank's devices (rank r has r x D .. r x D + D - 1), so the ranks of a
/// run spread over the cores. A rank's calibration numbers its devices
/// from 0: while this is alive, the calling thread (and so the workers an
/// executor made meanwhile starts) may use only the cores the rank's
/// devices get in a run, so that its devices are pinned (or, one core
/// left, confined) as they will run, not every rank's device 0 on core 0.
class RankCores {
public:
  RankCores(int rank, int devices) {
#if defined(__linux__)
    if (rank == 0 || sched_getaffinity(0, sizeof(saved_), &saved_) != 0)
      return;
    std::vector<int> allowed;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &saved_))
        allowed.push_back(cpu);
    if (allowed.size() < 2)
      return;
    cpu_set_t mine;
    CPU_ZERO(&mine);
    for (int d = 0; d < devices; ++d)
      CPU_SET(allowed[static_cast<size_t>(rank * devices + d) %
                      allowed.size()],
              &mine);
    restore_ = sched_setaffinity(0, sizeof(mine), &mine) == 0;
#else
    (void)rank, (void)devices;
#endif
  }
  ~RankCores() {
#if defined(__linux__)
    if (restore_)
      (void)sched_setaffinity(0, sizeof(saved_), &saved_);
#endif
  }
  RankCores(const RankCores &) = delete;
  RankCores &operator=(const RankCores &) = delete;

private:
#if defined(__linux__)
  cpu_set_t saved_{};
#endif
  bool restore_ = false;
};

/// This rank's devices' figures (every rank at once under mpirun: each
/// measurement starts when all ranks reach it).
Status measureDevices(const Options &options, int busy, Figures &figures) {
  // The devices the description will have; two at least, to time a
  // transfer.
  CpuBackendOptions cpu;
  cpu.numDevices = std::max(static_cast<int>(options.devices), 2);
  Result<std::unique_ptr<Backend>> backend = createCpuBackend(cpu);
  if (!backend)
    return backend.status();
  std::optional<Executor> executor;
  {
    // The workers start (and are pinned) in the constructor.
    RankCores cores(mpi.rank(), static_cast<int>(options.devices));
    executor.emplace(std::move(*backend));
  }
  Calibrator calibrator(*executor, options, busy);
  uint64_t step = 0;
  for (Status (Calibrator::*measure)(Figures &) :
       {&Calibrator::measureOverhead, &Calibrator::measureContractions,
        &Calibrator::measureBandwidth, &Calibrator::measureJoins,
        &Calibrator::measureKernelCosts, &Calibrator::measureLinks,
        &Calibrator::measureHandOffs}) {
    if (Status same = mpi.agree("calibration step", ++step); !same)
      return same;
    if (Status status = (calibrator.*measure)(figures); !status)
      return status;
  }
  return Status();
}

int runCalibration(int argc, char **argv) {
  Options options;
  if (std::optional<int> exitCode = parseArguments(argc, argv, options))
    return *exitCode;
  // Every rank measures the same things the same number of times (each
  // run with the network's executor is collective).
  std::string commandLine;
  for (int i = 1; i < argc; ++i)
    commandLine.append(argv[i]).push_back('\0');
  if (Status same = mpi.agree(
          "command line", hashBytes(commandLine.data(), commandLine.size()));
      !same)
    return fail(same.message());

  int busy = options.alone ? 1 : static_cast<int>(options.devices);
  Figures figures;
  if (Status status = measureDevices(options, busy, figures); !status)
    return fail(status.message());
  if (mpi.ranks() > 1) {
    std::mt19937_64 generator(static_cast<uint64_t>(options.seed) + 1);
    Result<NetworkFigure> network =
        measureNetwork(mpi.transport(), generator,
                       static_cast<int>(options.repeat), options.transferBytes);
    if (!network)
      return fail(network.message());
    figures.ranks = mpi.ranks();
    figures.network = *network;
  }
  mpi.runsDone();
  if (mpi.rank() != 0)
    return 0; // rank 0 reports

  unsigned cores = std::thread::hardware_concurrency();
  nlohmann::json description = describeSystem(options, figures);
  if (!options.output.empty()) {
    std::ofstream out(options.output);
    out << description.dump(2) << "\n";
    out.close();
    if (!out)
      return fail("cannot write '" + options.output + "'");
  }

  if (options.json) {
    nlohmann::json report = {{"system", description},
                             {"gemm_size", options.gemmSize},
                             {"elementwise_elements", options.elementwise},
                             {"join_elements", options.joinElements},
                             {"transfer_bytes", options.transferBytes},
                             {"repeat", options.repeat},
                             {"busy_devices", busy},
                             {"hand_off_s",
                              {{"chain", figures.handOff.chain},
                               {"model", figures.handOff.model},
                               {"queued", figures.handOff.queued}}},
                             {"link_hops", hopsJson(figures.linkHops)},
                             {"host_cores", cores}};
    if (figures.network) {
      report["ranks"] = figures.ranks;
      report["network_hops"] = hopsJson(figures.network->samples);
    }
    if (!options.output.empty())
      report["output"] = options.output;
    std::cout << report.dump(2) << "\n";
  } else {
    printFigures(options, figures, busy, cores);
  }
  return 0;
}
} // namespace

int main(int argc, char **argv) {
  if (Status started = mpi.start(&argc, &argv); !started)
    return fail(started.message());
  // Many devices on a small host (a task graph, buffers and a worker stack
  // per device) can run out of address space: one error line, not an abort.
  try {
    return mpi.finishWith("doppler-calibrate", runCalibration(argc, argv));
  } catch (const std::bad_alloc &) {
    return fail("out of host memory (std::bad_alloc); use fewer devices or "
                "smaller sizes");
  }
}
