//===- CpuBackend.cpp - Virtual devices on the host CPU -------------------===//

#include "doppler/runtime/CpuBackend.h"

#include "CpuRelax.h"
#include "doppler/runtime/CpuKernels.h"

#include "Doppler/Support/Limits.h"
#include "Doppler/Support/NumberFormat.h"

#if defined(__linux__)
#include <sched.h>
#endif

#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

namespace doppler::runtime {
namespace {

using Clock = std::chrono::steady_clock;

using detail::cpuRelax;

void waitUntil(Clock::time_point deadline, WaitMode mode) {
  // Sleeping overshoots by the kernel's timer slack; the hybrid mode sleeps
  // through all but this margin and spins the rest.
  constexpr auto kSpinMargin = std::chrono::microseconds(100);
  if (mode == WaitMode::Sleep) {
    std::this_thread::sleep_until(deadline);
    return;
  }
  if (mode == WaitMode::Hybrid && deadline - Clock::now() > kSpinMargin)
    std::this_thread::sleep_until(deadline - kSpinMargin);
  while (Clock::now() < deadline)
    cpuRelax();
}

Clock::duration toDuration(double seconds) {
  // Saturate (at about 31 years) instead of overflowing the clock's int64
  // nanoseconds, which would turn a long wait into none.
  return std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(std::min(seconds, 1e9)));
}

/// One device's memory: 64-byte aligned host blocks, with freed blocks
/// cached by exact size so repeated runs of a graph reuse warm pages.
class CpuArena {
public:
  explicit CpuArena(uint64_t cacheLimit) : cacheLimit_(cacheLimit) {}
  ~CpuArena() {
    for (auto &entry : cache_)
      std::free(entry.second);
  }

  void *allocate(uint64_t bytes) {
    uint64_t rounded = roundUp(bytes);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = cache_.find(rounded);
      if (it != cache_.end()) {
        void *block = it->second;
        cache_.erase(it);
        cachedBytes_ -= rounded;
        return block;
      }
    }
    return std::aligned_alloc(64, rounded);
  }

  void release(void *block, uint64_t bytes) {
    uint64_t rounded = roundUp(bytes);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (cachedBytes_ + rounded <= cacheLimit_) {
        cache_.emplace(rounded, block);
        cachedBytes_ += rounded;
        return;
      }
    }
    std::free(block);
  }

private:
  static uint64_t roundUp(uint64_t bytes) { return (bytes + 63) / 64 * 64; }

  std::mutex mutex_;
  std::multimap<uint64_t, void *> cache_;
  uint64_t cachedBytes_ = 0;
  uint64_t cacheLimit_;
};

/// A quarter of physical memory split among the devices, at least 256 MiB
/// each: enough for a large block's buffers to stay warm between runs (a
/// LLaMA block at 2048 x 4096 keeps about 1 GiB live per device).
uint64_t automaticCacheBytes(int numDevices) {
  constexpr uint64_t kFloor = uint64_t(256) << 20;
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || pageSize <= 0 || numDevices < 1)
    return kFloor;
  uint64_t share = static_cast<uint64_t>(pages) *
                   static_cast<uint64_t>(pageSize) / 4 /
                   static_cast<uint64_t>(numDevices);
  return std::max(share, kFloor);
}

/// The CPUs this process may run on (its affinity mask; the online CPUs
/// where that is unknown), at least 1.
int usableCpus() {
#if defined(__linux__)
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0)
    return std::max(1, CPU_COUNT(&allowed));
#endif
  return static_cast<int>(
      std::max(1u, std::thread::hardware_concurrency()));
}

/// Einsum, fused, conv and pool kernels of one graph, indexed by ValueId
/// (empty for other tasks).
struct CpuPreparedGraph : PreparedGraph {
  std::vector<std::optional<cpu::EinsumKernel>> kernels;
  std::vector<std::optional<cpu::FusedKernel>> fused;
  std::vector<std::optional<cpu::ConvolutionKernel>> convs;
  std::vector<std::optional<cpu::PoolKernel>> pools;
};

