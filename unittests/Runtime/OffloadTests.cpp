//===- OffloadTests.cpp - Offload to host, waiting for memory, program order =//
//
// Issue 17's runtime side: evict/reload tasks round-trip data exactly; with
// MemoryPolicy::Wait a graph whose working set exceeds a device's limit runs
// within it once evicts and reloads are inserted; control dependencies
// order a reload without keeping buffers alive; ReadyOrder::Program runs
// each device's tasks in id order; and impossible limits fail with a clear
// message instead of hanging (every run is under a watchdog).
//
//===----------------------------------------------------------------------===//

#include "doppler/runtime/CpuBackend.h"
#include "doppler/runtime/Executor.h"

#include "ExecutorTestSupport.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace doppler::runtime {
namespace {

using Clock = std::chrono::steady_clock;
using test::runGuarded;
using test::unwrap;

/// Forwards to the CPU backend, counts live device and host buffers, and
/// records when buffers are freed and when tasks start.
class RecordingBackend : public test::ForwardingCpuBackend {
public:
  explicit RecordingBackend(int devices)
      : ForwardingCpuBackend(devices, "recording-cpu") {}

  Result<DeviceBuffer> allocate(int device, uint64_t bytes) override {
    Result<DeviceBuffer> buffer = ForwardingCpuBackend::allocate(device, bytes);
    if (buffer)
      ++liveDevice;
    return buffer;
  }
  void deallocate(int device, DeviceBuffer buffer) override {
    --liveDevice;
    record(buffer.data);
    ForwardingCpuBackend::deallocate(device, buffer);
  }
  Result<DeviceBuffer> allocateHost(uint64_t bytes) override {
    Result<DeviceBuffer> buffer = ForwardingCpuBackend::allocateHost(bytes);
    if (buffer)
      ++liveHost;
    return buffer;
  }
  void deallocateHost(DeviceBuffer buffer) override {
    --liveHost;
    ForwardingCpuBackend::deallocateHost(buffer);
  }
  Status execute(const TaskLaunch &launch) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      started[launch.id] = Clock::now();
      outputOf[launch.id] = launch.output.data;
    }
    return ForwardingCpuBackend::execute(launch);
  }

  /// When the buffer task `id` wrote was freed (max time when it was not):
  /// the first free of its address after the task started (the arena
  /// reuses addresses).
  Clock::time_point freedAt(ValueId id) {
    std::lock_guard<std::mutex> lock(mutex_);
    void *data = outputOf.at(id);
    Clock::time_point start = started.at(id);
    for (const auto &[address, when] : freed_)
      if (address == data && when >= start)
        return when;
    return Clock::time_point::max();
  }

  std::atomic<int64_t> liveDevice{0}, liveHost{0};
  std::map<ValueId, Clock::time_point> started;
  std::map<ValueId, void *> outputOf;

private:
  void record(void *data) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (data)
      freed_.emplace_back(data, Clock::now());
  }

  std::mutex mutex_;
  std::vector<std::pair<void *, Clock::time_point>> freed_;
};

std::unique_ptr<Backend> cpu(int devices) {
  CpuBackendOptions options;
  options.numDevices = devices;
  options.pinComputeWorkers = false;
  return std::move(*createCpuBackend(options));
}

//===----------------------------------------------------------------------===//
// Round trips
//===----------------------------------------------------------------------===//

