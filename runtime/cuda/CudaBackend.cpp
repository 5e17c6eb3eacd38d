//===- CudaBackend.cpp - Virtual devices on NVIDIA GPUs -------------------===//
//
// Threads and streams: the executor gives every virtual device a compute
// worker and copy workers; each worker gets its own stream (non-blocking,
// so the legacy default stream never serialises them) and, for compute, its
// own cuBLAS handle, created on first use on its GPU. A task's steps are
// enqueued on its worker's stream; see CudaBackend.h for the two completion
// modes.
//
// Memory: per virtual device an arena of cudaMalloc'd blocks, rounded to
// size classes and cached when freed (cudaFree would synchronise the whole
// GPU in the middle of a run). Scratch space for GEMM operands and partial
// reductions is per worker and grows on demand.
//
//===----------------------------------------------------------------------===//

#include "doppler/runtime/CudaBackend.h"

#include "CpuRelax.h"
#include "CudaCheck.h"
#include "CudaKernels.h"
#include "CudaPlan.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>

namespace doppler::runtime {
namespace cuda {

std::string formatCallFailure(std::string_view call, std::string_view file,
                              int line, std::string_view errorName,
                              std::string_view errorText) {
  size_t slash = file.find_last_of('/');
  if (slash != std::string_view::npos)
    file = file.substr(slash + 1);
  std::string message(call);
  message += " failed at ";
  message += file;
  message += ":" + std::to_string(line) + ": ";
  message += errorName;
  message += ": ";
  message += errorText;
  return message;
}

Status checkCuda(cudaError_t error, std::string_view call,
                 std::string_view file, int line) {
  if (error == cudaSuccess)
    return Status();
  (void)cudaGetLastError(); // Reset non-sticky errors; sticky ones stay.
  return Status::failure(formatCallFailure(
      call, file, line, cudaGetErrorName(error), cudaGetErrorString(error)));
}

Status checkCublas(cublasStatus_t status, std::string_view call,
                   std::string_view file, int line) {
  if (status == CUBLAS_STATUS_SUCCESS)
    return Status();
  return Status::failure(formatCallFailure(call, file, line,
                                           cublasGetStatusName(status),
                                           cublasGetStatusString(status)));
}

} // namespace cuda

namespace {

using namespace cuda;
using Clock = std::chrono::steady_clock;
using Completion = CudaBackendOptions::Completion;

/// Makes a GPU current for a scope and restores the caller's afterwards
/// (upload, download and memory calls come from threads the backend does
/// not own).
class ScopedDevice {
public:
  Status enter(int gpu) {
    DOPPLER_CUDA_TRY(cudaGetDevice(&previous_));
    if (previous_ != gpu)
      DOPPLER_CUDA_TRY(cudaSetDevice(gpu));
    current_ = gpu;
    return Status();
  }
  ~ScopedDevice() {
    if (previous_ >= 0 && current_ >= 0 && previous_ != current_)
      (void)cudaSetDevice(previous_);
  }

private:
  int previous_ = -1, current_ = -1;
};

//===----------------------------------------------------------------------===//
// Events (deferred completion)
//===----------------------------------------------------------------------===//

/// Recycled events of one GPU (an event belongs to the device current at
/// its creation and can only be recorded on that device's streams).
class EventPool {
public:
  ~EventPool() {
    for (cudaEvent_t event : free_)
      (void)cudaEventDestroy(event);
  }
  /// The GPU must be current.
  Result<cudaEvent_t> acquire() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!free_.empty()) {
        cudaEvent_t event = free_.back();
        free_.pop_back();
        return event;
      }
    }
    cudaEvent_t event = nullptr;
    DOPPLER_CUDA_TRY(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    return event;
  }
  void release(cudaEvent_t event) {
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(event);
  }

private:
  std::mutex mutex_;
  std::vector<cudaEvent_t> free_;
};

/// An event shared by the buffers a task touched; back to its pool when
/// the last holder lets go (the pool lives as long as its events).
struct PooledEvent {
  PooledEvent(cudaEvent_t event, std::shared_ptr<EventPool> pool)
      : event(event), pool(std::move(pool)) {}
  ~PooledEvent() { pool->release(event); }
  PooledEvent(const PooledEvent &) = delete;
  PooledEvent &operator=(const PooledEvent &) = delete;
  cudaEvent_t event;
  std::shared_ptr<EventPool> pool;
};
using SharedEvent = std::shared_ptr<PooledEvent>;

