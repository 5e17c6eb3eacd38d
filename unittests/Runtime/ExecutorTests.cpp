//===- ExecutorTests.cpp - Scheduling, memory, traces, results ------------===//

#include "TestSupport.h"

#include "doppler/runtime/CpuBackend.h"
#include "doppler/runtime/Executor.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <thread>

#if defined(__linux__)
#include <sched.h>
#endif

using namespace doppler;
using namespace doppler::runtime;
using namespace doppler::runtime::test;

namespace {

std::unique_ptr<Executor> makeExecutor(int devices,
                                       CpuBackendOptions backendOptions = {},
                                       ExecutorOptions options = {}) {
  backendOptions.numDevices = devices;
  Result<std::unique_ptr<Backend>> backend = createCpuBackend(backendOptions);
  EXPECT_TRUE(backend) << backend.message();
  return std::make_unique<Executor>(std::move(*backend), options);
}

template <typename T> T unwrap(Result<T> result) {
  EXPECT_TRUE(result) << result.message();
  return std::move(*result);
}

RunResult runOk(Executor &executor, const TaskGraph &graph,
                const InputBindings &inputs = {}) {
  Result<RunResult> result = executor.run(graph, inputs);
  EXPECT_TRUE(result) << result.message();
  return result ? std::move(*result) : RunResult();
}

constexpr double kMs = 1e-3;

TEST(Executor, SoftmaxChainMatchesReference) {
  const int64_t rows = 8, cols = 33;
  TaskGraph g;
  ValueId x = unwrap(g.addInput(0, {rows, cols}));
  ValueId max =
      unwrap(g.addEinsum(0, "ij->i", JoinKind::Identity, AggKind::Max, {x}));
  ValueId shifted =
      unwrap(g.addEinsum(0, "ij,i->ij", JoinKind::Sub, std::nullopt, {x, max}));
  ValueId exps =
      unwrap(g.addEinsum(0, "ij->ij", JoinKind::Exp, std::nullopt, {shifted}));
  ValueId sums =
      unwrap(g.addEinsum(0, "ij->i", JoinKind::Identity, AggKind::Add, {exps}));
  ValueId softmax = unwrap(
      g.addEinsum(0, "ij,i->ij", JoinKind::Div, std::nullopt, {exps, sums}));
  ASSERT_TRUE(g.markOutput(softmax));

  std::vector<float> data = randomFloats(rows * cols, 5, -4, 4);
  auto executor = makeExecutor(1);
  RunResult result = runOk(*executor, g, {{x, data.data()}});
  std::vector<double> expected(rows * cols);
  for (int64_t i = 0; i < rows; ++i) {
    double rowMax = -INFINITY, sum = 0;
    for (int64_t j = 0; j < cols; ++j)
      rowMax = std::max(rowMax, double(data[i * cols + j]));
    for (int64_t j = 0; j < cols; ++j)
      sum += std::exp(data[i * cols + j] - rowMax);
    for (int64_t j = 0; j < cols; ++j)
      expected[i * cols + j] = std::exp(data[i * cols + j] - rowMax) / sum;
  }
  ASSERT_EQ(result.outputs.count(softmax), 1u);
  EXPECT_LE(relativeError(result.outputs[softmax].f32(), expected), 1e-5);
  EXPECT_EQ(result.outputs[softmax].shape, (Shape{rows, cols}));
}

TEST(Executor, RespectsDependenciesAcrossDevices) {
  // A layered random DAG of short delays over three devices.
  TaskGraph g;
  std::mt19937 rng(7);
  std::vector<ValueId> previous;
  for (int layer = 0; layer < 5; ++layer) {
    std::vector<ValueId> current;
    for (int i = 0; i < 4; ++i) {
      int device = static_cast<int>(rng() % 3);
      std::vector<ValueId> inputs;
      for (ValueId p : previous)
        if (rng() % 2)
          inputs.push_back(unwrap(g.onDevice(p, device)));
      current.push_back(unwrap(
          g.addDelay(device, 0.2 * kMs * (1 + rng() % 3), inputs, {16})));
    }
    previous = current;
  }
  auto executor = makeExecutor(3, {}, {});
  RunResult result = runOk(*executor, g);
  for (ValueId id = 0; id < g.size(); ++id) {
    const TaskTiming &timing = result.tasks[id];
    ASSERT_TRUE(timing.ran) << id;
    EXPECT_EQ(timing.device, g.task(id).device);
    for (ValueId input : g.task(id).inputs)
      EXPECT_LE(result.tasks[input].end, timing.start)
          << g.describe(input) << " -> " << g.describe(id);
  }
}

/// Three consumers on device 0 become ready (their inputs arrive through
/// device 0's copy worker) while a blocker keeps device 0 busy. Planned
/// readiness order: c[1], c[2], c[0]; priorities: c[0] < c[1] < c[2].
/// Assertions use the measured readiness (the end of each consumer's
/// transfer) so that a loaded machine cannot make them flaky.
struct ReadinessGraph {
  TaskGraph graph;
  ValueId blocker;
  ValueId consumers[3], transfers[3];