template <typename T> void checkRoundTrip(int devices, int target) {
  ElementType type = sizeof(T) == 4 ? ElementType::F32 : ElementType::F64;
  std::mt19937 rng(7 + devices * 10 + target);
  std::uniform_real_distribution<T> dist(-1e3, 1e3);
  std::vector<T> data(37 * 5);
  for (T &v : data)
    v = dist(rng);
  TaskGraph g;
  ValueId x = unwrap(g.addInput(0, {37, 5}, type));
  ValueId stash = unwrap(g.addEvict(x));
  ValueId back = unwrap(g.addReload(stash, target));
  ASSERT_TRUE(g.markOutput(back).ok());
  EXPECT_TRUE(g.task(stash).onHost);
  EXPECT_EQ(g.task(stash).device, 0);
  EXPECT_EQ(g.task(back).device, target);
  EXPECT_FALSE(g.task(back).onHost);

  auto backend = std::make_unique<RecordingBackend>(devices);
  RecordingBackend *recorder = backend.get();
  Executor executor(std::move(backend));
  RunResult run = unwrap(runGuarded(executor, g, {{x, data.data()}}));
  const HostTensor &out = run.outputs.at(back);
  EXPECT_EQ(out.type, type);
  ASSERT_EQ(out.bytes.size(), data.size() * sizeof(T));
  EXPECT_EQ(std::memcmp(out.bytes.data(), data.data(), out.bytes.size()), 0);
  EXPECT_EQ(run.hostPeakBytes, data.size() * sizeof(T));
  // Both copies ran on copy workers, of the source and target devices.
  EXPECT_EQ(run.tasks[stash].worker, WorkerKind::Copy);
  EXPECT_EQ(run.tasks[stash].device, 0);
  EXPECT_EQ(run.tasks[back].worker, WorkerKind::Copy);
  EXPECT_EQ(run.tasks[back].device, target);
  // The host value does not count on any device, and the input was freed
  // once evicted (its only reader), before the reload.
  EXPECT_EQ(run.devices[0].peakBytes, data.size() * sizeof(T));
  EXPECT_EQ(run.devices[target].peakBytes, data.size() * sizeof(T));
  EXPECT_EQ(recorder->liveHost.load(), 0);
  EXPECT_EQ(recorder->liveDevice.load(), 0);
}

TEST(Offload, EvictReloadRoundTripsExactly) {
  checkRoundTrip<float>(1, 0);
  checkRoundTrip<double>(1, 0);
  checkRoundTrip<float>(2, 1);
  checkRoundTrip<double>(2, 1);
}

//===----------------------------------------------------------------------===//
// Chains with skip connections: more live data than the limit allows
//===----------------------------------------------------------------------===//

/// One device's chain v0 = input, v_i = f(v_{i-1}) for i < skip and
/// v_i = g(v_{i-1}, v_{i-skip}) after: skip + 1 values live at once. With
/// `offload`, every v_j read again later is evicted when made and reloaded
/// (after v_{i-1}) just before use, so that four values suffice.
struct Chain {
  int device = 0;
  int64_t elements = 0;
  int skip = 0;
  int length = 0;
  ValueId input = -1, output = -1;
  std::vector<float> data;
  uint64_t bytes() const { return static_cast<uint64_t>(elements) * 4; }
};

void buildChain(TaskGraph &g, Chain &chain, bool offload) {
  int dev = chain.device;
  std::vector<ValueId> v, stash;
  chain.input = unwrap(g.addInput(dev, {chain.elements}));
  v.push_back(chain.input);
  auto keep = [&](int j) {
    stash.push_back(offload && j + chain.skip <= chain.length
                        ? unwrap(g.addEvict(v[j]))
                        : -1);
  };
  keep(0);
  for (int i = 1; i <= chain.length; ++i) {
    if (i < chain.skip) {
      v.push_back(unwrap(g.addFused(dev, "i->i", "scale(in0, 0.75)", {v[i - 1]})));
    } else {
      ValueId old = v[i - chain.skip];
      if (offload)
        old = unwrap(g.addReload(stash[i - chain.skip], dev, {v[i - 1]}));
      v.push_back(unwrap(g.addFused(dev, "i,i->i", "add(in0, in1); scale(s0, 0.5)",
                                    {v[i - 1], old})));
    }
    keep(i);
  }
  chain.output = v.back();
  ASSERT_TRUE(g.markOutput(chain.output).ok());
}