//===----------------------------------------------------------------------===//
// Device memory
//===----------------------------------------------------------------------===//

/// One virtual device's memory on its GPU.
class DeviceArena {
public:
  DeviceArena(int gpu, uint64_t cacheLimit)
      : gpu_(gpu), cacheLimit_(cacheLimit) {}
  ~DeviceArena() {
    ScopedDevice device;
    if (!device.enter(gpu_))
      return;
    for (Pending &block : pending_)
      for (const SharedEvent &event : block.events)
        (void)cudaEventSynchronize(event->event);
    for (Pending &block : pending_)
      (void)cudaFree(block.data);
    pending_.clear();
    uses_.clear();
    for (auto &entry : cache_)
      (void)cudaFree(entry.second);
  }

  Result<void *> allocate(uint64_t bytes) {
    uint64_t size = deviceBlockSize(bytes);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      reclaimLocked(false);
      auto it = cache_.find(size);
      if (it != cache_.end()) {
        void *block = it->second;
        cache_.erase(it);
        cachedBytes_ -= size;
        return block;
      }
    }
    ScopedDevice device;
    if (Status status = device.enter(gpu_); !status)
      return status;
    void *block = nullptr;
    cudaError_t error = cudaMalloc(&block, size);
    if (error == cudaErrorMemoryAllocation) {
      // Out of memory: give back everything cached (waiting for blocks
      // still in use by queued work) and try once more.
      (void)cudaGetLastError();
      Status released = releaseCache();
      if (!released)
        return released;
      error = cudaMalloc(&block, size);
    }
    if (error != cudaSuccess)
      return checkCuda(error,
                       "cudaMalloc of " + std::to_string(size) + " bytes",
                       __FILE__, __LINE__);
    return block;
  }

  /// `events`: work still touching the block (deferred mode); it is reused
  /// only once they all completed.
  void release(void *data, uint64_t bytes, std::vector<SharedEvent> events) {
    uint64_t size = deviceBlockSize(bytes);
    std::lock_guard<std::mutex> lock(mutex_);
    if (!events.empty()) {
      pending_.push_back({data, size, std::move(events)});
      return;
    }
    cacheLocked(data, size);
  }

  /// Deferred mode: `event` completes after a task that reads or writes
  /// `data`.
  void recordUse(void *data, const SharedEvent &event) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<SharedEvent> &events = uses_[data];
    // A buffer read by many tasks collects many events: drop the completed
    // ones now and then to keep the list short.
    if (events.size() >= 16)
      events.erase(std::remove_if(events.begin(), events.end(),
                                  [](const SharedEvent &e) {
                                    return cudaEventQuery(e->event) ==
                                           cudaSuccess;
                                  }),
                   events.end());
    events.push_back(event);
  }

  std::vector<SharedEvent> takeUses(void *data) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = uses_.find(data);
    if (it == uses_.end())
      return {};
    std::vector<SharedEvent> events = std::move(it->second);
    uses_.erase(it);
    return events;
  }

  /// Waits until the work recorded for `data` completed.
  Status waitForUses(void *data) {
    std::vector<SharedEvent> events;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = uses_.find(data);
      if (it != uses_.end())
        events = it->second;
    }
    for (const SharedEvent &event : events)
      DOPPLER_CUDA_TRY(cudaEventSynchronize(event->event));
    return Status();
  }

private:
  struct Pending {
    void *data;
    uint64_t size;
    std::vector<SharedEvent> events;
  };

  void cacheLocked(void *data, uint64_t size) {
    if (cachedBytes_ + size <= cacheLimit_) {
      cache_.emplace(size, data);
      cachedBytes_ += size;
      return;
    }
    ScopedDevice device;
    if (device.enter(gpu_))
      (void)cudaFree(data);
  }

  /// Moves pending blocks whose work completed (all of them, waiting, when
  /// `wait` is set) into the cache.
  void reclaimLocked(bool wait) {
    for (size_t i = 0; i < pending_.size();) {
      bool done = true;
      for (const SharedEvent &event : pending_[i].events) {
        cudaError_t state = wait ? cudaEventSynchronize(event->event)
                                 : cudaEventQuery(event->event);
        if (state == cudaErrorNotReady) {
          done = false;
          break;
        }
        // Any other error is sticky and will fail the next checked call;
        // the block itself is safe to reuse.
      }
      if (!done) {
        ++i;
        continue;
      }
      cacheLocked(pending_[i].data, pending_[i].size);
      pending_[i] = std::move(pending_.back());
      pending_.pop_back();
    }
    (void)cudaGetLastError();
  }

  Status releaseCache() {
    std::lock_guard<std::mutex> lock(mutex_);
    reclaimLocked(true);
    for (auto &entry : cache_)
      DOPPLER_CUDA_TRY(cudaFree(entry.second));
    cache_.clear();
    cachedBytes_ = 0;
    return Status();
  }

  int gpu_;
  uint64_t cacheLimit_;
  std::mutex mutex_;
  std::multimap<uint64_t, void *> cache_;
  uint64_t cachedBytes_ = 0;
  std::vector<Pending> pending_;
  std::unordered_map<void *, std::vector<SharedEvent>> uses_;
};