/// The conv or pool kernel of task `id` into `prepared`.
Status prepareWindow(const TaskGraph &graph, ValueId id,
                     CpuPreparedGraph &prepared) {
  const Task &task = graph.task(id);
  const Shape &inputShape = graph.task(task.inputs[0]).shape;
  if (task.kind == TaskKind::Conv) {
    Result<cpu::ConvolutionKernel> kernel = cpu::ConvolutionKernel::create(
        inputShape, graph.task(task.inputs[1]).shape, task.groups,
        task.window, task.type);
    if (!kernel)
      return kernel.status().withContext(graph.describe(id));
    prepared.convs[id] = std::move(*kernel);
    return Status();
  }
  Result<cpu::PoolKernel> kernel =
      cpu::PoolKernel::create(task.pool, inputShape, task.window, task.type);
  if (!kernel)
    return kernel.status().withContext(graph.describe(id));
  prepared.pools[id] = std::move(*kernel);
  return Status();
}

class CpuBackend final : public Backend {
public:
  explicit CpuBackend(const CpuBackendOptions &options) : options_(options) {
    uint64_t cached = options.cachedBytesPerDevice;
    if (cached == 0)
      cached = automaticCacheBytes(options.numDevices);
    for (int d = 0; d < options.numDevices; ++d)
      arenas_.push_back(std::make_unique<CpuArena>(cached));
    cpu::useSingleThreadedBlas();
  }

  std::string_view name() const override { return "cpu"; }
  // Tasks run to completion on the calling worker: a view is ready when
  // its input is.
  bool supportsViews() const override { return true; }
  // A copy is a memcpy any thread can make, unless the link is emulated.
  uint64_t inlineCopyBytes() const override {
    return options_.linkBandwidth > 0 || options_.linkLatency > 0
               ? 0
               : options_.inlineCopyBytes;
  }

  LargeCopyPath largeCopyPath() const override {
    if (options_.linkBandwidth > 0 || options_.linkLatency > 0)
      return LargeCopyPath::CopyWorker;
    switch (options_.largeCopies) {
    case LargeCopies::Auto:
      return options_.numDevices >= usableCpus() ? LargeCopyPath::IdleProducer
                                                 : LargeCopyPath::CopyWorker;
    case LargeCopies::CopyWorker:
      return LargeCopyPath::CopyWorker;
    case LargeCopies::IdleProducer:
      return LargeCopyPath::IdleProducer;
    case LargeCopies::ComputeWorkers:
      break;
    }
    return LargeCopyPath::ComputeWorkers;
  }

  Status attachWorker(int device, WorkerKind kind, int) override {
#if defined(__linux__)
    // One device has nothing to balance; leaving it unbound also keeps
    // concurrent single-device processes from piling onto the first CPU.
    if (!options_.pinComputeWorkers || kind != WorkerKind::Compute ||
        options_.numDevices < 2)
      return Status();
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0)
      return Status(); // Best effort: an unbound worker still works.
    int count = CPU_COUNT(&allowed);
    if (count <= 1)
      return Status();
    int wanted = device % count;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (!CPU_ISSET(cpu, &allowed) || wanted-- > 0)
        continue;
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpu, &one);
      (void)sched_setaffinity(0, sizeof(one), &one);
      break;
    }
#else
    (void)device, (void)kind;