std::vector<Chain> randomChains(uint32_t seed, int devices) {
  std::mt19937 rng(seed);
  std::vector<Chain> chains(devices);
  for (int d = 0; d < devices; ++d) {
    Chain &chain = chains[d];
    chain.device = d;
    chain.elements = std::uniform_int_distribution<int64_t>(16, 700)(rng);
    chain.skip = std::uniform_int_distribution<int>(4, 7)(rng);
    chain.length =
        chain.skip + std::uniform_int_distribution<int>(2, 14)(rng);
    std::uniform_real_distribution<float> dist(-1, 1);
    chain.data.resize(chain.elements);
    for (float &x : chain.data)
      x = dist(rng);
  }
  return chains;
}

struct ChainRun {
  Result<RunResult> result = Status::failure("not run");
  std::map<int, std::vector<unsigned char>> outputs; // By device.
};

ChainRun runChains(std::vector<Chain> chains, bool offload, int devices,
                   ReadyOrder order, MemoryPolicy policy, bool limited,
                   int repetitions, TaskGraph *graphOut = nullptr,
                   int copyLanes = 1) {
  TaskGraph g;
  for (Chain &chain : chains)
    buildChain(g, chain, offload);
  InputBindings inputs;
  for (const Chain &chain : chains)
    inputs[chain.input] = chain.data.data();
  ExecutorOptions options;
  options.order = order;
  options.memoryPolicy = policy;
  options.copyWorkersPerDevice = copyLanes;
  if (limited)
    for (const Chain &chain : chains) {
      options.memoryLimits.resize(devices, 0);
      options.memoryLimits[chain.device] = 4 * chain.bytes();
    }
  auto backend = std::make_unique<RecordingBackend>(devices);
  RecordingBackend *recorder = backend.get();
  Executor executor(std::move(backend), options);
  ChainRun out;
  for (int rep = 0; rep < repetitions; ++rep) {
    out.result = runGuarded(executor, g, inputs);
    EXPECT_EQ(recorder->liveDevice.load(), 0);
    EXPECT_EQ(recorder->liveHost.load(), 0);
    if (!out.result)
      return out;
    for (const Chain &chain : chains) {
      const std::vector<unsigned char> &bytes =
          out.result->outputs.at(chain.output).bytes;
      if (rep == 0)
        out.outputs[chain.device] = bytes;
      else
        EXPECT_EQ(out.outputs[chain.device], bytes) << "repetition " << rep;
      if (limited) {
        EXPECT_LE(out.result->devices[chain.device].peakBytes,
                  4 * chain.bytes())
            << "device " << chain.device << ", repetition " << rep;
      }
    }
  }
  if (graphOut)
    *graphOut = std::move(g);
  return out;
}

TEST(Offload, ChainOverTheLimitFailsWithoutOffload) {
  std::vector<Chain> chains = randomChains(1, 1);
  ChainRun unlimited = runChains(chains, false, 1, ReadyOrder::Fifo,
                                 MemoryPolicy::Fail, false, 1);
  ASSERT_TRUE(unlimited.result) << unlimited.result.message();
  // skip + 1 values live at once: more than the four the limit allows.
  EXPECT_GT(unlimited.result->devices[0].peakBytes, 4 * chains[0].bytes());
  ChainRun failed = runChains(chains, false, 1, ReadyOrder::Fifo,
                              MemoryPolicy::Fail, true, 1);
  ASSERT_FALSE(failed.result);
  EXPECT_NE(failed.result.message().find("out of memory on device 0"),
            std::string::npos)
      << failed.result.message();
}

TEST(Offload, ChainWithOffloadRunsWithinTheLimit) {
  for (ReadyOrder order :
       {ReadyOrder::Fifo, ReadyOrder::Priority, ReadyOrder::Program})
    for (uint32_t seed = 1; seed <= 6; ++seed) {
      int devices = 1 + static_cast<int>(seed % 2);
      SCOPED_TRACE("seed " + std::to_string(seed) + ", order " +
                   std::string(readyOrderName(order)));
      std::vector<Chain> chains = randomChains(seed, devices);
      ChainRun reference = runChains(chains, false, devices, ReadyOrder::Fifo,
                                     MemoryPolicy::Fail, false, 1);
      ASSERT_TRUE(reference.result) << reference.result.message();
      for (int lanes : {1, 2}) {
        ChainRun limited = runChains(chains, true, devices, order,
                                     MemoryPolicy::Wait, true, 15, nullptr,
                                     lanes);
        ASSERT_TRUE(limited.result)
            << limited.result.message() << " (" << lanes << " copy lanes)";
        EXPECT_EQ(limited.outputs, reference.outputs);
        EXPECT_GT(limited.result->hostPeakBytes, 0u);
      }
    }
}