//===----------------------------------------------------------------------===//
// Workers and devices
//===----------------------------------------------------------------------===//

/// What one executor worker thread uses on its GPU.
struct Worker {
  int gpu = 0;
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr; ///< Compute workers only.
  cudaEvent_t done = nullptr;    ///< Synchronize mode: end of the task.
  void *scratch = nullptr;
  uint64_t scratchBytes = 0;

  void destroy() {
    ScopedDevice device;
    if (!device.enter(gpu))
      return;
    if (stream)
      (void)cudaStreamSynchronize(stream);
    if (blas)
      (void)cublasDestroy(blas);
    if (done)
      (void)cudaEventDestroy(done);
    if (scratch)
      (void)cudaFree(scratch);
    if (stream)
      (void)cudaStreamDestroy(stream);
  }
};

/// Pinned host buffers and a stream for uploads and downloads.
struct Staging {
  std::mutex mutex;
  cudaStream_t stream = nullptr;
  void *host[2] = {nullptr, nullptr};
  cudaEvent_t ready[2] = {nullptr, nullptr};
};

struct VirtualDevice {
  int gpu = 0;
  std::unique_ptr<DeviceArena> arena;
  std::mutex workerMutex; ///< Guards the worker tables.
  std::unique_ptr<Worker> compute;
  std::vector<std::unique_ptr<Worker>> copies;
  Staging staging;
};

struct Gpu {
  int ordinal = 0;
  DeviceLimits limits;
  std::shared_ptr<EventPool> events = std::make_shared<EventPool>();
};

/// Per-graph plans and, in deferred mode, the event after which each value
/// is ready.
struct CudaPreparedGraph : PreparedGraph {
  std::vector<std::optional<KernelPlan>> plans;
  std::vector<SharedEvent> ready;
};

//===----------------------------------------------------------------------===//
// The backend
//===----------------------------------------------------------------------===//

class CudaBackend final : public Backend {
public:
  CudaBackend(const CudaBackendOptions &options, std::vector<int> mapping)
      : options_(options) {
    for (int gpu : mapping) {
      auto device = std::make_unique<VirtualDevice>();
      device->gpu = gpu;
      device->arena =
          std::make_unique<DeviceArena>(gpu, options.cachedBytesPerDevice);
      devices_.push_back(std::move(device));
      gpus_[gpu].ordinal = gpu;
    }
  }

  ~CudaBackend() override {
    for (auto &device : devices_) {
      if (device->compute)
        device->compute->destroy();
      for (auto &copy : device->copies)
        if (copy)
          copy->destroy();
      Staging &staging = device->staging;
      ScopedDevice scope;
      if (!scope.enter(device->gpu))
        continue;
      if (staging.stream) {
        (void)cudaStreamSynchronize(staging.stream);
        (void)cudaStreamDestroy(staging.stream);
      }
      for (int b = 0; b < 2; ++b) {
        if (staging.host[b])
          (void)cudaFreeHost(staging.host[b]);
        if (staging.ready[b])
          (void)cudaEventDestroy(staging.ready[b]);
      }
    }
    // Arenas wait for their pending blocks before freeing them; events go
    // back to the pools, which outlive the arenas.
    devices_.clear();
    gpus_.clear();
  }

