//===- RuntimeBench.cpp - Executor dispatch overhead and GEMM tasks -------===//
//
// Dispatch overhead: graphs of empty tasks (zero-length delays that own no
// memory), so a run's time is the executor's own work per task: readiness
// counting, queueing, hand-offs between worker threads, timing. Reported
// per task next to two baselines measured in the same process (a
// std::function call, and a one-way hand-off between two threads through a
// mutex and condition variable), so the ratios survive noisy machines.
//
// GEMM: one matmul einsum task run through the executor against a direct
// cblas_sgemm call of the same size.
//
// Joins: the vectorised span kernels (CpuJoins, SLEEF) against the scalar
// std:: loop over 1M floats.
//
// Repetitions default to 5 with medians reported; a summary of ratios
// follows the table.
//
//===----------------------------------------------------------------------===//

// The span API is internal to the runtime (runtime/lib); reached by path so
// that the benchmark needs no include directory of its own.
#include "../runtime/lib/CpuJoins.h"

#include "doppler/runtime/CpuBackend.h"
#include "doppler/runtime/CpuKernels.h"
#include "doppler/runtime/Executor.h"

#include <benchmark/benchmark.h>
#include <cblas.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>

using namespace doppler;
using namespace doppler::runtime;

namespace {

/// `idleSpinMicroseconds` as in ExecutorOptions (-1: automatic).
std::unique_ptr<Executor> makeExecutor(int devices,
                                       int idleSpinMicroseconds = -1) {
  CpuBackendOptions options;
  options.numDevices = devices;
  Result<std::unique_ptr<Backend>> backend = createCpuBackend(options);
  if (!backend) {
    std::fprintf(stderr, "%s\n", backend.message().c_str());
    std::abort();
  }
  ExecutorOptions executorOptions;
  executorOptions.idleSpinMicroseconds = idleSpinMicroseconds;
  return std::make_unique<Executor>(std::move(*backend), executorOptions);
}

/// Seconds per task, shown with an SI prefix (e.g. "650n" = 650 ns).
benchmark::Counter perTask(int64_t tasks) {
  return benchmark::Counter(static_cast<double>(tasks),
                            benchmark::Counter::kIsIterationInvariantRate |
                                benchmark::Counter::kInvert);
}

void runGraph(benchmark::State &state, Executor &executor,
              const TaskGraph &graph, const InputBindings &inputs = {}) {
  for (auto _ : state) {
    Result<RunResult> result = executor.run(graph, inputs);
    if (!result) {
      state.SkipWithError(result.message().c_str());
      return;
    }
    benchmark::DoNotOptimize(result->makespan);
  }
}

/// N empty tasks in a chain on one device: no thread hand-off at all.
void BM_DispatchChain(benchmark::State &state) {
  const int64_t tasks = state.range(0);
  TaskGraph graph;
  ValueId previous = *graph.addDelay(0, 0);
  for (int64_t i = 1; i < tasks; ++i)
    previous = *graph.addDelay(0, 0, {previous});
  auto executor = makeExecutor(1);
  runGraph(state, *executor, graph);
  state.counters["per_task"] = perTask(tasks);
}
BENCHMARK(BM_DispatchChain)->Arg(1000)->UseRealTime();

/// N independent empty tasks spread round-robin over D devices.
void BM_DispatchWide(benchmark::State &state) {
  const int64_t tasks = state.range(0);
  const int devices = static_cast<int>(state.range(1));
  TaskGraph graph;
  for (int64_t i = 0; i < tasks; ++i)
    (void)*graph.addDelay(static_cast<int>(i % devices), 0);
  auto executor = makeExecutor(devices);
  runGraph(state, *executor, graph);
  state.counters["per_task"] = perTask(tasks);
}
BENCHMARK(BM_DispatchWide)
    ->Args({1000, 1})
    ->Args({1000, 2})
    ->Args({1000, 4})
    ->UseRealTime();

/// A chain that alternates between two devices: every hop is a transfer on
/// the next device's copy worker and then a task on its compute worker, so
/// each hop costs two thread hand-offs. Second argument: idle-spin
/// microseconds of the workers (0: sleep at once, as when devices outnumber
/// cores).
void BM_DispatchChainAcrossDevices(benchmark::State &state) {
  const int64_t hops = state.range(0);
  const int spin = static_cast<int>(state.range(1));
  TaskGraph graph;
  ValueId previous = *graph.addDelay(0, 0, {}, {1});
  for (int64_t i = 1; i < hops; ++i) {
    int device = static_cast<int>(i % 2);
    ValueId moved = *graph.addTransfer(previous, device);
    previous = *graph.addDelay(device, 0, {moved}, {1});
  }
  auto executor = makeExecutor(2, spin);
  runGraph(state, *executor, graph);
  state.counters["per_task"] = perTask(graph.size());
  state.counters["per_hop"] = perTask(hops);
}
BENCHMARK(BM_DispatchChainAcrossDevices)
    ->Args({500, 0})
    ->Args({500, 50})
    ->UseRealTime();

/// Fixed cost of a run: validation, state set-up, waking a worker.
void BM_RunOneEmptyTask(benchmark::State &state) {
  TaskGraph graph;
  (void)*graph.addDelay(0, 0);
  auto executor = makeExecutor(1);
  runGraph(state, *executor, graph);
}
BENCHMARK(BM_RunOneEmptyTask)->UseRealTime();

//===----------------------------------------------------------------------===//
// Baselines
//===----------------------------------------------------------------------===//

void BM_BaselineStdFunctionCall(benchmark::State &state) {
  const int64_t calls = state.range(0);
  int64_t counter = 0;
  std::function<void()> task = [&counter] {
    benchmark::DoNotOptimize(++counter);
  };
  benchmark::DoNotOptimize(task);
  for (auto _ : state)
    for (int64_t i = 0; i < calls; ++i)
      task();
  state.counters["per_task"] = perTask(calls);
}
BENCHMARK(BM_BaselineStdFunctionCall)->Arg(1000)->UseRealTime();

/// Ping-pong with a partner thread; per one-way hand-off.
void BM_BaselineThreadHandoff(benchmark::State &state) {
  std::mutex mutex;
  std::condition_variable changed;
  int64_t turn = 1; // Even: the partner's move; odd: ours.
  bool stop = false;
  std::thread partner([&] {
    std::unique_lock<std::mutex> lock(mutex);
    while (true) {
      changed.wait(lock, [&] { return stop || turn % 2 == 0; });
      if (stop)
        return;
      ++turn;
      changed.notify_all();
    }
  });
  const int64_t roundTrips = 200;
  for (auto _ : state) {
    for (int64_t i = 0; i < roundTrips; ++i) {
      std::unique_lock<std::mutex> lock(mutex);
      ++turn; // Now even: hand over.
      changed.notify_all();
      changed.wait(lock, [&] { return turn % 2 == 1; });
    }
  }
  {
    std::lock_guard<std::mutex> lock(mutex);
    stop = true;
  }
  changed.notify_all();
  partner.join();
  state.counters["per_task"] = perTask(2 * roundTrips);
}
BENCHMARK(BM_BaselineThreadHandoff)->UseRealTime();

//===----------------------------------------------------------------------===//
// GEMM: executor task vs direct BLAS
//===----------------------------------------------------------------------===//

std::vector<float> randomMatrix(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> values(n * n);
  for (float &v : values)
    v = dist(rng);
  return values;
}

/// The executor and a direct cblas_sgemm call alternate within every
/// iteration, so background load hits both alike. Reports per call: the
/// whole run (upload of A and B, the task, download of C), the task alone
/// as the executor timed it, and the direct call.
void BM_GemmTaskVsDirect(benchmark::State &state) {
  using Clock = std::chrono::steady_clock;
  const int64_t n = state.range(0);
  TaskGraph graph;
  ValueId a = *graph.addInput(0, {n, n});
  ValueId b = *graph.addInput(0, {n, n});
  ValueId c =
      *graph.addEinsum(0, "ij,jk->ik", JoinKind::Mul, AggKind::Add, {a, b});
  (void)graph.markOutput(c);
  std::vector<float> aData = randomMatrix(n, 1), bData = randomMatrix(n, 2);
  std::vector<float> cData(n * n);
  auto executor = makeExecutor(1);
  cpu::useSingleThreadedBlas(); // As the executor's devices do.
  const int size = static_cast<int>(n);
  double runSeconds = 0, taskSeconds = 0, directSeconds = 0;
  for (auto _ : state) {
    Clock::time_point start = Clock::now();
    Result<RunResult> result =
        executor->run(graph, {{a, aData.data()}, {b, bData.data()}});
    Clock::time_point middle = Clock::now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, size, size, size,
                1.0f, aData.data(), size, bData.data(), size, 0.0f,
                cData.data(), size);
    benchmark::DoNotOptimize(cData.data());
    Clock::time_point end = Clock::now();
    if (!result) {
      state.SkipWithError(result.message().c_str());
      return;
    }
    runSeconds += std::chrono::duration<double>(middle - start).count();
    directSeconds += std::chrono::duration<double>(end - middle).count();
    taskSeconds += result->tasks[c].end - result->tasks[c].start;
  }
  double iterations = static_cast<double>(state.iterations());
  state.counters["run_ms"] = runSeconds / iterations * 1e3;
  state.counters["task_ms"] = taskSeconds / iterations * 1e3;
  state.counters["direct_ms"] = directSeconds / iterations * 1e3;
  state.counters["run_ratio"] = runSeconds / directSeconds;
  state.counters["task_ratio"] = taskSeconds / directSeconds;
}
BENCHMARK(BM_GemmTaskVsDirect)
    ->Arg(256)
    ->Arg(512)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

