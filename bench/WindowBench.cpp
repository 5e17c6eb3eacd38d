//===- WindowBench.cpp - Convolution and pooling kernels of the runtime ---===//
//
// doppler-bench-window: the CPU kernels of conv and pool tasks
// (ConvolutionKernel, PoolKernel) on ResNet-18 and ConvNeXt layers, f32,
// batch 1, one thread pinned to one core (OpenBLAS single-threaded):
//  - resnet-3x3:   1x64x56x56, 3x3 stride 1 pad 1, 64 -> 64;
//  - resnet-stem:  1x3x224x224, 7x7 stride 2 pad 3, 3 -> 64;
//  - resnet-down:  1x64x56x56, 1x1 stride 2, 64 -> 128 (the downsample);
//  - convnext-dw:  1x96x56x56, 7x7 depthwise pad 3 (groups 96);
//  - resnet-pool:  1x64x112x112, 3x3 max pool stride 2 pad 1;
//  - resnet-3x3-f64: the first one in f64.
// Each convolution runs with every method that can compute it (auto, the
// choice; im2col at 256 KiB, 1 MiB (the default), 4 MiB and unbounded
// column blocks; gemm; depthwise; direct), so the table after the run shows
// what the automatic choice gains over the others (median CPU times). bench/window_torch.py
// times PyTorch on the same shapes and reads this program's JSON output
// (--benchmark_out) for the ratios.
//
// Flags: Google Benchmark's; --pin-cpu=N pins to core N (default: the
// first core the process may use; -1: no pinning).
//
//===----------------------------------------------------------------------===//

#include "MedianCollector.h"

#include "doppler/runtime/CpuKernels.h"

#include <benchmark/benchmark.h>

#if defined(__linux__)
#include <sched.h>
#endif

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace doppler;
using namespace doppler::runtime;

namespace {

struct Workload {
  std::string name;
  Shape input, weight; ///< No weight: a pool.
  int64_t groups = 1;
  PoolKind pool = PoolKind::Max;
  WindowGeometry geometry;
  ElementType type = ElementType::F32;
};

WindowGeometry square(int64_t kernel, int64_t stride, int64_t pad) {
  WindowGeometry g;
  g.kernel = {kernel, kernel};
  g.strides = {stride, stride};
  g.dilations = {1, 1};
  g.padLow = {pad, pad};
  g.padHigh = {pad, pad};
  return g;
}

std::vector<Workload> workloads() {
  std::vector<Workload> list = {
      {"resnet-3x3", {1, 64, 56, 56}, {64, 64, 3, 3}, 1, PoolKind::Max,
       square(3, 1, 1)},
      {"resnet-stem", {1, 3, 224, 224}, {64, 3, 7, 7}, 1, PoolKind::Max,
       square(7, 2, 3)},
      {"resnet-down", {1, 64, 56, 56}, {128, 64, 1, 1}, 1, PoolKind::Max,
       square(1, 2, 0)},
      {"convnext-dw", {1, 96, 56, 56}, {96, 1, 7, 7}, 96, PoolKind::Max,
       square(7, 1, 3)},
      // MobileNetV2's and EfficientNet-B0's strided depthwise layers at
      // 224x224 (phased rows against the direct loops).
      {"mobilenet-dw-s2", {1, 96, 112, 112}, {96, 1, 3, 3}, 96,
       PoolKind::Max, square(3, 2, 1)},
      {"effnet-dw5-s2", {1, 144, 56, 56}, {144, 1, 5, 5}, 144, PoolKind::Max,
       square(5, 2, 2)},
      {"resnet-pool", {1, 64, 112, 112}, {}, 1, PoolKind::Max,
       square(3, 2, 1)},
      {"resnet-3x3-f64", {1, 64, 56, 56}, {64, 64, 3, 3}, 1, PoolKind::Max,
       square(3, 1, 1)},
  };
  list.back().type = ElementType::F64;
  return list;
}

/// A method (or pooling, for pool workloads) under a column name.
struct Variant {
  const char *name;
  cpu::ConvOptions options;
};

std::vector<Variant> variants() {
  auto im2col = [](uint64_t bytes) {
    cpu::ConvOptions options;
    options.method = cpu::ConvMethod::Im2col;
    options.im2colBlockBytes = bytes;
    return options;
  };
  cpu::ConvOptions gemm, depthwise, direct;
  gemm.method = cpu::ConvMethod::Gemm;
  depthwise.method = cpu::ConvMethod::Depthwise;
  direct.method = cpu::ConvMethod::Direct;
  return {{"auto", cpu::ConvOptions()},
          {"im2col-256K", im2col(uint64_t(256) << 10)},
          {"im2col-1M", im2col(uint64_t(1) << 20)},
          {"im2col-4M", im2col(uint64_t(4) << 20)},
          {"im2col-whole", im2col(uint64_t(1) << 40)},
          {"gemm", gemm},
          {"depthwise", depthwise},
          {"direct", direct}};
}

/// Uniform [-1, 1) data of the workload's type.
std::vector<unsigned char> randomBuffer(const Shape &shape, ElementType type,
                                        uint32_t seed) {
  int64_t count = numElements(shape);
  std::vector<unsigned char> bytes(count * elementSize(type));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-1, 1);
  for (int64_t i = 0; i < count; ++i) {
    if (type == ElementType::F64)
      reinterpret_cast<double *>(bytes.data())[i] = dist(rng);
    else
      reinterpret_cast<float *>(bytes.data())[i] =
          static_cast<float>(dist(rng));
  }
  return bytes;
}