  /// Queries every GPU in use and enables peer access between them.
  Status initialize() {
    for (auto &entry : gpus_) {
      Gpu &gpu = entry.second;
      ScopedDevice scope;
      if (Status status = scope.enter(gpu.ordinal); !status)
        return status;
      DOPPLER_CUDA_TRY(cudaDeviceGetAttribute(
          &gpu.limits.smCount, cudaDevAttrMultiProcessorCount, gpu.ordinal));
      DOPPLER_CUDA_TRY(cudaDeviceGetAttribute(
          &gpu.limits.maxThreadsPerSm, cudaDevAttrMaxThreadsPerMultiProcessor,
          gpu.ordinal));
    }
    if (!options_.enablePeerAccess)
      return Status();
    for (auto &from : gpus_)
      for (auto &to : gpus_) {
        if (from.first == to.first)
          continue;
        int possible = 0;
        DOPPLER_CUDA_TRY(
            cudaDeviceCanAccessPeer(&possible, from.first, to.first));
        if (!possible)
          continue; // cudaMemcpyPeerAsync then stages through the host.
        ScopedDevice scope;
        if (Status status = scope.enter(from.first); !status)
          return status;
        cudaError_t error = cudaDeviceEnablePeerAccess(to.first, 0);
        if (error == cudaErrorPeerAccessAlreadyEnabled)
          (void)cudaGetLastError();
        else
          DOPPLER_CUDA_TRY(error);
      }
    return Status();
  }

  std::string_view name() const override { return "cuda"; }
  int numDevices() const override { return static_cast<int>(devices_.size()); }

  Result<std::unique_ptr<PreparedGraph>>
  prepare(const TaskGraph &graph) override {
    auto prepared = std::make_unique<CudaPreparedGraph>();
    prepared->plans.resize(graph.size());
    prepared->ready.resize(graph.size());
    for (ValueId id = 0; id < graph.size(); ++id) {
      const Task &task = graph.task(id);
      if (task.device < 0 || task.device >= numDevices())
        return Status::failure(graph.describe(id) + " is on device " +
                               std::to_string(task.device) +
                               " but the CUDA backend has " +
                               std::to_string(numDevices()));
      const DeviceLimits &limits = gpus_.at(devices_[task.device]->gpu).limits;
      Result<KernelPlan> plan = Status::failure("no plan");
      switch (task.kind) {
      case TaskKind::Einsum: {
        std::vector<Shape> shapes;
        for (ValueId input : task.inputs)
          shapes.push_back(graph.task(input).shape);
        plan = planEinsum(task.spec, task.join, task.aggregation, task.scalar,
                          shapes, task.type, limits);
        break;
      }
      case TaskKind::Slice:
        plan = planSlice(graph.task(task.inputs[0]).shape, task.sliceOffsets,
                         task.shape, task.type, limits);
        break;
      case TaskKind::Assemble:
        plan = planAssemble(task.blockExtents, task.type, limits);
        break;
      case TaskKind::Fill:
        plan =
            planFill(numElements(task.shape), task.type, task.scalar, limits);
        break;
      case TaskKind::Input:
      case TaskKind::Transfer:
      case TaskKind::Delay:
        continue;
      }
      if (!plan)
        return plan.status().withContext(graph.describe(id));
      prepared->plans[id] = std::move(*plan);
    }
    return std::unique_ptr<PreparedGraph>(std::move(prepared));
  }

  Status attachWorker(int device, WorkerKind kind, int lane) override {
    Result<Worker *> worker = workerFor(device, kind, lane);
    if (!worker)
      return worker.status();
    // Bind the thread to the GPU once; execute() re-checks cheaply.
    DOPPLER_CUDA_TRY(cudaSetDevice((*worker)->gpu));
    return Status();
  }

  Result<DeviceBuffer> allocate(int device, uint64_t bytes) override {
    if (bytes == 0)
      return DeviceBuffer{};
    Result<void *> data = devices_[device]->arena->allocate(bytes);
    if (!data)
      return data.status().withContext(
          "allocating " + std::to_string(bytes) + " bytes on virtual device " +
          std::to_string(device) + " (GPU " +
          std::to_string(devices_[device]->gpu) + ")");
    return DeviceBuffer{*data, bytes};
  }

  void deallocate(int device, DeviceBuffer buffer) override {
    if (!buffer.data)
      return;
    DeviceArena &arena = *devices_[device]->arena;
    std::vector<SharedEvent> events;
    if (options_.completion == Completion::Deferred)
      events = arena.takeUses(buffer.data);
    arena.release(buffer.data, buffer.bytes, std::move(events));
  }

