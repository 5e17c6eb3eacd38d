//===- doppler-calibrate.cpp - A system description measured on this host -===//
//
// Times the CPU backend through the executor (so every figure includes what
// doppler-run pays per task) and writes a system description in the JSON
// format of docs/SystemDescription.md, which doppler-annotate-costs{system=
// FILE} and doppler-pipeline{system=FILE} read:
//
//   launch_overhead     makespan / K of a chain of K one-element einsums
//                       on one device (dispatch + hand-off per task);
//   peak_flops f32/f64  an N x N x N GEMM ("ij,jk->ik" mul/add):
//                       2 N^3 / (time - launch_overhead);
//   memory_bandwidth    an elementwise add of two M-element f32 tensors:
//                       12 M bytes / (time - launch_overhead);
//   links latency       a one-element transfer between two devices;
//   links bandwidth     a B-byte transfer: B / (time - latency).
//
// Each figure is the median of --repeat runs after a warm-up. Inputs are
// seeded (mt19937_64, --seed). The figures describe this host as the CPU
// backend sees it, with the link model off (doppler-run's default): run
// doppler-run with the same --devices and no --link-* options.
//
//   doppler-calibrate [-o system.json] [--devices D] [--repeat N]
//                     [--gemm-size N] [--elementwise-elements M]
//                     [--transfer-bytes B] [--seed S] [--json]
//
//===----------------------------------------------------------------------===//

#include "RunSupport.h"

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <random>

using namespace doppler;
using namespace doppler::runtime;

namespace {

constexpr const char *kUsage =
    "usage: doppler-calibrate [-o system.json] [--devices D] [--repeat N]\n"
    "                         [--gemm-size N] [--elementwise-elements M]\n"
    "                         [--transfer-bytes B] [--seed S] [--json]\n";

int fail(const std::string &message) {
  std::cerr << "doppler-calibrate: error: " << message << "\n";
  return 1;
}

struct Options {
  std::string output;
  int64_t devices = 2;
  int64_t repeat = 7;
  int64_t gemmSize = 256;
  int64_t elementwise = int64_t(1) << 20;
  int64_t transferBytes = int64_t(8) << 20;
  int64_t seed = 0;
  bool json = false;
};

std::vector<float> seeded(int64_t count, std::mt19937_64 &generator) {
  std::vector<float> data(count);
  for (float &value : data)
    value = static_cast<float>(
        2.0 * (static_cast<double>(generator() >> 11) * 0x1.0p-53) - 1.0);
  return data;
}

/// Median makespan of `repeat` runs after a warm-up.
Result<double> timeGraph(Executor &executor, const TaskGraph &graph,
                         const InputBindings &inputs, int repeat) {
  Result<Measurement> measured = measure(executor, graph, inputs, repeat);
  if (!measured)
    return measured.status();
  return measured->median.makespan;
}

} // namespace