//===----------------------------------------------------------------------===//
// Loop-path kernels (elementwise, broadcast, reductions, transpose): bytes
// moved per second, next to memcpy of a buffer of the same size.
//===----------------------------------------------------------------------===//

struct LoopCase {
  const char *spec;
  JoinKind join;
  std::optional<AggKind> aggregation;
  std::vector<Shape> shapes;
};

const LoopCase kLoopCases[] = {
    {"ij,ij->ij", JoinKind::Add, std::nullopt, {{1024, 1024}, {1024, 1024}}},
    {"ij,j->ij", JoinKind::Mul, std::nullopt, {{1024, 1024}, {1024}}},
    {"ij->ij", JoinKind::Exp, std::nullopt, {{1024, 1024}}},
    {"ij->i", JoinKind::Identity, AggKind::Add, {{1024, 1024}}},
    {"ij->j", JoinKind::Identity, AggKind::Max, {{1024, 1024}}},
    {"ij->ji", JoinKind::Identity, std::nullopt, {{1024, 1024}}},
};

void BM_LoopKernel(benchmark::State &state) {
  const LoopCase &c = kLoopCases[state.range(0)];
  state.SetLabel(std::string(c.spec) + " " + std::string(joinKindName(c.join)));
  Result<cpu::EinsumKernel> kernel =
      cpu::EinsumKernel::create(*EinsumSpec::parse(c.spec), c.join,
                                c.aggregation, 0, c.shapes, ElementType::F32);
  if (!kernel) {
    state.SkipWithError(kernel.message().c_str());
    return;
  }
  std::vector<std::vector<float>> inputs;
  std::vector<const void *> pointers;
  int64_t bytes = 0;
  for (const Shape &shape : c.shapes) {
    inputs.emplace_back(numElements(shape), 0.5f);
    bytes += numElements(shape) * 4;
  }
  for (const auto &input : inputs)
    pointers.push_back(input.data());
  std::vector<float> out(numElements(kernel->outputShape()));
  bytes += static_cast<int64_t>(out.size()) * 4;
  for (auto _ : state) {
    kernel->run(pointers.data(), out.data());
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(state.iterations() * bytes);
}
BENCHMARK(BM_LoopKernel)->DenseRange(0, 5)->UseRealTime();

void BM_BaselineMemcpy(benchmark::State &state) {
  // Same traffic as an elementwise op on 1024 x 1024 floats: 4 MiB in,
  // 4 MiB out.
  std::vector<float> from(1024 * 1024, 0.5f), to(1024 * 1024);
  for (auto _ : state) {
    std::memcpy(to.data(), from.data(), from.size() * sizeof(float));
    benchmark::DoNotOptimize(to.data());
  }
  state.SetBytesProcessed(state.iterations() * 2 * from.size() * sizeof(float));
}
BENCHMARK(BM_BaselineMemcpy)->UseRealTime();

//===----------------------------------------------------------------------===//
// Joins: the vector span kernels (SLEEF) against the scalar std:: loop the
// loop nest ran before, alternating within every iteration so background
// load hits both alike. 1M f32 elements (in L2/L3 on the benchmark hosts).
//===----------------------------------------------------------------------===//

template <JoinKind J>
void scalarJoinLoop(const float *a, const float *b, float *out, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    out[i] = cpu::detail::joinValue<J>(a[i], b[i], 0.5f);
}

struct JoinBenchCase {
  JoinKind join;
  void (*scalar)(const float *, const float *, float *, int64_t);
};

const JoinBenchCase kJoinBenchCases[] = {
    {JoinKind::Gelu, &scalarJoinLoop<JoinKind::Gelu>},
    {JoinKind::Exp, &scalarJoinLoop<JoinKind::Exp>},
    {JoinKind::Tanh, &scalarJoinLoop<JoinKind::Tanh>},
    {JoinKind::Silu, &scalarJoinLoop<JoinKind::Silu>},
    {JoinKind::Add, &scalarJoinLoop<JoinKind::Add>},
};

void BM_JoinVectorVsScalar(benchmark::State &state) {
  using Clock = std::chrono::steady_clock;
  const JoinBenchCase &c = kJoinBenchCases[state.range(0)];
  state.SetLabel(std::string(joinKindName(c.join)));
  const int64_t n = int64_t(1) << 20;
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-4, 4);
  std::vector<float> a(n), b(n), out(n);
  for (int64_t i = 0; i < n; ++i) {
    a[i] = dist(rng);
    b[i] = dist(rng);
  }
  double vectorSeconds = 0, scalarSeconds = 0;
  bool vectorFirst = true; // Alternates: the second run finds warmer caches.
  for (auto _ : state) {
    for (bool vector : {vectorFirst, !vectorFirst}) {
      Clock::time_point start = Clock::now();
      if (vector)
        cpu::applyJoinSpan(c.join, a.data(), b.data(), 0.5f, out.data(), n);
      else
        c.scalar(a.data(), b.data(), out.data(), n);
      benchmark::DoNotOptimize(out.data());
      double seconds =
          std::chrono::duration<double>(Clock::now() - start).count();
      (vector ? vectorSeconds : scalarSeconds) += seconds;
    }
    vectorFirst = !vectorFirst;
  }
  double iterations = static_cast<double>(state.iterations());
  state.counters["vector_ms"] = vectorSeconds / iterations * 1e3;
  state.counters["scalar_ms"] = scalarSeconds / iterations * 1e3;
  state.counters["speedup"] = scalarSeconds / vectorSeconds;
}
BENCHMARK(BM_JoinVectorVsScalar)
    ->DenseRange(0, std::size(kJoinBenchCases) - 1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

//===----------------------------------------------------------------------===//
// Reporting: the usual table, then ratios of medians.
//===----------------------------------------------------------------------===//

class RatioReporter : public benchmark::ConsoleReporter {
public:
  void ReportRuns(const std::vector<Run> &runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run &run : runs) {
      if (run.aggregate_name != "median")
        continue;
      std::string name = run.run_name.str();
      auto perTaskIt = run.counters.find("per_task");
      if (perTaskIt != run.counters.end())
        perTaskSeconds_[name] = perTaskIt->second.value;
      auto perHopIt = run.counters.find("per_hop");
      if (perHopIt != run.counters.end())
        perHopSeconds_[name] = perHopIt->second.value;
      if (name.rfind("BM_GemmTaskVsDirect", 0) == 0)
        gemm_[name] = run.counters;
      if (name.rfind("BM_JoinVectorVsScalar", 0) == 0)
        joins_[name + " " + run.report_label] = run.counters;
    }
  }

  void printSummary() const {
    auto find = [](const std::map<std::string, double> &values,
                   const std::string &name) {
      auto it = values.find(name);
      return it == values.end() ? -1.0 : it->second;
    };
    double call =
        find(perTaskSeconds_, "BM_BaselineStdFunctionCall/1000/real_time");
    double handoff =
        find(perTaskSeconds_, "BM_BaselineThreadHandoff/real_time");
    std::printf("\nSummary (medians):\n");
    std::printf("  baseline std::function call : %9.3f us\n", call * 1e6);
    std::printf("  baseline thread hand-off    : %9.3f us\n", handoff * 1e6);
    for (const auto &[name, seconds] : perTaskSeconds_) {
      if (name.rfind("BM_Dispatch", 0) != 0)
        continue;
      std::printf("  %-44s %7.3f us/task  (%.2fx hand-off, %.0fx call)\n",
                  name.c_str(), seconds * 1e6,
                  handoff > 0 ? seconds / handoff : 0.0,
                  call > 0 ? seconds / call : 0.0);
    }
    for (const auto &[name, seconds] : perHopSeconds_)
      std::printf("  %-44s %7.3f us/hop   (%.2fx hand-off)\n", name.c_str(),
                  seconds * 1e6, handoff > 0 ? seconds / handoff : 0.0);
    for (const auto &[name, counters] : gemm_) {
      auto value = [&](const char *key) {
        auto it = counters.find(key);
        return it == counters.end() ? 0.0 : it->second.value;
      };
      std::printf("  %-44s run %.3f ms, task %.3f ms, direct cblas_sgemm "
                  "%.3f ms: run/direct %.3f, task/direct %.3f\n",
                  name.c_str(), value("run_ms"), value("task_ms"),
                  value("direct_ms"), value("run_ratio"), value("task_ratio"));
    }
    for (const auto &[name, counters] : joins_) {
      auto value = [&](const char *key) {
        auto it = counters.find(key);
        return it == counters.end() ? 0.0 : it->second.value;
      };
      std::printf("  %-44s vector %.3f ms, scalar std:: %.3f ms: "
                  "scalar/vector %.2f\n",
                  name.c_str(), value("vector_ms"), value("scalar_ms"),
                  value("speedup"));
    }
  }

private:
  std::map<std::string, double> perTaskSeconds_, perHopSeconds_;
  std::map<std::string, benchmark::UserCounters> gemm_, joins_;
};