//===----------------------------------------------------------------------===//
// Control dependencies
//===----------------------------------------------------------------------===//

TEST(Offload, ReloadWaitsForItsTriggerWithoutKeepingItAlive) {
  const int64_t n = 4096;
  std::vector<float> data(n, 1.5f);
  TaskGraph g;
  ValueId x = unwrap(g.addInput(0, {n}));
  ValueId stash = unwrap(g.addEvict(x));
  // Keeps device 0's copy worker busy, so the reload starts well after its
  // trigger's only reader finished.
  ValueId slow = unwrap(g.addTransfer(x, 0, 0.15));
  ValueId t = unwrap(g.addFused(0, "i->i", "scale(in0, 2)", {x}));
  ValueId u = unwrap(g.addFused(0, "i->i", "scale(in0, 3)", {t}));
  ValueId r = unwrap(g.addReload(stash, 0, {t}));
  ValueId out =
      unwrap(g.addFused(0, "i,i,i->i", "add(in0, in1); add(s0, in2)", {u, r, slow}));
  ASSERT_TRUE(g.markOutput(out).ok());
  EXPECT_EQ(g.task(r).after, std::vector<ValueId>{t});
  EXPECT_EQ(g.consumers(t), std::vector<ValueId>{u});
  EXPECT_EQ(g.controlDependents(t), std::vector<ValueId>{r});

  auto backend = std::make_unique<RecordingBackend>(1);
  RecordingBackend *recorder = backend.get();
  Executor executor(std::move(backend));
  RunResult run = unwrap(runGuarded(executor, g, {{x, data.data()}}));
  EXPECT_GE(run.tasks[r].start, run.tasks[t].end);
  // t was freed after its reader u, before the reload started.
  EXPECT_LT(recorder->freedAt(t), recorder->started.at(r));
  EXPECT_GE(run.tasks[r].start, run.tasks[u].end);
  EXPECT_EQ(run.outputs.at(out).f32()[5], 1.5f * 6 + 1.5f + 1.5f);
}

TEST(Offload, ReloadWaitsForATriggerOnAnotherDevice) {
  std::vector<float> data(64, 2.0f);
  TaskGraph g;
  ValueId x = unwrap(g.addInput(0, {64}));
  ValueId stash = unwrap(g.addEvict(x));
  ValueId late = unwrap(g.addDelay(1, 0.05));
  ValueId r = unwrap(g.addReload(stash, 0, {late, late, stash}));
  EXPECT_EQ(g.task(r).after, std::vector<ValueId>{late});
  ASSERT_TRUE(g.markOutput(r).ok());
  Executor executor(cpu(2));
  RunResult run = unwrap(runGuarded(executor, g, {{x, data.data()}}));
  EXPECT_GE(run.tasks[r].start, run.tasks[late].end);
  EXPECT_GE(run.tasks[late].end - run.tasks[late].start, 0.05);
  EXPECT_EQ(run.outputs.at(r).f32()[63], 2.0f);
}

//===----------------------------------------------------------------------===//
// Program order
//===----------------------------------------------------------------------===//