double flops(const Workload &w, const Shape &out) {
  if (w.weight.empty()) // A comparison per tap.
    return static_cast<double>(numElements(out)) *
           static_cast<double>(numElements(w.geometry.kernel));
  return 2 * convolutionMultiplyAdds(w.input, w.weight, w.groups, out);
}

/// Times one kernel call per iteration.
void runWindow(benchmark::State &state, const Workload &w,
               const cpu::ConvOptions &options) {
  std::vector<unsigned char> input = randomBuffer(w.input, w.type, 1);
  std::vector<unsigned char> weight = randomBuffer(w.weight, w.type, 2);
  std::optional<cpu::ConvolutionKernel> conv;
  std::optional<cpu::PoolKernel> pool;
  Shape out;
  if (w.weight.empty()) {
    Result<cpu::PoolKernel> kernel =
        cpu::PoolKernel::create(w.pool, w.input, w.geometry, w.type);
    if (!kernel) {
      state.SkipWithError(kernel.message().c_str());
      return;
    }
    pool = std::move(*kernel);
    out = pool->outputShape();
  } else {
    Result<cpu::ConvolutionKernel> kernel = cpu::ConvolutionKernel::create(
        w.input, w.weight, w.groups, w.geometry, w.type, options);
    if (!kernel) {
      state.SkipWithError(kernel.message().c_str());
      return;
    }
    conv = std::move(*kernel);
    out = conv->outputShape();
    state.SetLabel(std::string(cpu::convMethodName(conv->method())));
  }
  std::vector<unsigned char> output(numElements(out) * elementSize(w.type));
  for (auto _ : state) {
    if (conv)
      conv->run(input.data(), weight.data(), output.data());
    else
      pool->run(input.data(), output.data());
    benchmark::DoNotOptimize(output.data());
    benchmark::ClobberMemory();
  }
  state.counters["GFLOPS"] =
      benchmark::Counter(flops(w, out) * 1e-9,
                         benchmark::Counter::kIsIterationInvariantRate);
}

/// Whether `variant` can compute `w` (each method has its preconditions).
bool applies(const Workload &w, const Variant &variant) {
  if (w.weight.empty())
    return variant.options.method == cpu::ConvMethod::Auto;
  return bool(cpu::ConvolutionKernel::create(w.input, w.weight, w.groups,
                                             w.geometry, w.type,
                                             variant.options));
}

bool hasFlag(int argc, char **argv, const char *prefix) {
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], prefix, std::strlen(prefix)) == 0)
      return true;
  return false;
}

/// Pins the calling thread to one core (Linux), so every method and
/// repetition runs on the same core, as the torch comparison does.
void pinThread(int argc, char **argv) {
#if defined(__linux__)
  int wanted = -2;
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--pin-cpu=", 10) == 0)
      wanted = std::atoi(argv[i] + 10);
  if (wanted == -1)
    return;
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0)
    return;
  int core = wanted;
  if (core < 0)
    for (core = 0; core < CPU_SETSIZE && !CPU_ISSET(core, &allowed); ++core) {
    }
  if (core >= CPU_SETSIZE)
    return;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(core, &one);
  if (sched_setaffinity(0, sizeof(one), &one) == 0)
    std::printf("pinned to core %d\n", core);
#else
  (void)argc, (void)argv;
#endif
}

} // namespace

int main(int argc, char **argv) {
  pinThread(argc, argv);
  cpu::useSingleThreadedBlas();
  static const std::vector<Workload> loads = workloads();
  static const std::vector<Variant> kinds = variants();
  std::vector<char *> args;
  for (int i = 0; i < argc; ++i)
    if (std::strncmp(argv[i], "--pin-cpu=", 10) != 0)
      args.push_back(argv[i]);
  int repetitions = 5;
  double minTime = 0.3;
  for (const Workload &w : loads)
    for (const Variant &variant : kinds) {
      if (!applies(w, variant))
        continue;
      auto *bench = benchmark::RegisterBenchmark(
          (std::string(variant.name) + "/" + w.name).c_str(),
          [&w, &variant](benchmark::State &state) {
            runWindow(state, w, variant.options);
          });
      bench->Unit(benchmark::kMillisecond)->UseRealTime();
      if (!hasFlag(argc, argv, "--benchmark_min_time"))
        bench->MinTime(minTime);
      if (!hasFlag(argc, argv, "--benchmark_repetitions"))
        bench->Repetitions(repetitions)->ReportAggregatesOnly(true);
    }
  int count = static_cast<int>(args.size());
  doppler::bench::MedianCollector reporter;
  if (!doppler::bench::runBenchmarks(count, args.data(), reporter))
    return 1;
  // Median CPU times in ms (on a shared machine real time mostly measures
  // the other processes), ratio to the automatic choice.
  std::printf("\nMedian CPU ms per call (ratio to auto):\n%-16s",
              "workload");
  for (const Variant &variant : kinds)
    std::printf(" %20s", variant.name);
  std::printf("\n");
  for (const Workload &w : loads) {
    double base = reporter.get(std::string("auto/") + w.name).cpu;
    std::printf("%-16s", w.name.c_str());
    for (const Variant &variant : kinds) {
      double value =
          reporter.get(std::string(variant.name) + "/" + w.name).cpu;
      if (value > 0)
        std::printf(" %11.3f (%5.2fx)", value, base > 0 ? value / base : 0.0);
      else
        std::printf(" %20s", "-");
    }
    std::printf("\n");
  }
  return 0;
}
