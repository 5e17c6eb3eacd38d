//===- CudaResources.h - What the CUDA backend owns per GPU ----*- C++ -*-===//
//
// Internal to the CUDA backend (CudaBackend.cpp): scoped device switches,
// event pools, the per-device memory arena, workers (stream, cuBLAS handle,
// scratch), staging buffers, and the per-graph plans.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_RUNTIME_CUDA_CUDARESOURCES_H
#define DOPPLER_RUNTIME_CUDA_CUDARESOURCES_H

#include "doppler/runtime/CudaBackend.h"

#include "CpuRelax.h"
#include "CudaCheck.h"
#include "CudaPlan.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <vector>

namespace doppler::runtime::cuda::resources {

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

} // namespace doppler::runtime::cuda::resources

#endif // DOPPLER_RUNTIME_CUDA_CUDARESOURCES_H
