//===- FaultInjectionTests.cpp - Runs that fail stop cleanly --------------===//
//
// Every fault kind (kernel, alloc, transfer) at the first, a middle and the
// last task it applies to, on 1, 2 and 4 CPU devices; memory limits; real
// allocation failures and exceptions from a backend; a failing task with
// many dependants on other devices; several devices failing at once. Each
// run must return (a watchdog ends the process if it hangs), fail with a
// message naming the task, leave no buffer allocated (a counting backend
// checks, besides ASan), and leave the executor usable.
//
//===----------------------------------------------------------------------===//

#include "doppler/runtime/CpuBackend.h"
#include "doppler/runtime/Executor.h"

#include "ExecutorTestSupport.h"
#include "TestSupport.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <future>
#include <new>
#include <string>
#include <thread>

// A real allocation of terabytes must fail by returning null (the runtime's
// error path), not by the sanitizer's report-and-die default.
extern "C" __attribute__((used)) const char *__asan_default_options() {
  return "allocator_may_return_null=1";
}
extern "C" __attribute__((used)) const char *__tsan_default_options() {
  return "allocator_may_return_null=1";
}

namespace doppler::runtime {
namespace {

using test::randomFloats;
using test::runGuarded;
using test::unwrap;

/// Forwards to the CPU backend, counts live buffers, and fails on demand
/// the way a broken device would (a Status from execute, an exception).
class CountingBackend : public test::ForwardingCpuBackend {
public:
  explicit CountingBackend(int devices)
      : ForwardingCpuBackend(devices, "counting-cpu") {}

  Result<DeviceBuffer> allocate(int device, uint64_t bytes) override {
    if (throwAbove && bytes > throwAbove)
      throw std::bad_alloc();
    Result<DeviceBuffer> buffer = ForwardingCpuBackend::allocate(device, bytes);
    if (buffer)
      ++live;
    return buffer;
  }
  void deallocate(int device, DeviceBuffer buffer) override {
    --live;
    ForwardingCpuBackend::deallocate(device, buffer);
  }
  Status download(int device, DeviceBuffer src, void *dst) override {
    if (throwDownload)
      throw std::bad_alloc();
    return ForwardingCpuBackend::download(device, src, dst);
  }
  Status execute(const TaskLaunch &launch) override {
    if (failExecute && failExecute(*launch.task))
      return Status::failure("device error");
    if (throwExecute && throwExecute(*launch.task))
      throw std::runtime_error("kernel threw");
    return ForwardingCpuBackend::execute(launch);
  }

  std::atomic<int64_t> live{0};
  /// allocate() throws std::bad_alloc for more bytes than this (0: never).
  uint64_t throwAbove = 0;
  /// download() throws std::bad_alloc: the run's end, after every task.
  bool throwDownload = false;
  std::function<bool(const Task &)> failExecute, throwExecute;
};

/// x (64x64 on device 0) goes to every device d, which computes
/// tanh(x_d @ x_d) * (d + 1); the results come back to device 0 and are
/// summed into the output. Transfers exist only with two or more devices.
struct SpreadGraph {
  TaskGraph graph;
  ValueId x = -1, output = -1;
  std::vector<float> data = randomFloats(64 * 64, 5);