TEST(Offload, ProgramOrderStartsComputeTasksInIdOrder) {
  std::vector<float> xs(256, 1.0f), ys(256, 2.0f);
  TaskGraph g;
  ValueId x = unwrap(g.addInput(0, {256}));
  ValueId y = unwrap(g.addInput(1, {256}));
  ValueId late = unwrap(g.addTransfer(y, 0, 0.05));
  ValueId c = unwrap(g.addFused(0, "i->i", "scale(in0, 3)", {late}));
  ValueId b = unwrap(g.addFused(0, "i->i", "scale(in0, 5)", {x}));
  ASSERT_TRUE(g.markOutput(c).ok());
  ASSERT_TRUE(g.markOutput(b).ok());
  InputBindings inputs = {{x, xs.data()}, {y, ys.data()}};

  Executor executor(cpu(2));
  RunResult fifo = unwrap(runGuarded(executor, g, inputs));
  // Free order runs b first: it is ready at once.
  EXPECT_LT(fifo.tasks[b].start, fifo.tasks[c].start);
  executor.setReadyOrder(ReadyOrder::Program);
  RunResult program = unwrap(runGuarded(executor, g, inputs));
  EXPECT_GE(program.tasks[b].start, program.tasks[c].end);
  for (ValueId id : {b, c})
    EXPECT_EQ(program.outputs.at(id).bytes, fifo.outputs.at(id).bytes);
}

TEST(Offload, ProgramOrderHoldsOnRandomChains) {
  for (uint32_t seed = 11; seed <= 14; ++seed) {
    std::vector<Chain> chains = randomChains(seed, 2);
    TaskGraph g;
    ChainRun run = runChains(chains, true, 2, ReadyOrder::Program,
                             MemoryPolicy::Wait, true, 1, &g);
    ASSERT_TRUE(run.result) << run.result.message();
    for (int d = 0; d < 2; ++d)
      for (WorkerKind kind : {WorkerKind::Compute, WorkerKind::Copy}) {
        double lastStart = -1;
        for (ValueId id = 0; id < g.size(); ++id) {
          const Task &task = g.task(id);
          if (task.kind == TaskKind::Input || task.device != d ||
              task.runsOnCopyWorker() != (kind == WorkerKind::Copy))
            continue;
          EXPECT_GE(run.result->tasks[id].start, lastStart)
              << "seed " << seed << ", task " << id;
          lastStart = run.result->tasks[id].start;
        }
      }
  }
}

//===----------------------------------------------------------------------===//
// Planned order
//===----------------------------------------------------------------------===//

/// The planned order is the program order's discipline on Task::priority:
/// here the priorities put the later-ready task c first, so b (ready at
/// once) waits for c to start; equal priorities fall back to id order.
TEST(Offload, PlannedOrderStartsComputeTasksByPriority) {
  std::vector<float> xs(256, 1.0f), ys(256, 2.0f);
  TaskGraph g;
  ValueId x = unwrap(g.addInput(0, {256}));
  ValueId y = unwrap(g.addInput(1, {256}));
  ValueId b = unwrap(g.addFused(0, "i->i", "scale(in0, 5)", {x}));
  ValueId late = unwrap(g.addTransfer(y, 0, 0.05));
  ValueId c = unwrap(g.addFused(0, "i->i", "scale(in0, 3)", {late}));
  ASSERT_TRUE(g.markOutput(c).ok());
  ASSERT_TRUE(g.markOutput(b).ok());
  InputBindings inputs = {{x, xs.data()}, {y, ys.data()}};

  Executor executor(cpu(2));
  executor.setReadyOrder(ReadyOrder::Planned);
  // Equal priorities: id order (b before c), as the program order.
  RunResult same = unwrap(runGuarded(executor, g, inputs));
  EXPECT_LT(same.tasks[b].start, same.tasks[c].start);
  // c planned first: b may not start before c, though it is ready 50 ms
  // earlier.
  ASSERT_TRUE(g.setPriority(c, 1).ok());
  ASSERT_TRUE(g.setPriority(b, 2).ok());
  RunResult planned = unwrap(runGuarded(executor, g, inputs));
  EXPECT_GE(planned.tasks[b].start, planned.tasks[c].start);
  EXPECT_GE(planned.tasks[c].start, 0.05);
  for (ValueId id : {b, c})
    EXPECT_EQ(planned.outputs.at(id).bytes, same.outputs.at(id).bytes);
  // The priority order lets b run first (it is ready); so does fifo.
  executor.setReadyOrder(ReadyOrder::Priority);
  RunResult free = unwrap(runGuarded(executor, g, inputs));
  EXPECT_LT(free.tasks[b].start, free.tasks[c].start);
}