  ReadinessGraph() {
    blocker = *graph.addDelay(0, 40 * kMs);
    const double producerMs[3] = {24, 8, 16};
    for (int i = 0; i < 3; ++i) {
      ValueId producer = *graph.addDelay(i + 1, producerMs[i] * kMs, {}, {4});
      transfers[i] = *graph.addTransfer(producer, 0);
      consumers[i] = *graph.addDelay(0, 1 * kMs, {transfers[i]});
      EXPECT_TRUE(graph.setPriority(consumers[i], i));
    }
  }

  /// Consumer indices sorted by when they became ready.
  std::vector<int> readinessOrder(const RunResult &result) const {
    std::vector<int> order = {0, 1, 2};
    std::sort(order.begin(), order.end(), [&](int x, int y) {
      return result.tasks[transfers[x]].end < result.tasks[transfers[y]].end;
    });
    return order;
  }
  std::vector<int> startOrder(const RunResult &result) const {
    std::vector<int> order = {0, 1, 2};
    std::sort(order.begin(), order.end(), [&](int x, int y) {
      return result.tasks[consumers[x]].start <
             result.tasks[consumers[y]].start;
    });
    return order;
  }
};

TEST(Executor, DeviceServesReadyTasksInReadinessOrder) {
  ReadinessGraph rg;
  auto executor = makeExecutor(4);
  RunResult result = runOk(*executor, rg.graph);
  // Transfers into device 0 complete one after the other on its copy
  // worker, so readiness order is exact; FIFO must start them in it.
  EXPECT_EQ(rg.startOrder(result), rg.readinessOrder(result));
  for (ValueId consumer : rg.consumers)
    EXPECT_GE(result.tasks[consumer].start, result.tasks[rg.blocker].end);
}

TEST(Executor, PriorityOrderOverridesReadiness) {
  ReadinessGraph rg;
  ExecutorOptions options;
  options.order = ReadyOrder::Priority;
  auto executor = makeExecutor(4, {}, options);
  RunResult result = runOk(*executor, rg.graph);
  // Whenever a consumer was already queued when a later-priority one
  // started, it must have started first.
  const auto &t = result.tasks;
  int pairsChecked = 0;
  for (int a = 0; a < 3; ++a)
    for (int b = a + 1; b < 3; ++b)
      if (t[rg.transfers[a]].end + 1 * kMs < t[rg.consumers[b]].start) {
        EXPECT_LT(t[rg.consumers[a]].start, t[rg.consumers[b]].start)
            << a << " vs " << b;
        ++pairsChecked;
      }
  // All inputs arrive long before the 40 ms blocker ends.
  EXPECT_GT(pairsChecked, 0);
  // Switching back restores readiness order.
  executor->setReadyOrder(ReadyOrder::Fifo);
  RunResult fifo = runOk(*executor, rg.graph);
  EXPECT_EQ(rg.startOrder(fifo), rg.readinessOrder(fifo));
}

TEST(Executor, IndependentDevicesRunConcurrently) {
  TaskGraph g;
  ValueId first = unwrap(g.addDelay(0, 20 * kMs));
  ValueId second = unwrap(g.addDelay(1, 20 * kMs));
  auto executor = makeExecutor(2);
  RunResult result = runOk(*executor, g);
  const TaskTiming &x = result.tasks[first], &y = result.tasks[second];
  EXPECT_LT(x.start, y.end);
  EXPECT_LT(y.start, x.end);
  EXPECT_GE(result.makespan, 20 * kMs);
  EXPECT_GT(result.devices[0].utilization, 0.3);
  EXPECT_GT(result.devices[1].utilization, 0.3);
}

TEST(Executor, TransfersMoveDataAndHonourTheLinkModel) {
  TaskGraph g;
  ValueId x = unwrap(g.addInput(0, {1000}));
  ValueId onOne = unwrap(g.addTransfer(x, 1));
  ValueId doubled = unwrap(
      g.addEinsum(1, "i->i", JoinKind::Scale, std::nullopt, {onOne}, 2.0));
  ValueId back = unwrap(g.onDevice(doubled, 0));
  EXPECT_EQ(unwrap(g.onDevice(doubled, 0)), back); // Created once.
  ASSERT_TRUE(g.markOutput(back));

  CpuBackendOptions link;
  link.linkLatency = 2 * kMs;
  link.linkBandwidth = 4000.0 / (3 * kMs); // 4000 bytes take 3 ms.
  auto executor = makeExecutor(2, link);
  std::vector<float> data = randomFloats(1000, 11);
  RunResult result = runOk(*executor, g, {{x, data.data()}});
  const float *out = result.outputs[back].f32();
  for (int i = 0; i < 1000; ++i)
    ASSERT_EQ(out[i], 2.0f * data[i]);
  for (ValueId transfer : {onOne, back}) {
    const TaskTiming &timing = result.tasks[transfer];
    EXPECT_EQ(timing.worker, WorkerKind::Copy);
    EXPECT_GE(timing.end - timing.start, 5 * kMs - 1e-6);
  }
  EXPECT_EQ(result.devices[0].copyTasks, 1);
  EXPECT_EQ(result.devices[1].copyTasks, 1);
  EXPECT_EQ(result.devices[1].computeTasks, 1);
}

TEST(Executor, CopiesOverlapCompute) {
  // Device 0 computes for 30 ms while a 10 ms transfer lands on it.
  TaskGraph g;
  ValueId busy = unwrap(g.addDelay(0, 30 * kMs));
  ValueId produced = unwrap(g.addDelay(1, 0, {}, {8}));
  ValueId moved = unwrap(g.addTransfer(produced, 0, 10 * kMs));
  auto executor = makeExecutor(2);
  RunResult result = runOk(*executor, g);
  const TaskTiming &compute = result.tasks[busy];
  const TaskTiming &copy = result.tasks[moved];
  EXPECT_EQ(copy.device, 0);
  EXPECT_LT(copy.start, compute.end);
  EXPECT_LT(compute.start, copy.end);
}

TEST(Executor, SmallCopiesRunOnTheProducersWorker) {
  // Device 0's only copy worker is held 200 ms by a fixed-duration copy;
  // meanwhile device 1 produces a small value for device 0. Copied inline
  // by device 1's worker (CpuBackendOptions::inlineCopyBytes), it arrives
  // long before the held copy ends; with inline copies off it queues
  // behind it.
  TaskGraph g;
  ValueId early = unwrap(g.addDelay(1, 0, {}, {8}));
  ValueId held = unwrap(g.addTransfer(early, 0, 200 * kMs));
  (void)unwrap(g.addDelay(1, 20 * kMs)); // runs before `produced`
  ValueId x = unwrap(g.addInput(1, {256}));
  ValueId produced =
      unwrap(g.addEinsum(1, "i->i", JoinKind::Neg, std::nullopt, {x}));
  ValueId small = unwrap(g.addTransfer(produced, 0));
  ValueId doubled = unwrap(
      g.addEinsum(0, "i->i", JoinKind::Scale, std::nullopt, {small}, 2.0));
  ASSERT_TRUE(g.markOutput(doubled));
  std::vector<float> data = randomFloats(256, 5);
  // The wait policy without a memory limit parks nothing: copies stay
  // inline (doppler-run's default policy is wait).
  for (auto [inlineBytes, policy] :
       {std::pair{uint64_t{64} << 10, MemoryPolicy::Fail},
        std::pair{uint64_t{64} << 10, MemoryPolicy::Wait},
        std::pair{uint64_t{0}, MemoryPolicy::Fail}}) {
    SCOPED_TRACE(inlineBytes);
    SCOPED_TRACE(memoryPolicyName(policy));
    CpuBackendOptions cpu;
    cpu.inlineCopyBytes = inlineBytes;
    cpu.largeCopies = LargeCopies::CopyWorker;
    ExecutorOptions options;
    options.memoryPolicy = policy;
    auto executor = makeExecutor(2, cpu, options);
    RunResult result = runOk(*executor, g, {{x, data.data()}});
    const float *out = result.outputs[doubled].f32();
    for (int i = 0; i < 256; ++i)
      ASSERT_EQ(out[i], -2.0f * data[i]);
    const TaskTiming &copy = result.tasks[small];
    EXPECT_EQ(copy.device, 0);
    EXPECT_EQ(copy.worker, WorkerKind::Copy);
    EXPECT_EQ(result.devices[0].copyTasks, 2);
    if (inlineBytes)
      EXPECT_LT(copy.end, result.tasks[held].end - 100 * kMs);
    else
      EXPECT_GE(copy.start, result.tasks[held].end);
  }
}

/// A 1 MiB value made on device 1 after a 20 ms wait and copied to
/// device 0, whose copy worker a fixed-duration copy holds for 200 ms;
/// device 0 runs `busy0` ms of work from the start, device 1 `after1` ms
/// once the value is made (0: none).
struct LargeCopyGraph {
  static constexpr int64_t kElements = 256 * 1024;
  TaskGraph g;
  ValueId held, busy0 = -1, x, produced, after1 = -1, copy, doubled;
  LargeCopyGraph(double busy0Ms, double after1Ms) {
    ValueId early = unwrap(g.addDelay(1, 0, {}, {8}));
    held = unwrap(g.addTransfer(early, 0, 200 * kMs));
    if (busy0Ms > 0)
      busy0 = unwrap(g.addDelay(0, busy0Ms * kMs));
    (void)unwrap(g.addDelay(1, 20 * kMs)); // runs before `produced`
    x = unwrap(g.addInput(1, {kElements}));
    produced =
        unwrap(g.addEinsum(1, "i->i", JoinKind::Neg, std::nullopt, {x}));
    if (after1Ms > 0) // queued behind `produced` from the start
      after1 = unwrap(g.addDelay(1, after1Ms * kMs));
    copy = unwrap(g.addTransfer(produced, 0));
    doubled = unwrap(
        g.addEinsum(0, "i->i", JoinKind::Scale, std::nullopt, {copy}, 2.0));
    EXPECT_TRUE(g.markOutput(doubled));
  }
  RunResult run(LargeCopies largeCopies, const std::vector<float> &data) {
    CpuBackendOptions cpu;
    cpu.largeCopies = largeCopies;
    auto executor = makeExecutor(2, cpu);
    RunResult result = runOk(*executor, g, {{x, data.data()}});
    const float *out = result.outputs[doubled].f32();
    for (int64_t i = 0; i < kElements; ++i)
      EXPECT_EQ(out[i], -2.0f * data[i]) << i;
    EXPECT_EQ(result.tasks[copy].device, 0);
    EXPECT_EQ(result.tasks[copy].worker, WorkerKind::Copy);
    EXPECT_EQ(result.devices[0].copyTasks, 2);
    return result;
  }
};

TEST(Executor, LargeCopiesRunOnTheIdleProducersWorker) {
  // Device 1 has nothing queued once it made the value: it copies it
  // itself, while device 0 still runs its 100 ms and its copy worker is
  // held. With the copy workers, the copy queues behind the held one.
  LargeCopyGraph graph(/*busy0Ms=*/100, /*after1Ms=*/0);
  std::vector<float> data = randomFloats(LargeCopyGraph::kElements, 6);
  RunResult result = graph.run(LargeCopies::IdleProducer, data);
  const TaskTiming &copy = result.tasks[graph.copy];
  EXPECT_GE(copy.start, result.tasks[graph.produced].end);
  EXPECT_LT(copy.end, result.tasks[graph.busy0].end - 40 * kMs);
  EXPECT_LT(copy.end, result.tasks[graph.held].end - 100 * kMs);
  result = graph.run(LargeCopies::CopyWorker, data);
  EXPECT_GE(result.tasks[graph.copy].start, result.tasks[graph.held].end);
}

TEST(Executor, LargeCopiesRunOnTheDestinationsWorkerAfterItsTask) {
  // Device 1 has 100 ms of work queued when it made the value: device 0's
  // compute worker copies it once its own 60 ms task ended (not the
  // producer, still busy, nor the held copy worker).
  LargeCopyGraph graph(/*busy0Ms=*/60, /*after1Ms=*/100);
  std::vector<float> data = randomFloats(LargeCopyGraph::kElements, 7);
  RunResult result = graph.run(LargeCopies::ComputeWorkers, data);
  const TaskTiming &copy = result.tasks[graph.copy];
  EXPECT_GE(copy.start, result.tasks[graph.busy0].end);
  EXPECT_LT(copy.end, result.tasks[graph.after1].end - 20 * kMs);
  EXPECT_LT(copy.end, result.tasks[graph.held].end - 100 * kMs);
  EXPECT_GE(result.tasks[graph.doubled].start, copy.end);
  // IdleProducer (the default where no core is spare) leaves it to the
  // copy worker, behind the held copy.
  result = graph.run(LargeCopies::IdleProducer, data);
  EXPECT_GE(result.tasks[graph.copy].start, result.tasks[graph.held].end);
}

TEST(Executor, LargeCopiesLeaveTheCopyWorkersWhenNoCoreIsSpare) {
  auto path = [](int devices, LargeCopies mode, double bandwidth) {
    CpuBackendOptions cpu;
    cpu.numDevices = devices;
    cpu.largeCopies = mode;
    cpu.linkBandwidth = bandwidth;
    return unwrap(createCpuBackend(cpu))->largeCopyPath();
  };
  int cpus = static_cast<int>(std::thread::hardware_concurrency());
#if defined(__linux__)
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0)
    cpus = CPU_COUNT(&allowed);
#endif
  EXPECT_EQ(path(cpus, LargeCopies::Auto, 0), LargeCopyPath::IdleProducer);
  EXPECT_EQ(path(cpus + 1, LargeCopies::Auto, 0),
            LargeCopyPath::IdleProducer);
  if (cpus > 1) {
    EXPECT_EQ(path(cpus - 1, LargeCopies::Auto, 0), LargeCopyPath::CopyWorker);
  }
  EXPECT_EQ(path(cpus, LargeCopies::CopyWorker, 0), LargeCopyPath::CopyWorker);
  EXPECT_EQ(path(1, LargeCopies::IdleProducer, 0),
            LargeCopyPath::IdleProducer);
  EXPECT_EQ(path(1, LargeCopies::ComputeWorkers, 0),
            LargeCopyPath::ComputeWorkers);
  // An emulated link would hold a compute worker for the link's time.
  EXPECT_EQ(path(cpus, LargeCopies::ComputeWorkers, 1e9),
            LargeCopyPath::CopyWorker);
}