  Status upload(int device, DeviceBuffer dst, const void *src) override {
    if (dst.bytes == 0)
      return Status();
    VirtualDevice &vd = *devices_[device];
    ScopedDevice scope;
    if (Status status = scope.enter(vd.gpu); !status)
      return status;
    std::lock_guard<std::mutex> lock(vd.staging.mutex);
    if (Status status = ensureStaging(vd); !status)
      return status;
    Staging &staging = vd.staging;
    const uint64_t chunk = options_.stagingBytes;
    auto *to = static_cast<char *>(dst.data);
    auto *from = static_cast<const char *>(src);
    // Double buffering: fill one pinned buffer while the other is copied.
    for (uint64_t offset = 0, i = 0; offset < dst.bytes; offset += chunk, ++i) {
      int b = static_cast<int>(i % 2);
      uint64_t bytes = std::min(chunk, dst.bytes - offset);
      DOPPLER_CUDA_TRY(cudaEventSynchronize(staging.ready[b]));
      std::memcpy(staging.host[b], from + offset, bytes);
      DOPPLER_CUDA_TRY(cudaMemcpyAsync(to + offset, staging.host[b], bytes,
                                       cudaMemcpyHostToDevice, staging.stream));
      DOPPLER_CUDA_TRY(cudaEventRecord(staging.ready[b], staging.stream));
    }
    DOPPLER_CUDA_TRY(cudaStreamSynchronize(staging.stream));
    return Status();
  }

  Status download(int device, DeviceBuffer src, void *dst) override {
    if (src.bytes == 0)
      return Status();
    VirtualDevice &vd = *devices_[device];
    if (options_.completion == Completion::Deferred)
      if (Status status = vd.arena->waitForUses(src.data); !status)
        return status;
    ScopedDevice scope;
    if (Status status = scope.enter(vd.gpu); !status)
      return status;
    std::lock_guard<std::mutex> lock(vd.staging.mutex);
    if (Status status = ensureStaging(vd); !status)
      return status;
    Staging &staging = vd.staging;
    const uint64_t chunk = options_.stagingBytes;
    const uint64_t chunks = (src.bytes + chunk - 1) / chunk;
    auto *from = static_cast<const char *>(src.data);
    auto *to = static_cast<char *>(dst);
    auto enqueue = [&](uint64_t i) -> Status {
      int b = static_cast<int>(i % 2);
      uint64_t offset = i * chunk;
      uint64_t bytes = std::min(chunk, src.bytes - offset);
      DOPPLER_CUDA_TRY(cudaMemcpyAsync(staging.host[b], from + offset, bytes,
                                       cudaMemcpyDeviceToHost, staging.stream));
      DOPPLER_CUDA_TRY(cudaEventRecord(staging.ready[b], staging.stream));
      return Status();
    };
    if (Status status = enqueue(0); !status)
      return status;
    for (uint64_t i = 0; i < chunks; ++i) {
      // The next chunk's buffer was emptied in the previous iteration.
      if (i + 1 < chunks)
        if (Status status = enqueue(i + 1); !status)
          return status;
      int b = static_cast<int>(i % 2);
      DOPPLER_CUDA_TRY(cudaEventSynchronize(staging.ready[b]));
      uint64_t offset = i * chunk;
      std::memcpy(to + offset, staging.host[b],
                  std::min(chunk, src.bytes - offset));
    }
    return Status();
  }