int main(int argc, char **argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto integer = [&](int64_t &out) {
      if (i + 1 >= argc)
        return false;
      char *end = nullptr;
      out = std::strtoll(argv[++i], &end, 10);
      return *end == '\0';
    };
    if (arg == "-h" || arg == "--help") {
      std::cout << kUsage;
      return 0;
    } else if (arg == "-o" || arg == "--output") {
      if (i + 1 >= argc)
        return fail(arg + " needs a file name");
      options.output = argv[++i];
    } else if (arg == "--json") {
      options.json = true;
    } else if (arg == "--devices" || arg == "--repeat" ||
               arg == "--gemm-size" || arg == "--elementwise-elements" ||
               arg == "--transfer-bytes" || arg == "--seed") {
      int64_t value;
      if (!integer(value) || value < (arg == "--seed" ? 0 : 1))
        return fail(arg + " needs a positive integer");
      (arg == "--devices"                ? options.devices
       : arg == "--repeat"               ? options.repeat
       : arg == "--gemm-size"            ? options.gemmSize
       : arg == "--elementwise-elements" ? options.elementwise
       : arg == "--transfer-bytes"       ? options.transferBytes
                                         : options.seed) = value;
    } else {
      return fail("unknown argument '" + arg + "'\n" + kUsage);
    }
  }
  if (options.devices > 4096)
    return fail("--devices is too large");

  // Two devices are enough to time a transfer; the host description is
  // then repeated `devices` times.
  CpuBackendOptions cpu;
  cpu.numDevices = 2;
  Result<std::unique_ptr<Backend>> backend = createCpuBackend(cpu);
  if (!backend)
    return fail(backend.message());
  Executor executor(std::move(*backend));
  int repeat = static_cast<int>(options.repeat);
  std::mt19937_64 generator(static_cast<uint64_t>(options.seed));

  // Per-task overhead: a chain of tiny tasks on one device.
  constexpr int kChain = 200;
  double overhead;
  {
    TaskGraph graph;
    ValueId x = *graph.addInput(0, {1});
    ValueId last = x;
    for (int k = 0; k < kChain; ++k)
      last = *graph.addEinsum(0, "i->i", JoinKind::Neg, std::nullopt, {last});
    (void)graph.markOutput(last);
    std::vector<float> data = seeded(1, generator);
    Result<double> time =
        timeGraph(executor, graph, {{x, data.data()}}, repeat);
    if (!time)
      return fail(time.message());
    overhead = *time / kChain;
  }

  auto computeTime = [](double total, double overhead) {
    // Never below a tenth of the total: guards the rates against noise.
    return std::max(total - overhead, 0.1 * total);
  };

  // GEMM peak for f32 and f64.
  double peak[2];
  int64_t n = options.gemmSize;
  for (int precision = 0; precision < 2; ++precision) {
    ElementType type = precision == 0 ? ElementType::F32 : ElementType::F64;
    TaskGraph graph;
    ValueId a = *graph.addInput(0, {n, n}, type);
    ValueId b = *graph.addInput(0, {n, n}, type);
    Result<ValueId> c =
        graph.addEinsum(0, "ij,jk->ik", JoinKind::Mul, AggKind::Add, {a, b});
    if (!c)
      return fail(c.message());
    (void)graph.markOutput(*c);
    std::vector<float> af = seeded(n * n, generator);
    std::vector<float> bf = seeded(n * n, generator);
    std::vector<double> ad(af.begin(), af.end()), bd(bf.begin(), bf.end());
    InputBindings inputs = precision == 0
                               ? InputBindings{{a, af.data()}, {b, bf.data()}}
                               : InputBindings{{a, ad.data()}, {b, bd.data()}};
    Result<double> time = timeGraph(executor, graph, inputs, repeat);
    if (!time)
      return fail(time.message());
    peak[precision] = 2.0 * n * n * n / computeTime(*time, overhead);
  }

  // Memory bandwidth: an elementwise add (two reads, one write).
  double bandwidth;
  {
    int64_t m = options.elementwise;
    TaskGraph graph;
    ValueId a = *graph.addInput(0, {m});
    ValueId b = *graph.addInput(0, {m});
    ValueId c =
        *graph.addEinsum(0, "i,i->i", JoinKind::Add, std::nullopt, {a, b});
    (void)graph.markOutput(c);
    std::vector<float> ad = seeded(m, generator), bd = seeded(m, generator);
    Result<double> time =
        timeGraph(executor, graph, {{a, ad.data()}, {b, bd.data()}}, repeat);
    if (!time)
      return fail(time.message());
    bandwidth = 12.0 * m / computeTime(*time, overhead);
  }

  // Links: latency from a one-element transfer, bandwidth from a large one.
  double latency, linkBandwidth;
  {
    auto timeTransfer = [&](int64_t elements) -> Result<double> {
      TaskGraph graph;
      ValueId x = *graph.addInput(0, {elements});
      ValueId y = *graph.addTransfer(x, 1);
      (void)graph.markOutput(y);
      std::vector<float> data = seeded(elements, generator);
      return timeGraph(executor, graph, {{x, data.data()}}, repeat);
    };
    Result<double> tiny = timeTransfer(1);
    if (!tiny)
      return fail(tiny.message());
    latency = *tiny;
    int64_t elements = std::max<int64_t>(options.transferBytes / 4, 1);
    Result<double> large = timeTransfer(elements);
    if (!large)
      return fail(large.message());
    linkBandwidth = 4.0 * elements / computeTime(*large, latency);
  }

  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
  double memory = pages > 0 && pageSize > 0
                      ? static_cast<double>(pages) * pageSize / options.devices
                      : 4e9;

  nlohmann::json description = {
      {"name", "calibrated-cpu"},
      {"devices",
       {{{"name", "cpu"},
         {"count", options.devices},
         {"peak_flops",
          {{"f32", peak[0]}, {"f64", peak[1]}, {"default", peak[0]}}},
         {"memory_bytes", memory},
         {"memory_bandwidth", bandwidth},
         {"launch_overhead", overhead}}}},
      {"links", {{"bandwidth", linkBandwidth}, {"latency", latency}}}};
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
                             {"transfer_bytes", options.transferBytes},
                             {"repeat", options.repeat}};
    if (!options.output.empty())
      report["output"] = options.output;
    std::cout << report.dump(2) << "\n";
  } else {

    std::cout << "calibrated the CPU backend (median of " << repeat
              << " runs each):\n"
              << "  launch overhead: " << formatNumber(overhead * 1e6, 3)
              << " us per task\n"
              << "  f32 GEMM " << n << "^3: " << formatNumber(peak[0] / 1e9, 4)
              << " GFLOP/s\n"
              << "  f64 GEMM " << n << "^3: " << formatNumber(peak[1] / 1e9, 4)
              << " GFLOP/s\n"
              << "  memory bandwidth (elementwise add, " << options.elementwise
              << " elements): " << formatNumber(bandwidth / 1e9, 4) << " GB/s\n"
              << "  link: latency " << formatNumber(latency * 1e6, 3)
              << " us, bandwidth " << formatNumber(linkBandwidth / 1e9, 4)
              << " GB/s\n";
    if (!options.output.empty())
      std::cout << "wrote " << options.output << " (" << options.devices
                << " devices)\n";
  }
  return 0;
}