/// A planned order that frees memory before allocating runs under a limit
/// where the program order deadlocks: the input x (2S) is read by slice B,
/// and fill A (2S) fits only after B has freed x (limit 3S). Planned B
/// before A; the program order (A first) deadlocks.
TEST(Offload, PlannedOrderRunsWhereProgramOrderDeadlocks) {
  const int64_t s = 256;
  std::vector<float> data(2 * s, 1.0f);
  TaskGraph g;
  ValueId x = unwrap(g.addInput(0, {2 * s}));
  ValueId a = unwrap(g.addFill(0, {2 * s}, 4.0));
  ValueId b = unwrap(g.addSlice(0, x, {s}, {s}));
  ASSERT_TRUE(g.markOutput(a).ok());
  ASSERT_TRUE(g.markOutput(b).ok());
  ASSERT_TRUE(g.setPriority(b, 10).ok());
  ASSERT_TRUE(g.setPriority(a, 20).ok());
  ExecutorOptions options;
  options.memoryLimits = {3 * s * 4};
  options.memoryPolicy = MemoryPolicy::Wait;
  options.order = ReadyOrder::Planned;
  Executor executor(cpu(1), options);
  for (int rep = 0; rep < 20; ++rep) {
    RunResult run = unwrap(runGuarded(executor, g, {{x, data.data()}}));
    EXPECT_GE(run.tasks[a].start, run.tasks[b].end);
    EXPECT_LE(run.devices[0].peakBytes, uint64_t(3 * s * 4));
  }
  executor.setReadyOrder(ReadyOrder::Program);
  Result<RunResult> program = runGuarded(executor, g, {{x, data.data()}});
  ASSERT_FALSE(program);
  EXPECT_NE(program.message().find("memory deadlock on device 0"),
            std::string::npos)
      << program.message();
}

//===----------------------------------------------------------------------===//
// Impossible limits
//===----------------------------------------------------------------------===//

/// Device 0 holds a 2S input under a 3S limit. Fill A (2S, ready first)
/// does not fit until slice B (S) has read the input and freed it.
TEST(Offload, WaitRunsWhatFitsAndRetriesOnFree) {
  const int64_t s = 256; // Elements per S.
  std::vector<float> data(2 * s);
  for (size_t i = 0; i < data.size(); ++i)
    data[i] = static_cast<float>(i);
  TaskGraph g;
  ValueId x = unwrap(g.addInput(0, {2 * s}));
  ValueId a = unwrap(g.addFill(0, {2 * s}, 4.0));
  ValueId b = unwrap(g.addSlice(0, x, {s}, {s}));
  ASSERT_TRUE(g.markOutput(a).ok());
  ASSERT_TRUE(g.markOutput(b).ok());
  ExecutorOptions options;
  options.memoryLimits = {3 * s * 4};
  Executor executor(cpu(1), options);
  // Failing is still the default.
  Result<RunResult> failed = runGuarded(executor, g, {{x, data.data()}});
  ASSERT_FALSE(failed);
  EXPECT_NE(failed.message().find("task 1 (fill on device 0): out of memory"),
            std::string::npos)
      << failed.message();

  executor.setMemoryPolicy(MemoryPolicy::Wait);
  for (int rep = 0; rep < 20; ++rep) {
    RunResult run = unwrap(runGuarded(executor, g, {{x, data.data()}}));
    // A was ready first but ran after B freed the input.
    EXPECT_GE(run.tasks[a].start, run.tasks[b].end);
    EXPECT_EQ(run.devices[0].peakBytes, uint64_t(3 * s * 4));
    EXPECT_EQ(run.outputs.at(a).f32()[2 * s - 1], 4.0f);
    EXPECT_EQ(run.outputs.at(b).f32()[0], static_cast<float>(s));
  }

  // Program order may not run B before A: the same limit deadlocks.
  executor.setReadyOrder(ReadyOrder::Program);
  Result<RunResult> program = runGuarded(executor, g, {{x, data.data()}});
  ASSERT_FALSE(program);
  EXPECT_EQ(program.message(),
            "memory deadlock on device 0: task 1 (fill on device 0) needs "
            "2048 bytes; 2048 of the 3072-byte limit are held by buffers "
            "whose readers cannot run");
}