/// x -> a = exp(x), c = neg(x); d = a + c (output), all on device 0.
struct FanGraph {
  TaskGraph graph;
  ValueId x, a, c, d;
  FanGraph() {
    x = *graph.addInput(0, {1000});
    a = *graph.addEinsum(0, "i->i", JoinKind::Exp, std::nullopt, {x});
    c = *graph.addEinsum(0, "i->i", JoinKind::Neg, std::nullopt, {x});
    d = *graph.addEinsum(0, "i,i->i", JoinKind::Add, std::nullopt, {a, c});
    EXPECT_TRUE(graph.markOutput(d));
  }
};

TEST(Executor, FreesBuffersAfterTheirLastReader) {
  // By hand (4000 bytes each): x; +a = 8000; +c = 12000 (x still read by
  // c); c done frees x = 8000; +d = 12000; d done frees a, c = 4000.
  FanGraph fg;
  auto executor = makeExecutor(1);
  std::vector<float> data = randomFloats(1000, 2);
  for (int repeat = 0; repeat < 2; ++repeat) {
    RunResult result = runOk(*executor, fg.graph, {{fg.x, data.data()}});
    EXPECT_EQ(result.devices[0].peakBytes, 12000u);
    const float *out = result.outputs[fg.d].f32();
    EXPECT_FLOAT_EQ(out[7], std::exp(data[7]) - data[7]);
    EXPECT_EQ(result.outputs.size(), 1u);
  }

  // A chain frees as it goes: peak is two live buffers, not the chain.
  TaskGraph chain;
  ValueId value = unwrap(chain.addInput(0, {256}));
  ValueId input = value;
  for (int i = 0; i < 10; ++i)
    value = unwrap(
        chain.addEinsum(0, "i->i", JoinKind::Square, std::nullopt, {value}));
  ASSERT_TRUE(chain.markOutput(value));
  std::vector<float> ones(256, 1.0f);
  RunResult result = runOk(*executor, chain, {{input, ones.data()}});
  EXPECT_EQ(result.devices[0].peakBytes, 2u * 1024u);
}