  Status execute(const TaskLaunch &launch) override {
    const Task &task = *launch.task;
    Clock::time_point start = Clock::now();
    Result<Worker *> found = workerFor(
        task.device,
        task.runsOnCopyWorker() ? WorkerKind::Copy : WorkerKind::Compute,
        launch.lane);
    if (!found)
      return found.status();
    Worker &worker = **found;
    DOPPLER_CUDA_TRY(cudaSetDevice(worker.gpu));
    auto *prepared = static_cast<CudaPreparedGraph *>(launch.prepared);
    bool deferred = options_.completion == Completion::Deferred;
    if (deferred)
      for (ValueId input : task.uniqueInputs)
        if (const SharedEvent &ready = prepared->ready[input])
          DOPPLER_CUDA_TRY(cudaStreamWaitEvent(worker.stream, ready->event, 0));

    if (Status status = enqueue(launch, worker, *prepared); !status)
      return status;
    if (deferred)
      return recordCompletion(launch, worker, *prepared);
    if (Status status = waitForStream(worker); !status)
      return status;
    // A fixed-duration transfer lasts that long however fast the copy was
    // (cost-only graphs).
    if (task.kind == TaskKind::Transfer && task.seconds > 0)
      std::this_thread::sleep_until(
          start + std::chrono::duration_cast<Clock::duration>(
                      std::chrono::duration<double>(task.seconds)));
    return Status();
  }

private:
  /// The worker (stream, handle) of (device, kind, lane), created on first
  /// use on the device's GPU.
  Result<Worker *> workerFor(int device, WorkerKind kind, int lane) {
    if (device < 0 || device >= numDevices())
      return Status::failure("virtual device " + std::to_string(device) +
                             " does not exist (the CUDA backend has " +
                             std::to_string(numDevices()) + ")");
    if (lane < 0)
      return Status::failure("negative worker lane");
    VirtualDevice &vd = *devices_[device];
    std::lock_guard<std::mutex> lock(vd.workerMutex);
    std::unique_ptr<Worker> *slot = &vd.compute;
    if (kind == WorkerKind::Copy) {
      if (static_cast<int>(vd.copies.size()) <= lane)
        vd.copies.resize(lane + 1);
      slot = &vd.copies[lane];
    }
    if (*slot)
      return slot->get();
    auto worker = std::make_unique<Worker>();
    worker->gpu = vd.gpu;
    ScopedDevice scope;
    if (Status status = scope.enter(vd.gpu); !status)
      return status;
    Status status = createWorker(*worker, kind == WorkerKind::Compute);
    if (!status) {
      worker->destroy();
      return status.withContext(
          "creating the " +
          std::string(kind == WorkerKind::Compute ? "compute" : "copy") +
          " stream of virtual device " + std::to_string(device));
    }
    *slot = std::move(worker);
    return slot->get();
  }