TEST(Offload, TaskBiggerThanTheLimitFailsAtOnce) {
  TaskGraph g;
  ValueId wait = unwrap(g.addDelay(0, 5.0));
  ValueId big = unwrap(g.addFill(0, {1024}, 1.0));
  (void)wait;
  ASSERT_TRUE(g.markOutput(big).ok());
  ExecutorOptions options;
  options.memoryPolicy = MemoryPolicy::Wait;
  options.memoryLimits = {1024};
  Executor executor(cpu(1), options);
  Clock::time_point start = Clock::now();
  Result<RunResult> run = runGuarded(executor, g, {});
  ASSERT_FALSE(run);
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 2.0);
  EXPECT_EQ(run.message(), "task 1 (fill on device 0): needs 4096 bytes, more "
                           "than device 0's memory limit of 1024 bytes");
}

TEST(Offload, InputsOverTheLimitFailBeforeTheRun) {
  std::vector<float> data(512, 0.0f);
  TaskGraph g;
  ValueId x = unwrap(g.addInput(0, {512}));
  ValueId y = unwrap(g.addSlice(0, x, {0}, {4}));
  ASSERT_TRUE(g.markOutput(y).ok());
  ExecutorOptions options;
  options.memoryPolicy = MemoryPolicy::Wait;
  options.memoryLimits = {1024};
  Executor executor(cpu(1), options);
  Result<RunResult> run = runGuarded(executor, g, {{x, data.data()}});
  ASSERT_FALSE(run);
  EXPECT_NE(run.message().find("out of memory on device 0"),
            std::string::npos)
      << run.message();
}

/// Two branches on one device: each fill holds memory the other's next
/// step needs.
TaskGraph twoBranches(ValueId &out) {
  TaskGraph g;
  ValueId a = unwrap(g.addFill(0, {256}, 1.0));
  ValueId b = unwrap(g.addFill(0, {256}, 2.0));
  ValueId a2 = unwrap(g.addFused(0, "i->i", "scale(in0, 2)", {a}));
  ValueId b2 = unwrap(g.addFused(0, "i->i", "scale(in0, 2)", {b}));
  out = unwrap(g.addFused(0, "i,i->i", "add(in0, in1)", {a2, b2}));
  EXPECT_TRUE(g.markOutput(out).ok());
  return g;
}

TEST(Offload, MemoryDeadlockFailsInsteadOfHanging) {
  ValueId out;
  TaskGraph g = twoBranches(out);
  for (ReadyOrder order : {ReadyOrder::Fifo, ReadyOrder::Program}) {
    SCOPED_TRACE(std::string(readyOrderName(order)));
    ExecutorOptions options;
    options.order = order;
    options.memoryPolicy = MemoryPolicy::Wait;
    options.memoryLimits = {2048};
    auto backend = std::make_unique<RecordingBackend>(1);
    RecordingBackend *recorder = backend.get();
    Executor executor(std::move(backend), options);
    for (int rep = 0; rep < 5; ++rep) {
      Result<RunResult> run = runGuarded(executor, g, {});
      ASSERT_FALSE(run);
      // Program order starts a, b, then parks a2 (task 2) for good. Free
      // order depends on whether b was queued before a finished: a, b, then
      // both a2 and b2 park; or a, a2, b, then b2 parks (a2 and b hold the
      // memory). Both are deadlocks.
      std::string a2 =
          "task 2 (fused i->i scale(in0, 2) on device 0) needs 1024 bytes";
      std::string b2 =
          "task 3 (fused i->i scale(in0, 2) on device 0) needs 1024 bytes";
      std::string prefix = "memory deadlock on device 0: ";
      std::string suffix = "; 2048 of the 2048-byte limit are held by "
                           "buffers whose readers cannot run";
      if (order == ReadyOrder::Program)
        EXPECT_EQ(run.message(), prefix + a2 + suffix);
      else
        EXPECT_TRUE(run.message() == prefix + a2 + ", " + b2 + suffix ||
                    run.message() == prefix + b2 + suffix)
            << run.message();
      EXPECT_EQ(recorder->liveDevice.load(), 0);
    }
    // One more buffer's worth and the same graph runs; the executor is
    // still usable after the failures.
    executor.setMemoryLimit(0, 3072);
    RunResult run = unwrap(runGuarded(executor, g, {}));
    EXPECT_EQ(run.outputs.at(out).f32()[0], 6.0f);
    EXPECT_LE(run.devices[0].peakBytes, 3072u);
  }
}