#endif
    return Status();
  }

  int numDevices() const override { return options_.numDevices; }

  Result<std::unique_ptr<PreparedGraph>>
  prepare(const TaskGraph &graph) override {
    auto prepared = std::make_unique<CpuPreparedGraph>();
    prepared->kernels.resize(graph.size());
    prepared->fused.resize(graph.size());
    prepared->convs.resize(graph.size());
    prepared->pools.resize(graph.size());
    for (ValueId id = 0; id < graph.size(); ++id) {
      const Task &task = graph.task(id);
      if (task.kind == TaskKind::Conv || task.kind == TaskKind::Pool) {
        if (Status status = prepareWindow(graph, id, *prepared); !status)
          return status;
        continue;
      }
      if (task.kind != TaskKind::Einsum && task.kind != TaskKind::Fused)
        continue;
      if (task.converts()) // cpu::convertElements, no kernel to prepare
        continue;
      std::vector<Shape> shapes;
      for (ValueId input : task.inputs)
        shapes.push_back(graph.task(input).shape);
      if (task.kind == TaskKind::Fused) {
        Result<cpu::FusedKernel> kernel = cpu::FusedKernel::create(
            task.spec, task.program.str(), shapes, task.type);
        if (!kernel)
          return kernel.status().withContext(graph.describe(id));
        prepared->fused[id] = std::move(*kernel);
        continue;
      }
      Result<cpu::EinsumKernel> kernel =
          cpu::EinsumKernel::create(task.spec, task.join, task.aggregation,
                                    task.scalar, shapes, task.type);
      if (!kernel)
        return kernel.status().withContext(graph.describe(id));
      prepared->kernels[id] = std::move(*kernel);
    }
    return std::unique_ptr<PreparedGraph>(std::move(prepared));
  }

  Result<DeviceBuffer> allocate(int device, uint64_t bytes) override {
    if (bytes == 0)
      return DeviceBuffer{};
    void *data = arenas_[device]->allocate(bytes);
    if (!data)
      return Status::failure("cannot allocate " + std::to_string(bytes) +
                             " bytes of host memory");
    return DeviceBuffer{data, bytes};
  }

  void deallocate(int device, DeviceBuffer buffer) override {
    if (buffer.data)
      arenas_[device]->release(buffer.data, buffer.bytes);
  }

  Status upload(int, DeviceBuffer dst, const void *src) override {
    if (dst.bytes)
      std::memcpy(dst.data, src, dst.bytes);
    return Status();
  }

  Status download(int, DeviceBuffer src, void *dst) override {
    if (src.bytes)
      std::memcpy(dst, src.data, src.bytes);
    return Status();
  }

  Status execute(const TaskLaunch &launch) override {
    const Task &task = *launch.task;
    switch (task.kind) {
    case TaskKind::Einsum: {
      if (task.converts())
        return cpu::convertElements(launch.inputs[0].data, task.convertsFrom,
                                    launch.output.data, task.type,
                                    numElements(task.shape));
      auto *prepared = static_cast<CpuPreparedGraph *>(launch.prepared);
      const std::optional<cpu::EinsumKernel> &kernel =
          prepared->kernels[launch.id];
      if (!kernel)
        return Status::failure("einsum was not prepared");
      const void *inputs[2] = {launch.inputs[0].data,
                               task.inputs.size() > 1 ? launch.inputs[1].data
                                                      : nullptr};
      kernel->run(inputs, launch.output.data);
      return Status();
    }
    case TaskKind::Fused: {
      auto *prepared = static_cast<CpuPreparedGraph *>(launch.prepared);
      const std::optional<cpu::FusedKernel> &kernel =
          prepared->fused[launch.id];
      if (!kernel)
        return Status::failure("fused task was not prepared");
      // Operand pointers on the stack for the usual few inputs: a launch
      // allocates nothing.
      constexpr size_t kInline = 8;
      std::array<const void *, kInline> inlined;
      std::vector<const void *> spilled;
      const void **inputs = inlined.data();
      if (task.inputs.size() > kInline) {
        spilled.resize(task.inputs.size());
        inputs = spilled.data();
      }
      for (size_t i = 0; i < task.inputs.size(); ++i)
        inputs[i] = launch.inputs[i].data;
      kernel->run(inputs, launch.output.data);
      return Status();
    }
    case TaskKind::Conv: {
      auto *prepared = static_cast<CpuPreparedGraph *>(launch.prepared);
      const std::optional<cpu::ConvolutionKernel> &kernel =
          prepared->convs[launch.id];
      if (!kernel)
        return Status::failure("conv was not prepared");
      kernel->run(launch.inputs[0].data, launch.inputs[1].data,
                  launch.output.data);
      return Status();
    }
    case TaskKind::Pool: {
      auto *prepared = static_cast<CpuPreparedGraph *>(launch.prepared);
      const std::optional<cpu::PoolKernel> &kernel = prepared->pools[launch.id];
      if (!kernel)
        return Status::failure("pool was not prepared");
      kernel->run(launch.inputs[0].data, launch.output.data);
      return Status();
    }
    case TaskKind::Gather: {
      const Task &indices = launch.graph->task(task.inputs[1]);
      return cpu::gather(launch.inputs[0].data,
                         launch.graph->task(task.inputs[0]).shape,
                         launch.inputs[1].data, indices.type,
                         numElements(indices.shape), task.axis,
                         launch.output.data, task.type);
    }
    case TaskKind::Transfer:
      return transfer(launch);
    case TaskKind::Reshape:
    case TaskKind::Evict:
    case TaskKind::Reload:
      // A reshape keeps row-major order: one copy of the buffer. Host values
      // live in plain host memory (Backend::allocateHost): evicts and
      // reloads are copies too.
      if (launch.output.bytes)
        std::memcpy(launch.output.data, launch.inputs[0].data,
                    launch.output.bytes);
      return Status();
    case TaskKind::Fill:
      cpu::fill(launch.output.data, task.type, numElements(task.shape),
                task.scalar);
      return Status();
    case TaskKind::Slice:
      cpu::slice(launch.inputs[0].data,
                 launch.graph->task(task.inputs[0]).shape, task.sliceOffsets,
                 launch.output.data, task.shape, task.type);
      return Status();
    case TaskKind::Assemble: {
      std::vector<const void *> blocks;
      blocks.reserve(task.inputs.size());
      for (size_t i = 0; i < task.inputs.size(); ++i)
        blocks.push_back(launch.inputs[i].data);
      cpu::assemble(blocks, task.blockExtents, launch.output.data, task.type);
      return Status();
    }
    case TaskKind::Delay:
      if (task.seconds > 0)
        waitUntil(Clock::now() + toDuration(task.seconds), options_.waitMode);
      return Status();
    case TaskKind::Input:
      break;
    }
    return Status::failure("task kind '" +
                           std::string(taskKindName(task.kind)) +
                           "' cannot be executed");
  }