TEST(Executor, MemoryLimitFailsCleanly) {
  FanGraph fg;
  ExecutorOptions options;
  options.memoryLimits = {10000};
  auto executor = makeExecutor(1, {}, options);
  std::vector<float> data = randomFloats(1000, 2);
  Result<RunResult> result = executor->run(fg.graph, {{fg.x, data.data()}});
  ASSERT_FALSE(result);
  EXPECT_NE(result.message().find("out of memory on device 0"),
            std::string::npos)
      << result.message();
  // The executor is still usable, and exactly enough memory suffices.
  executor->setMemoryLimit(0, 12000);
  EXPECT_TRUE(executor->run(fg.graph, {{fg.x, data.data()}}));
  // Inputs over the limit fail before anything runs.
  executor->setMemoryLimit(0, 100);
  EXPECT_FALSE(executor->run(fg.graph, {{fg.x, data.data()}}));
}

TEST(Executor, ChromeTraceIsWellFormed) {
  TaskGraph g;
  ValueId x = unwrap(g.addInput(0, {64, 64}));
  for (int device = 0; device < 3; ++device) {
    ValueId local = unwrap(g.onDevice(x, device));
    ValueId y = unwrap(g.addEinsum(device, "ij,jk->ik", JoinKind::Mul,
                                   AggKind::Add, {local, local}));
    ValueId z = unwrap(
        g.addEinsum(device, "ij->ij", JoinKind::Tanh, std::nullopt, {y}));
    ASSERT_TRUE(g.markOutput(unwrap(g.onDevice(z, 0))));
    ASSERT_TRUE(g.setLabel(z, "tanh on " + std::to_string(device)));
  }
  auto executor = makeExecutor(3);
  std::vector<float> data = randomFloats(64 * 64, 3);
  RunResult result = runOk(*executor, g, {{x, data.data()}});
  nlohmann::json trace = nlohmann::json::parse(result.chromeTrace(g));
  ASSERT_TRUE(trace.contains("traceEvents"));
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> lanes;
  int completeEvents = 0;
  std::set<int> processNames;
  for (const auto &event : trace["traceEvents"]) {
    for (const char *key : {"name", "ph", "pid", "tid"})
      ASSERT_TRUE(event.contains(key)) << event.dump();
    if (event["ph"] == "M") {
      if (event["name"] == "process_name")
        processNames.insert(event["pid"].get<int>());
      continue;
    }
    ASSERT_EQ(event["ph"], "X");
    ASSERT_TRUE(event.contains("ts") && event.contains("dur"));
    ASSERT_GE(event["dur"].get<double>(), 0);
    lanes[{event["pid"], event["tid"]}].push_back(
        {event["ts"].get<double>(), event["dur"].get<double>()});
    ++completeEvents;
  }
  int ran = 0;
  for (const TaskTiming &timing : result.tasks)
    ran += timing.ran;
  EXPECT_EQ(completeEvents, ran);
  EXPECT_EQ(processNames, (std::set<int>{0, 1, 2}));
  // Compute (tid 0) and copy (tid 1) lanes exist; none overlaps itself.
  EXPECT_TRUE(lanes.count({1, 0}) && lanes.count({1, 1}));
  for (auto &[lane, events] : lanes) {
    std::sort(events.begin(), events.end());
    for (size_t i = 1; i < events.size(); ++i)
      EXPECT_GE(events[i].first,
                events[i - 1].first + events[i - 1].second - 1e-6)
          << "pid " << lane.first << " tid " << lane.second;
  }
  std::string path = ::testing::TempDir() + "/doppler_runtime_trace.json";
  EXPECT_TRUE(result.writeChromeTrace(g, path));
}