  Status createWorker(Worker &worker, bool compute) {
    DOPPLER_CUDA_TRY(
        cudaStreamCreateWithFlags(&worker.stream, cudaStreamNonBlocking));
    // Blocking sync: a long task's worker sleeps instead of spinning after
    // its spin budget.
    DOPPLER_CUDA_TRY(cudaEventCreateWithFlags(
        &worker.done, cudaEventDisableTiming | cudaEventBlockingSync));
    if (!compute)
      return Status();
    DOPPLER_CUBLAS_TRY(cublasCreate(&worker.blas));
    DOPPLER_CUBLAS_TRY(cublasSetStream(worker.blas, worker.stream));
    DOPPLER_CUBLAS_TRY(cublasSetMathMode(
        worker.blas,
        options_.allowTf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
    return Status();
  }

  Status ensureStaging(VirtualDevice &vd) {
    Staging &staging = vd.staging;
    if (staging.stream)
      return Status();
    for (int b = 0; b < 2; ++b) {
      DOPPLER_CUDA_TRY(cudaHostAlloc(&staging.host[b], options_.stagingBytes,
                                     cudaHostAllocPortable));
      DOPPLER_CUDA_TRY(
          cudaEventCreateWithFlags(&staging.ready[b], cudaEventDisableTiming));
    }
    DOPPLER_CUDA_TRY(
        cudaStreamCreateWithFlags(&staging.stream, cudaStreamNonBlocking));
    return Status();
  }

  Status ensureScratch(Worker &worker, uint64_t bytes) {
    if (worker.scratchBytes >= bytes)
      return Status();
    if (worker.scratch) {
      // Work queued earlier on this stream may still read the old block.
      DOPPLER_CUDA_TRY(cudaStreamSynchronize(worker.stream));
      DOPPLER_CUDA_TRY(cudaFree(worker.scratch));
      worker.scratch = nullptr;
      worker.scratchBytes = 0;
    }
    uint64_t size = deviceBlockSize(std::max(bytes, worker.scratchBytes * 2));
    DOPPLER_CUDA_TRY(cudaMalloc(&worker.scratch, size));
    worker.scratchBytes = size;
    return Status();
  }

  Status enqueue(const TaskLaunch &launch, Worker &worker,
                 CudaPreparedGraph &prepared) {
    const Task &task = *launch.task;
    switch (task.kind) {
    case TaskKind::Einsum:
    case TaskKind::Slice:
    case TaskKind::Assemble:
    case TaskKind::Fill: {
      const std::optional<KernelPlan> &plan = prepared.plans[launch.id];
      if (!plan)
        return Status::failure("task was not prepared");
      return runPlan(*plan, launch, worker);
    }
    case TaskKind::Transfer:
      return enqueueTransfer(launch, worker);
    case TaskKind::Delay:
      DOPPLER_CUDA_TRY(launchDelay(task.seconds, worker.stream));
      return Status();
    case TaskKind::Input:
      break;
    }
    return Status::failure("task kind '" +
                           std::string(taskKindName(task.kind)) +
                           "' cannot be executed");
  }

  Status enqueueTransfer(const TaskLaunch &launch, Worker &worker) {
    const Task &task = *launch.task;
    uint64_t bytes = launch.output.bytes;
    if (bytes) {
      int srcGpu = devices_[launch.graph->task(task.inputs[0]).device]->gpu;
      void *dst = launch.output.data;
      const void *src = launch.inputs[0].data;
      if (srcGpu == worker.gpu)
        DOPPLER_CUDA_TRY(cudaMemcpyAsync(
            dst, src, bytes, cudaMemcpyDeviceToDevice, worker.stream));
      else // Direct with peer access, otherwise staged by the driver.
        DOPPLER_CUDA_TRY(cudaMemcpyPeerAsync(dst, worker.gpu, src, srcGpu,
                                             bytes, worker.stream));
    }
    if (options_.completion == Completion::Deferred && task.seconds > 0)
      DOPPLER_CUDA_TRY(launchDelay(task.seconds, worker.stream));
    return Status();
  }

  Status runPlan(const KernelPlan &plan, const TaskLaunch &launch,
                 Worker &worker) {
    if (uint64_t scratch = plan.scratchBytes())
      if (Status status = ensureScratch(worker, scratch); !status)
        return status;
    const uint64_t elementBytes = elementSize(plan.type);
    auto address = [&](const BufferRef &ref) -> char * {
      char *base = nullptr;
      switch (ref.kind) {
      case BufferRef::Kind::Input:
        base = static_cast<char *>(launch.inputs[ref.index].data);
        break;
      case BufferRef::Kind::Output:
        base = static_cast<char *>(launch.output.data);
        break;
      case BufferRef::Kind::Temp:
        base = static_cast<char *>(worker.scratch) + plan.tempOffset(ref.index);
        break;
      }
      return base + ref.offset * static_cast<int64_t>(elementBytes);
    };
    cudaStream_t stream = worker.stream;
    for (const Step &step : plan.steps) {
      Status status;
      if (const auto *map = std::get_if<MapStep>(&step))
        status = DOPPLER_CUDA_CHECK(
            launchMap(*map, plan.type, address(map->out), address(map->in0),
                      address(map->in1), stream));
      else if (const auto *reduce = std::get_if<ReduceStep>(&step))
        status = DOPPLER_CUDA_CHECK(
            launchReduce(*reduce, plan.type, address(reduce->out),
                         address(reduce->in0), address(reduce->in1), stream));
      else if (const auto *copy = std::get_if<CopyStep>(&step))
        status = DOPPLER_CUDA_CHECK(
            launchCopy(*copy, address(copy->dst), address(copy->src), stream));
      else if (const auto *fill = std::get_if<FillStep>(&step))
        status =
            DOPPLER_CUDA_CHECK(launchFill(*fill, address(fill->dst), stream));
      else if (const auto *gemm = std::get_if<GemmStep>(&step))
        status = runGemm(*gemm, plan.type, address(gemm->a), address(gemm->b),
                         address(gemm->c), worker);
      if (!status)
        return status.withContext(describeStep(step));
    }
    return Status();
  }

  Status runGemm(const GemmStep &gemm, ElementType type, const void *a,
                 const void *b, void *c, Worker &worker) {
    if (!worker.blas)
      return Status::failure("GEMM on a worker without a cuBLAS handle");
    cublasOperation_t opA = gemm.transA ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t opB = gemm.transB ? CUBLAS_OP_T : CUBLAS_OP_N;
    const int m = static_cast<int>(gemm.m), n = static_cast<int>(gemm.n),
              k = static_cast<int>(gemm.k);
    const int lda = static_cast<int>(gemm.lda),
              ldb = static_cast<int>(gemm.ldb),
              ldc = static_cast<int>(gemm.ldc);
    const int batch = static_cast<int>(gemm.batch);
    const long long strideA = gemm.strideA, strideB = gemm.strideB,
                    strideC = gemm.strideC;
    if (type == ElementType::F64) {
      const double alpha = 1, beta = 0;
      DOPPLER_CUBLAS_TRY(cublasDgemmStridedBatched(
          worker.blas, opA, opB, m, n, k, &alpha,
          static_cast<const double *>(a), lda, strideA,
          static_cast<const double *>(b), ldb, strideB, &beta,
          static_cast<double *>(c), ldc, strideC, batch));
      return Status();
    }
    const float alpha = 1, beta = 0;
    DOPPLER_CUBLAS_TRY(cublasSgemmStridedBatched(
        worker.blas, opA, opB, m, n, k, &alpha, static_cast<const float *>(a),
        lda, strideA, static_cast<const float *>(b), ldb, strideB, &beta,
        static_cast<float *>(c), ldc, strideC, batch));
    return Status();
  }

  /// Synchronize mode: waits for everything enqueued on the worker's
  /// stream, polling briefly before blocking.
  Status waitForStream(Worker &worker) {
    DOPPLER_CUDA_TRY(cudaEventRecord(worker.done, worker.stream));
    Clock::time_point deadline =
        Clock::now() + std::chrono::microseconds(options_.spinMicroseconds);
    while (true) {
      cudaError_t state = cudaEventQuery(worker.done);
      if (state == cudaSuccess)
        return Status();
      if (state != cudaErrorNotReady) // E.g. a fault in the task's kernels.
        return checkCuda(state, "cudaEventQuery(end of task)", __FILE__,
                         __LINE__);
      if (Clock::now() >= deadline)
        break;
      detail::cpuRelax();
    }
    DOPPLER_CUDA_TRY(cudaEventSynchronize(worker.done));
    return Status();
  }

  /// Deferred mode: an event after the task's work, which consumers wait
  /// for on the GPU and which keeps its buffers from being reused early.
  Status recordCompletion(const TaskLaunch &launch, Worker &worker,
                          CudaPreparedGraph &prepared) {
    const std::shared_ptr<EventPool> &pool = gpus_.at(worker.gpu).events;
    Result<cudaEvent_t> event = pool->acquire();
    if (!event)
      return event.status();
    auto shared = std::make_shared<PooledEvent>(*event, pool);
    DOPPLER_CUDA_TRY(cudaEventRecord(shared->event, worker.stream));
    const Task &task = *launch.task;
    for (size_t i = 0; i < task.inputs.size(); ++i)
      if (void *data = launch.inputs[i].data)
        devices_[launch.graph->task(task.inputs[i]).device]->arena->recordUse(
            data, shared);
    if (launch.output.data)
      devices_[task.device]->arena->recordUse(launch.output.data, shared);
    prepared.ready[launch.id] = std::move(shared);
    return Status();
  }

  CudaBackendOptions options_;
  /// Per GPU in use (read-only after initialize()).
  std::map<int, Gpu> gpus_;
  std::vector<std::unique_ptr<VirtualDevice>> devices_;
};

} // namespace

Result<int> cudaDeviceCount() {
  int count = 0;
  cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) {
    (void)cudaGetLastError();
    return Status::failure(std::string("no CUDA device: ") +
                           cudaGetErrorString(error));
  }
  if (count <= 0)
    return Status::failure("no CUDA device: cudaGetDeviceCount reports none");
  return count;
}