private:
  Status transfer(const TaskLaunch &launch) {
    Clock::time_point start = Clock::now();
    const Task &task = *launch.task;
    uint64_t bytes = launch.output.bytes;
    if (bytes)
      std::memcpy(launch.output.data, launch.inputs[0].data, bytes);
    // Emulate the link: the copy is done once latency + bytes / bandwidth
    // (or the task's fixed duration) has passed since it started.
    double seconds = 0;
    if (task.seconds >= 0) {
      seconds = task.seconds;
    } else if (launch.graph->task(task.inputs[0]).device != task.device) {
      seconds = options_.linkLatency;
      if (options_.linkBandwidth > 0)
        seconds += static_cast<double>(bytes) / options_.linkBandwidth;
    }
    if (seconds > 0)
      waitUntil(start + toDuration(seconds), options_.waitMode);
    return Status();
  }

  CpuBackendOptions options_;
  std::vector<std::unique_ptr<CpuArena>> arenas_;
};

} // namespace

Result<std::unique_ptr<Backend>>
createCpuBackend(const CpuBackendOptions &options) {
  if (options.numDevices < 1)
    return Status::failure("the CPU backend needs at least one device, got " +
                           std::to_string(options.numDevices));
  // A worker thread per device: a typo must not start 100000 of them.
  if (options.numDevices > kMaxDevices)
    return Status::failure("the CPU backend runs at most " +
                           std::to_string(kMaxDevices) + " devices, got " +
                           std::to_string(options.numDevices));
  if (!(options.linkBandwidth >= 0) || !std::isfinite(options.linkBandwidth))
    return Status::failure("link bandwidth must be finite and >= 0");
  if (options.linkBandwidth > 0 && options.linkBandwidth < 1)
    return Status::failure("link bandwidth must be 0 (off) or at least 1 "
                           "byte/s, got " +
                           formatShortest(options.linkBandwidth));
  if (!(options.linkLatency >= 0) || !std::isfinite(options.linkLatency))
    return Status::failure("link latency must be finite and >= 0");
  if (options.linkLatency > kMaxEmulatedSeconds)
    return Status::failure("link latency " + formatShortest(options.linkLatency) +
                           " s is more than the limit of " +
                           formatShortest(kMaxEmulatedSeconds) + " s");
  return std::unique_ptr<Backend>(std::make_unique<CpuBackend>(options));
}

} // namespace doppler::runtime