/// A two-layer MLP on row blocks of X and column blocks of W1, placed
/// round-robin over `devices`.
std::vector<float> runBlockedMlp(int devices, std::vector<double> *reference) {
  const int64_t rows = 64, in = 48, hidden = 40, out = 24;
  const int64_t rowBlocks = 4, hiddenBlocks = 2;
  std::vector<float> xData = randomFloats(rows * in, 21);
  std::vector<float> w1Data = randomFloats(in * hidden, 22);
  std::vector<float> w2Data = randomFloats(hidden * out, 23);
  TaskGraph g;
  ValueId x = *g.addInput(0, {rows, in});
  ValueId w1 = *g.addInput(0, {in, hidden});
  ValueId w2 = *g.addInput(0, {hidden, out});
  int next = 0;
  auto place = [&] { return next++ % devices; };
  std::vector<ValueId> outBlocks;
  for (int64_t r = 0; r < rowBlocks; ++r) {
    int home = place();
    ValueId xBlock =
        *g.addSlice(0, x, {r * rows / rowBlocks, 0}, {rows / rowBlocks, in});
    std::vector<ValueId> partials;
    for (int64_t h = 0; h < hiddenBlocks; ++h) {
      int device = place();
      int64_t width = hidden / hiddenBlocks;
      ValueId w1Block = *g.addSlice(0, w1, {0, h * width}, {in, width});
      ValueId w2Block = *g.addSlice(0, w2, {h * width, 0}, {width, out});
      ValueId pre = *g.addEinsum(
          device, "ij,jk->ik", JoinKind::Mul, AggKind::Add,
          {*g.onDevice(xBlock, device), *g.onDevice(w1Block, device)});
      ValueId act =
          *g.addEinsum(device, "ij->ij", JoinKind::Relu, std::nullopt, {pre});
      ValueId partial =
          *g.addEinsum(device, "ij,jk->ik", JoinKind::Mul, AggKind::Add,
                       {act, *g.onDevice(w2Block, device)});
      partials.push_back(*g.onDevice(partial, home));
    }
    outBlocks.push_back(
        *g.addEinsum(home, "ij,ij->ij", JoinKind::Add, std::nullopt, partials));
  }
  std::vector<ValueId> gathered;
  for (ValueId block : outBlocks)
    gathered.push_back(*g.onDevice(block, 0));
  ValueId y = unwrap(g.addAssemble(
      0, {std::vector<int64_t>(rowBlocks, rows / rowBlocks), {out}}, gathered));
  EXPECT_TRUE(g.markOutput(y));

  auto executor = makeExecutor(devices);
  RunResult result =
      runOk(*executor, g,
            {{x, xData.data()}, {w1, w1Data.data()}, {w2, w2Data.data()}});
  if (reference) {
    EinsumSpec matmul = *EinsumSpec::parse("ij,jk->ik");
    std::vector<double> h = referenceEinsum(
        matmul, JoinKind::Mul, AggKind::Add, 0,
        {toDouble(xData), toDouble(w1Data)}, {{rows, in}, {in, hidden}});
    for (double &v : h)
      v = std::max(v, 0.0);
    *reference =
        referenceEinsum(matmul, JoinKind::Mul, AggKind::Add, 0,
                        {h, toDouble(w2Data)}, {{rows, hidden}, {hidden, out}});
  }
  const HostTensor &tensor = result.outputs[y];
  return std::vector<float>(tensor.f32(), tensor.f32() + rows * out);
}