  explicit SpreadGraph(int devices) {
    x = unwrap(graph.addInput(0, {64, 64}));
    ValueId sum = -1;
    for (int d = 0; d < devices; ++d) {
      ValueId local = unwrap(graph.onDevice(x, d));
      ValueId product = unwrap(graph.addEinsum(d, "ij,jk->ik", JoinKind::Mul,
                                               AggKind::Add, {local, local}));
      ValueId tanh = unwrap(graph.addEinsum(d, "ij->ij", JoinKind::Tanh,
                                            std::nullopt, {product}));
      ValueId scaled = unwrap(graph.addEinsum(d, "ij->ij", JoinKind::Scale,
                                              std::nullopt, {tanh}, d + 1.0));
      ValueId back = unwrap(graph.onDevice(scaled, 0));
      sum = sum < 0 ? back
                    : unwrap(graph.addEinsum(0, "ij,ij->ij", JoinKind::Add,
                                             std::nullopt, {sum, back}));
    }
    output = sum;
    EXPECT_TRUE(graph.markOutput(output));
  }
  InputBindings inputs() const { return {{x, data.data()}}; }
};

/// The test's own idea of which tasks a fault kind applies to (a second
/// opinion on the executor's).
bool appliesTo(FaultKind kind, const TaskGraph &graph, ValueId id) {
  TaskKind task = graph.task(id).kind;
  switch (kind) {
  case FaultKind::Kernel:
    return task != TaskKind::Input && task != TaskKind::Transfer;
  case FaultKind::Transfer:
    return task == TaskKind::Transfer;
  case FaultKind::Alloc:
    return true; // Every task of SpreadGraph has a buffer.
  case FaultKind::Hang:
    return task != TaskKind::Input; // Compute and copies alike.
  case FaultKind::None:
    break;
  }
  return false;
}

std::string expectedFault(FaultKind kind, uint64_t bytes) {
  if (kind == FaultKind::Alloc)
    return "cannot allocate " + std::to_string(bytes) +
           " bytes (injected fault)";
  return "injected " + std::string(faultKindName(kind)) + " fault";
}

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

struct FaultCase {
  FaultKind kind;
  int devices;
};

class FaultAtEveryPosition : public ::testing::TestWithParam<FaultCase> {};

TEST_P(FaultAtEveryPosition, FailsNamingTheTaskAndFreesEverything) {
  FaultCase param = GetParam();
  SpreadGraph sg(param.devices);
  std::vector<ValueId> candidates;
  for (ValueId id = 0; id < sg.graph.size(); ++id)
    if (appliesTo(param.kind, sg.graph, id))
      candidates.push_back(id);
  ASSERT_GE(candidates.size(), 1u);

  auto backend = std::make_unique<CountingBackend>(param.devices);
  CountingBackend &counting = *backend;
  Executor executor(std::move(backend));
  Result<RunResult> clean = runGuarded(executor, sg.graph, sg.inputs());
  ASSERT_TRUE(clean) << clean.message();
  std::vector<float> cleanOutput(clean->outputs[sg.output].f32(),
                                 clean->outputs[sg.output].f32() + 64 * 64);

  size_t positions[] = {0, candidates.size() / 2, candidates.size() - 1};
  for (size_t position : positions) {
    ValueId victim = candidates[position];
    // "task 17 (einsum ij,jk->ik mul/add on device 1): injected ..."
    std::string what = sg.graph.describe(victim); // "%17 einsum ..."
    std::string expected =
        "task " + std::to_string(victim) + " (" +
        what.substr(what.find(' ') + 1) + " on device " +
        std::to_string(sg.graph.task(victim).device) +
        "): " + expectedFault(param.kind, sg.graph.byteSize(victim));
    // By id, then as the Nth task of the kind.
    FaultInjection byId{param.kind, victim, 0};
    FaultInjection byCount{param.kind, -1, static_cast<int64_t>(position) + 1};
    for (FaultInjection injection : {byId, byCount}) {
      SCOPED_TRACE("fault at task " + std::to_string(victim) + " (" +
                   sg.graph.describe(victim) + "), nth " +
                   std::to_string(injection.nth));
      executor.setFaultInjection(injection);
      Result<RunResult> run = runGuarded(executor, sg.graph, sg.inputs());
      ASSERT_FALSE(run);
      EXPECT_EQ(run.message(), expected);
      EXPECT_EQ(counting.live.load(), 0) << "buffers left allocated";
    }
  }

  // Nothing is left behind: the same executor runs cleanly again.
  executor.setFaultInjection({});
  Result<RunResult> again = runGuarded(executor, sg.graph, sg.inputs());
  ASSERT_TRUE(again) << again.message();
  EXPECT_EQ(std::vector<float>(again->outputs[sg.output].f32(),
                               again->outputs[sg.output].f32() + 64 * 64),
            cleanOutput);
  EXPECT_EQ(counting.live.load(), 0);
}

std::string caseName(const ::testing::TestParamInfo<FaultCase> &info) {
  return std::string(faultKindName(info.param.kind)) + "_on_" +
         std::to_string(info.param.devices) + "_devices";
}

INSTANTIATE_TEST_SUITE_P(Faults, FaultAtEveryPosition,
                         ::testing::Values(FaultCase{FaultKind::Kernel, 1},
                                           FaultCase{FaultKind::Kernel, 2},
                                           FaultCase{FaultKind::Kernel, 4},
                                           FaultCase{FaultKind::Alloc, 1},
                                           FaultCase{FaultKind::Alloc, 2},
                                           FaultCase{FaultKind::Alloc, 4},
                                           FaultCase{FaultKind::Transfer, 2},
                                           FaultCase{FaultKind::Transfer, 4}),
                         caseName);

TEST(FaultInjection, IsOffByDefault) {
  ExecutorOptions options;
  EXPECT_FALSE(options.fault.enabled());
  SpreadGraph sg(2);
  Executor executor(std::make_unique<CountingBackend>(2));
  EXPECT_TRUE(runGuarded(executor, sg.graph, sg.inputs()));
}

TEST(FaultInjection, ParsesTheCommandLineForm) {
  FaultInjection fault = unwrap(parseFaultInjection("kernel:17"));
  EXPECT_EQ(fault.kind, FaultKind::Kernel);
  EXPECT_EQ(fault.task, 17);
  fault = unwrap(parseFaultInjection("transfer:#3"));
  EXPECT_EQ(fault.kind, FaultKind::Transfer);
  EXPECT_EQ(fault.task, -1);
  EXPECT_EQ(fault.nth, 3);
  EXPECT_EQ(unwrap(parseFaultInjection("alloc:0")).kind, FaultKind::Alloc);
  for (const char *bad :
       {"", "kernel", "kernel:", "kernel:#", "kernel:#0", "kernel:-1",
        "kernel:1x", "disk:3", "none:3", "kernel:99999999999999999999", ":3"})
    EXPECT_FALSE(parseFaultInjection(bad)) << bad;
}

TEST(FaultInjection, RefusesAFaultThatWouldMiss) {
  SpreadGraph sg(1); // No transfers at all.
  Executor executor(std::make_unique<CountingBackend>(1));
  executor.setFaultInjection({FaultKind::Transfer, -1, 1});
  Result<RunResult> run = runGuarded(executor, sg.graph, sg.inputs());
  ASSERT_FALSE(run);
  EXPECT_TRUE(contains(run.message(), "no transfer task #1")) << run.message();
  executor.setFaultInjection({FaultKind::Kernel, sg.x, 0});
  run = runGuarded(executor, sg.graph, sg.inputs());
  ASSERT_FALSE(run);
  EXPECT_TRUE(contains(run.message(), "cannot have a kernel fault"))
      << run.message();
  executor.setFaultInjection({FaultKind::Kernel, 1000, 0});
  EXPECT_FALSE(runGuarded(executor, sg.graph, sg.inputs()));
}

TEST(FaultInjection, AllocOfAGraphInputFailsBeforeTheRun) {
  SpreadGraph sg(2);
  auto backend = std::make_unique<CountingBackend>(2);
  CountingBackend &counting = *backend;
  Executor executor(std::move(backend));
  executor.setFaultInjection({FaultKind::Alloc, sg.x, 0});
  Result<RunResult> run = runGuarded(executor, sg.graph, sg.inputs());
  ASSERT_FALSE(run);
  EXPECT_TRUE(contains(run.message(),
                       "task 0 (input on device 0): cannot allocate 16384 "
                       "bytes (injected fault)"))
      << run.message();
  EXPECT_EQ(counting.live.load(), 0);
}

/// A root on device 0 whose result every other device waits for, each
/// through a chain of one-second delays: when the root fails, none of them
/// may run (or be waited for).
TEST(FaultInjection, ManyDependantsOnOtherDevicesDoNotRun) {
  constexpr int kDevices = 4, kChain = 20;
  TaskGraph graph;
  ValueId x = unwrap(graph.addInput(0, {16}));
  ValueId root =
      unwrap(graph.addEinsum(0, "i->i", JoinKind::Exp, std::nullopt, {x}));
  for (int d = 0; d < kDevices; ++d)
    for (int branch = 0; branch < 3; ++branch) {
      ValueId value = unwrap(graph.onDevice(root, d));
      for (int i = 0; i < kChain; ++i)
        value = unwrap(graph.addDelay(d, 1.0, {value}, {16}));
      ASSERT_TRUE(graph.markOutput(value));
    }
  auto backend = std::make_unique<CountingBackend>(kDevices);
  CountingBackend &counting = *backend;
  Executor executor(std::move(backend));
  executor.setFaultInjection({FaultKind::Kernel, root, 0});
  std::vector<float> data(16, 1.0f);
  auto start = std::chrono::steady_clock::now();
  Result<RunResult> run = runGuarded(executor, graph, {{x, data.data()}});
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  ASSERT_FALSE(run);
  EXPECT_TRUE(contains(run.message(), "task 1 (einsum i->i exp on device 0): "
                                      "injected kernel fault"))
      << run.message();
  // Running even one delay would take a second.
  EXPECT_LT(seconds, 0.9);
  EXPECT_EQ(counting.live.load(), 0);
}

/// Every device's einsums fail in the backend at about the same time: one
/// error (naming one of them) wins, the run returns, nothing leaks.
TEST(FaultInjection, SeveralDevicesFailAtOnce) {
  for (bool throwing : {false, true}) {
    SCOPED_TRACE(throwing ? "exceptions" : "statuses");
    SpreadGraph sg(4);
    auto backend = std::make_unique<CountingBackend>(4);
    CountingBackend &counting = *backend;
    auto isMatmul = [](const Task &task) {
      return task.kind == TaskKind::Einsum && task.spec.contracts();
    };
    (throwing ? counting.throwExecute : counting.failExecute) = isMatmul;
    Executor executor(std::move(backend));
    for (int repeat = 0; repeat < 20; ++repeat) {
      Result<RunResult> run = runGuarded(executor, sg.graph, sg.inputs());
      ASSERT_FALSE(run);
      EXPECT_TRUE(contains(run.message(), "einsum ij,jk->ik mul/add on device"))
          << run.message();
      EXPECT_TRUE(contains(run.message(), throwing
                                              ? "): exception: kernel threw"
                                              : "): device error"))
          << run.message();
      EXPECT_EQ(counting.live.load(), 0);
    }
  }
}

TEST(FaultInjection, MemoryLimitNamesTheTask) {
  SpreadGraph sg(2);
  auto backend = std::make_unique<CountingBackend>(2);
  CountingBackend &counting = *backend;
  Executor executor(std::move(backend));
  // Device 1's first buffer is x's copy (16384 bytes): it does not fit.
  executor.setMemoryLimit(1, 16000);
  Result<RunResult> run = runGuarded(executor, sg.graph, sg.inputs());
  ASSERT_FALSE(run);
  EXPECT_TRUE(contains(run.message(),
                       "task 4 (transfer 0->1 on device 1): out of memory on "
                       "device 1: needs 16384 bytes with 0 in use and a limit "
                       "of 16000"))
      << run.message();
  EXPECT_EQ(counting.live.load(), 0);
  executor.setMemoryLimit(1, 0);
  EXPECT_TRUE(runGuarded(executor, sg.graph, sg.inputs()));
}

/// A buffer of 256 TiB on device 1, more than x86-64's 128 TiB of user
/// address space: the host allocation really fails (null from the
/// allocator, even where the kernel overcommits), in the CPU backend.
TEST(FaultInjection, HugeBufferFailsToAllocate) {
  TaskGraph graph;
  ValueId small = unwrap(graph.addFill(0, {16}, 1.0));
  ValueId huge = unwrap(graph.addFill(1, {int64_t(1) << 46}, 2.0));
  ValueId part = unwrap(graph.addSlice(1, huge, {0}, {16}));
  ValueId moved = unwrap(graph.onDevice(part, 0));
  ValueId sum = unwrap(graph.addEinsum(0, "i,i->i", JoinKind::Add, std::nullopt,
                                       {small, moved}));
  ASSERT_TRUE(graph.markOutput(sum));
  auto backend = std::make_unique<CountingBackend>(2);
  CountingBackend &counting = *backend;
  Executor executor(std::move(backend));
  Result<RunResult> run = runGuarded(executor, graph, {});
  ASSERT_FALSE(run);
  EXPECT_TRUE(contains(
      run.message(), "task " + std::to_string(huge) +
                         " (fill on device 1): cannot allocate 281474976710656 "
                         "bytes of host memory"))
      << run.message();
  EXPECT_EQ(counting.live.load(), 0);
}

/// std::bad_alloc thrown while allocating (as an allocator that throws
/// would): the worker threads survive, the run fails naming the task.
TEST(FaultInjection, BadAllocFromTheBackendFailsTheRun) {
  // x (64 bytes) on both devices; each computes an outer product (1024
  // bytes), whose allocation throws on both at about the same time.
  TaskGraph graph;
  ValueId x = unwrap(graph.addInput(0, {16}));
  for (int d = 0; d < 2; ++d) {
    ValueId local = unwrap(graph.onDevice(x, d));
    ASSERT_TRUE(graph.markOutput(unwrap(graph.addEinsum(
        d, "i,j->ij", JoinKind::Mul, std::nullopt, {local, local}))));
  }
  auto backend = std::make_unique<CountingBackend>(2);
  CountingBackend &counting = *backend;
  counting.throwAbove = 512;
  Executor executor(std::move(backend));
  std::vector<float> data(16, 1.0f);
  for (int repeat = 0; repeat < 10; ++repeat) {
    Result<RunResult> run = runGuarded(executor, graph, {{x, data.data()}});
    ASSERT_FALSE(run);
    EXPECT_TRUE(contains(run.message(), " (einsum i,j->ij mul on device "))
        << run.message();
    EXPECT_TRUE(contains(run.message(), "): out of host memory "
                                        "(std::bad_alloc)"))
        << run.message();
    EXPECT_EQ(counting.live.load(), 0);
  }
  // A graph input that throws fails before the run starts.
  counting.throwAbove = 32;
  Result<RunResult> run = runGuarded(executor, graph, {{x, data.data()}});
  ASSERT_FALSE(run);
  EXPECT_EQ(run.message(),
            "task 0 (input on device 0): out of host memory (std::bad_alloc)");
  EXPECT_EQ(counting.live.load(), 0);
  counting.throwAbove = 0;
  EXPECT_TRUE(runGuarded(executor, graph, {{x, data.data()}}));
}

/// An exception after the last task, while the outputs are copied back:
/// run() still frees every buffer (the outputs were left allocated before).
TEST(FaultInjection, ExceptionCopyingOutputsBackFreesEverything) {
  SpreadGraph sg(2);
  auto backend = std::make_unique<CountingBackend>(2);
  CountingBackend &counting = *backend;
  counting.throwDownload = true;
  Executor executor(std::move(backend));
  Result<RunResult> run = runGuarded(executor, sg.graph, sg.inputs());
  ASSERT_FALSE(run);
  EXPECT_EQ(run.message(), "copying output task 9 (einsum ij,ij->ij add on "
                           "device 0) to the host: out of host memory "
                           "(std::bad_alloc)");
  EXPECT_EQ(counting.live.load(), 0);
  counting.throwDownload = false;
  EXPECT_TRUE(runGuarded(executor, sg.graph, sg.inputs()));
}

} // namespace
} // namespace doppler::runtime