Result<std::unique_ptr<Backend>>
createCudaBackend(const CudaBackendOptions &options) {
  if (options.numDevices < 0)
    return Status::failure("the CUDA backend needs a device count >= 0 (0: "
                           "one per GPU), got " +
                           std::to_string(options.numDevices));
  if (options.spinMicroseconds < 0)
    return Status::failure("spinMicroseconds must be >= 0");
  if (options.stagingBytes == 0)
    return Status::failure("stagingBytes must be > 0");
  if (!options.physicalDevices.empty() && options.numDevices != 0 &&
      static_cast<size_t>(options.numDevices) != options.physicalDevices.size())
    return Status::failure("the device mapping names " +
                           std::to_string(options.physicalDevices.size()) +
                           " virtual devices but numDevices is " +
                           std::to_string(options.numDevices));
  Result<int> gpus = cudaDeviceCount();
  if (!gpus)
    return gpus.status();
  std::vector<int> mapping = options.physicalDevices;
  for (int gpu : mapping)
    if (gpu < 0 || gpu >= *gpus)
      return Status::failure("the device mapping names GPU " +
                             std::to_string(gpu) + " but " +
                             std::to_string(*gpus) + " are visible");
  if (mapping.empty()) {
    int count = options.numDevices > 0 ? options.numDevices : *gpus;
    for (int d = 0; d < count; ++d)
      mapping.push_back(d % *gpus);
  }
  auto backend = std::make_unique<CudaBackend>(options, std::move(mapping));
  if (Status status = backend->initialize(); !status)
    return status;
  return std::unique_ptr<Backend>(std::move(backend));
}

} // namespace doppler::runtime