TEST(Executor, OneTwoFourEightDevicesGiveIdenticalResults) {
  std::vector<double> reference;
  std::vector<float> single = runBlockedMlp(1, &reference);
  EXPECT_LE(relativeError(single.data(), reference), 1e-5);
  for (int devices : {2, 4, 8}) {
    std::vector<float> placed = runBlockedMlp(devices, nullptr);
    ASSERT_EQ(placed.size(), single.size());
    EXPECT_EQ(0, std::memcmp(placed.data(), single.data(),
                             single.size() * sizeof(float)))
        << devices << " devices";
  }
}

TEST(Executor, SliceAssembleRoundTripAcrossDevices) {
  TaskGraph g;
  ValueId x = unwrap(g.addInput(0, {9, 6}));
  std::vector<ValueId> blocks;
  int device = 0;
  for (int64_t r : {0, 4})
    for (int64_t c : {0, 1, 3}) {
      int64_t h = r == 0 ? 4 : 5, w = c == 0 ? 1 : c == 1 ? 2 : 3;
      ValueId block = unwrap(g.addSlice(0, x, {r, c}, {h, w}));
      ValueId away = unwrap(g.onDevice(block, 1 + device++ % 2));
      blocks.push_back(unwrap(g.onDevice(away, 0)));
    }
  ValueId y = unwrap(g.addAssemble(0, {{4, 5}, {1, 2, 3}}, blocks));
  ASSERT_TRUE(g.markOutput(y));
  auto executor = makeExecutor(3);
  std::vector<float> data = randomFloats(54, 8);
  RunResult result = runOk(*executor, g, {{x, data.data()}});
  EXPECT_EQ(0, std::memcmp(result.outputs[y].f32(), data.data(),
                           data.size() * sizeof(float)));
}