bool hasFlag(int argc, char **argv, const char *prefix) {
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], prefix, std::strlen(prefix)) == 0)
      return true;
  return false;
}

//===----------------------------------------------------------------------===//
// Fused elementwise chains: bias + GELU over 512 x 4096 f32 as one fused
// kernel against the two einsum kernels it replaces (the sum written to a
// buffer and read back). Both run within every iteration, timed by this
// thread's CPU clock (a busy host preempts the benchmark, which a wall
// clock would charge to whichever part was running); counters fused_ms,
// unfused_ms, speedup.
//===----------------------------------------------------------------------===//

double threadSeconds() {
  timespec now;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * now.tv_nsec;
}

void BM_FusedBiasGeluVsUnfused(benchmark::State &state) {
  const int64_t rows = 512, cols = 4096;
  const std::vector<Shape> shapes = {{rows, cols}, {cols}};
  Result<cpu::FusedKernel> fused =
      cpu::FusedKernel::create(*EinsumSpec::parse("bh,h->bh"),
                               "add(in0, in1); gelu(s0)", shapes,
                               ElementType::F32);
  Result<cpu::EinsumKernel> add = cpu::EinsumKernel::create(
      *EinsumSpec::parse("bh,h->bh"), JoinKind::Add, std::nullopt, 0, shapes,
      ElementType::F32);
  Result<cpu::EinsumKernel> gelu = cpu::EinsumKernel::create(
      *EinsumSpec::parse("bh->bh"), JoinKind::Gelu, std::nullopt, 0,
      {{rows, cols}}, ElementType::F32);
  if (!fused || !add || !gelu) {
    state.SkipWithError("cannot build the kernels");
    return;
  }
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-3, 3);
  std::vector<float> x(rows * cols), bias(cols), sum(rows * cols),
      outFused(rows * cols), outUnfused(rows * cols);
  for (float &v : x)
    v = dist(rng);
  for (float &v : bias)
    v = dist(rng);
  const void *inputs[2] = {x.data(), bias.data()};
  const void *sumInput[1] = {sum.data()};
  double fusedSeconds = 0, unfusedSeconds = 0;
  for (auto _ : state) {
    double start = threadSeconds();
    fused->run(inputs, outFused.data());
    benchmark::DoNotOptimize(outFused.data());
    double middle = threadSeconds();
    add->run(inputs, sum.data());
    gelu->run(sumInput, outUnfused.data());
    benchmark::DoNotOptimize(outUnfused.data());
    double end = threadSeconds();
    fusedSeconds += middle - start;
    unfusedSeconds += end - middle;
  }
  double iterations = static_cast<double>(state.iterations());
  state.counters["fused_ms"] = fusedSeconds / iterations * 1e3;
  state.counters["unfused_ms"] = unfusedSeconds / iterations * 1e3;
  state.counters["speedup"] = unfusedSeconds / fusedSeconds;
}
BENCHMARK(BM_FusedBiasGeluVsUnfused)->UseRealTime()->Unit(
    benchmark::kMillisecond);

} // namespace

int main(int argc, char **argv) {
  // Medians over repetitions unless the caller chose otherwise.
  std::vector<char *> args(argv, argv + argc);
  std::string repetitions = "--benchmark_repetitions=5";
  std::string aggregatesOnly = "--benchmark_report_aggregates_only=true";
  if (!hasFlag(argc, argv, "--benchmark_repetitions"))
    args.push_back(repetitions.data());
  if (!hasFlag(argc, argv, "--benchmark_report_aggregates_only"))
    args.push_back(aggregatesOnly.data());
  int count = static_cast<int>(args.size());
  benchmark::Initialize(&count, args.data());
  if (benchmark::ReportUnrecognizedArguments(count, args.data()))
    return 1;
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.printSummary();
  benchmark::Shutdown();
  return 0;
}