TEST(Offload, FailPolicyStaysTheDefault) {
  ValueId out;
  TaskGraph g = twoBranches(out);
  ExecutorOptions options;
  options.memoryLimits = {2048};
  Executor executor(cpu(1), options);
  EXPECT_EQ(executor.options().memoryPolicy, MemoryPolicy::Fail);
  Result<RunResult> run = runGuarded(executor, g, {});
  ASSERT_FALSE(run);
  EXPECT_NE(run.message().find("out of memory on device 0: needs 1024 bytes"),
            std::string::npos)
      << run.message();
  // Limit 0 means unlimited, with either policy.
  executor.setMemoryLimit(0, 0);
  executor.setMemoryPolicy(MemoryPolicy::Wait);
  RunResult ok = unwrap(runGuarded(executor, g, {}));
  EXPECT_EQ(ok.devices[0].peakBytes, 3072u);
}

TEST(Offload, FailedEvictFreesEverything) {
  std::vector<Chain> chains = randomChains(3, 1);
  TaskGraph g;
  buildChain(g, chains[0], true);
  ExecutorOptions options;
  options.memoryPolicy = MemoryPolicy::Wait;
  options.memoryLimits = {4 * chains[0].bytes()};
  options.fault.kind = FaultKind::Transfer;
  options.fault.nth = 2; // The second copy task: an evict or a reload.
  auto backend = std::make_unique<RecordingBackend>(1);
  RecordingBackend *recorder = backend.get();
  Executor executor(std::move(backend), options);
  Result<RunResult> run =
      runGuarded(executor, g, {{chains[0].input, chains[0].data.data()}});
  ASSERT_FALSE(run);
  EXPECT_NE(run.message().find("injected transfer fault"), std::string::npos)
      << run.message();
  EXPECT_EQ(recorder->liveDevice.load(), 0);
  EXPECT_EQ(recorder->liveHost.load(), 0);
  executor.setFaultInjection({});
  EXPECT_TRUE(runGuarded(executor, g, {{chains[0].input, chains[0].data.data()}}));
}

TEST(Offload, OrderAndPolicyNamesParse) {
  EXPECT_EQ(*parseReadyOrder("program"), ReadyOrder::Program);
  EXPECT_EQ(*parseReadyOrder("fifo"), ReadyOrder::Fifo);
  EXPECT_EQ(*parseReadyOrder("priority"), ReadyOrder::Priority);
  EXPECT_EQ(*parseReadyOrder("planned"), ReadyOrder::Planned);
  EXPECT_EQ(readyOrderName(ReadyOrder::Planned), "planned");
  EXPECT_FALSE(parseReadyOrder("eager"));
  EXPECT_EQ(*parseMemoryPolicy("wait"), MemoryPolicy::Wait);
  EXPECT_EQ(*parseMemoryPolicy("fail"), MemoryPolicy::Fail);
  EXPECT_EQ(parseMemoryPolicy("block").message(),
            "unknown memory policy 'block' (expected fail or wait)");
}

} // namespace
} // namespace doppler::runtime