TEST(Executor, FillsAndInputsAsOutputs) {
  TaskGraph g;
  ValueId x = unwrap(g.addInput(0, {3}, ElementType::F64));
  ValueId ones = unwrap(g.addFill(1, {2, 2}, 1.0, ElementType::F16));
  ValueId sevens = unwrap(g.addFill(0, {4}, 7.0));
  ASSERT_TRUE(g.markOutput(x));
  ASSERT_TRUE(g.markOutput(ones));
  ASSERT_TRUE(g.markOutput(sevens));
  double data[3] = {1, 2, 3};
  auto executor = makeExecutor(2);
  RunResult result = runOk(*executor, g, {{x, data}});
  EXPECT_EQ(result.outputs[x].f64()[2], 3.0);
  uint16_t half;
  std::memcpy(&half, result.outputs[ones].bytes.data() + 6, 2);
  EXPECT_EQ(halfToFloat(half), 1.0f);
  EXPECT_EQ(result.outputs[sevens].f32()[3], 7.0f);
}

TEST(Executor, RejectsInvalidRunsWithMessages) {
  auto executor = makeExecutor(2);
  TaskGraph tooWide;
  ASSERT_TRUE(tooWide.addDelay(5, 0));
  Result<RunResult> wide = executor->run(tooWide, {});
  ASSERT_FALSE(wide);
  EXPECT_NE(wide.message().find("device 5"), std::string::npos);

  TaskGraph unbound;
  ValueId x = unwrap(unbound.addInput(0, {4}));
  ASSERT_TRUE(unbound.addEinsum(0, "i->i", JoinKind::Exp, std::nullopt, {x}));
  Result<RunResult> missing = executor->run(unbound, {});
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.message().find("no data bound"), std::string::npos);

  TaskGraph half;
  ValueId h = unwrap(half.addInput(0, {4}, ElementType::F16));
  ASSERT_TRUE(half.addEinsum(0, "i->i", JoinKind::Exp, std::nullopt, {h}));
  uint16_t halfData[4] = {};
  Result<RunResult> unsupported = executor->run(half, {{h, halfData}});
  ASSERT_FALSE(unsupported);
  EXPECT_NE(unsupported.message().find("f16"), std::string::npos);
}

TEST(Executor, ReusesPlansUntilTheGraphChanges) {
  TaskGraph g;
  ValueId x = unwrap(g.addInput(0, {2, 2}));
  ValueId y =
      unwrap(g.addEinsum(0, "ij->ji", JoinKind::Identity, std::nullopt, {x}));
  ASSERT_TRUE(g.markOutput(y));
  auto executor = makeExecutor(1);
  float data[4] = {1, 2, 3, 4};
  RunResult first = runOk(*executor, g, {{x, data}});
  RunResult second = runOk(*executor, g, {{x, data}});
  EXPECT_EQ(first.outputs[y].f32()[1], 3.0f);
  EXPECT_EQ(second.outputs[y].f32()[1], 3.0f);
  ValueId z =
      unwrap(g.addEinsum(0, "ij->i", JoinKind::Identity, AggKind::Add, {y}));
  ASSERT_TRUE(g.markOutput(z));
  RunResult third = runOk(*executor, g, {{x, data}});
  EXPECT_EQ(third.outputs[z].f32()[0], 4.0f);
}

/// A minimal backend: host memory, runs nothing but delays, and can refuse
/// to attach workers (as a CUDA backend would without a GPU).
class DelayOnlyBackend final : public Backend {
public:
  DelayOnlyBackend(int devices, bool failAttach)
      : devices_(devices), failAttach_(failAttach) {}
  std::string_view name() const override { return "delay-only"; }
  int numDevices() const override { return devices_; }
  Result<std::unique_ptr<PreparedGraph>>
  prepare(const TaskGraph &graph) override {
    for (ValueId id = 0; id < graph.size(); ++id)
      if (graph.task(id).kind != TaskKind::Delay &&
          graph.task(id).kind != TaskKind::Input)
        return Status::failure(graph.describe(id) + ": delays only");
    return std::make_unique<PreparedGraph>();
  }
  Status attachWorker(int device, WorkerKind, int) override {
    attached_.fetch_add(1);
    return failAttach_ ? Status::failure("no device " + std::to_string(device))
                       : Status();
  }
  Result<DeviceBuffer> allocate(int, uint64_t bytes) override {
    return DeviceBuffer{bytes ? std::malloc(bytes) : nullptr, bytes};
  }
  void deallocate(int, DeviceBuffer buffer) override { std::free(buffer.data); }
  Status upload(int, DeviceBuffer, const void *) override { return Status(); }
  Status download(int, DeviceBuffer, void *) override { return Status(); }
  Status execute(const TaskLaunch &) override {
    executed_.fetch_add(1);
    return Status();
  }
  int attached() const { return attached_.load(); }
  int executed() const { return executed_.load(); }

private:
  int devices_;
  bool failAttach_;
  std::atomic<int> attached_{0}, executed_{0};
};

TEST(Executor, RunsOnAnyBackendAndReportsWorkerFailures) {
  auto backend = std::make_unique<DelayOnlyBackend>(2, false);
  DelayOnlyBackend *raw = backend.get();
  ExecutorOptions options;
  options.copyWorkersPerDevice = 2;
  Executor executor(std::move(backend), options);
  EXPECT_EQ(raw->attached(), 2 * (1 + 2));
  TaskGraph g;
  ValueId a = unwrap(g.addDelay(0, 0, {}, {4}));
  ASSERT_TRUE(g.addDelay(1, 0, {unwrap(g.addTransfer(a, 1))}));
  Result<RunResult> rejected = executor.run(g, {});
  ASSERT_FALSE(rejected);
  EXPECT_NE(rejected.message().find("delays only"), std::string::npos);

  TaskGraph delays;
  for (int i = 0; i < 6; ++i)
    ASSERT_TRUE(delays.addDelay(i % 2, 0));
  EXPECT_TRUE(executor.run(delays, {}));
  EXPECT_EQ(raw->executed(), 6);

  Executor broken(std::make_unique<DelayOnlyBackend>(1, true));
  Result<RunResult> failed = broken.run(delays, {});
  ASSERT_FALSE(failed);
  EXPECT_NE(failed.message().find("failed to start"), std::string::npos);
}

TEST(Executor, EmptyGraphRuns) {
  TaskGraph g;
  auto executor = makeExecutor(1);
  RunResult result = runOk(*executor, g);
  EXPECT_EQ(result.makespan, 0);
}

} // namespace
