//===- CudaBackend.h - Virtual devices on NVIDIA GPUs -----------*- C++ -*-===//
//
// Each virtual device lives on one physical GPU (several may share one) and
// has its own memory arena, a compute stream (with its own cuBLAS handle)
// and one copy stream per executor copy worker. Contractions run as cuBLAS
// strided-batched GEMMs (planned like the CPU backend's), everything else
// with the backend's own kernels: strided joins, reductions with every
// aggregation, permutations, slice, assemble, fill. Transfers between
// virtual devices are device-to-device copies on one GPU and peer copies
// between GPUs (direct when peer access could be enabled, otherwise staged
// through host memory by the driver). Uploads and downloads go through
// pinned staging buffers.
//
// Built only when nvcc is found (target DopplerRuntimeCuda, which defines
// DOPPLER_RUNTIME_HAS_CUDA=1 for its users). This header needs no CUDA
// headers. Every CUDA and cuBLAS error becomes a Status naming the call,
// file and line; nothing throws.
//
// Completion. The executor calls execute() on a worker thread and expects
// the task to be done when it returns. By default (Completion::Synchronize)
// execute() enqueues the task's kernels on the worker's stream, records an
// event and waits for it (polling for `spinMicroseconds`, then blocking
// without burning a core), so per-task timings, traces and the memory
// accounting are exact. Completion::Deferred returns as soon as the work is
// enqueued: consumers wait for their inputs with events on the GPU
// (cudaStreamWaitEvent), a freed buffer is reused only after the events of
// every task that touched it completed, and downloads wait for the
// producer. That keeps the GPU busy without a host round trip per task, but
// the executor then times enqueueing, not execution, and an asynchronous
// failure is reported by a later call (possibly for another task).
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_RUNTIME_CUDABACKEND_H
#define DOPPLER_RUNTIME_CUDABACKEND_H

#include "doppler/runtime/Backend.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace doppler::runtime {

struct CudaBackendOptions {
  enum class Completion : uint8_t { Synchronize, Deferred };

  /// Virtual devices. 0: `physicalDevices.size()` when a mapping is given,
  /// else one per visible GPU.
  int numDevices = 0;
  /// The GPU (CUDA ordinal) of each virtual device. Empty: virtual device d
  /// runs on GPU d % (number of visible GPUs).
  std::vector<int> physicalDevices;
  Completion completion = Completion::Synchronize;
  /// Synchronize mode: how long a worker polls for its task's completion
  /// before blocking on it (short tasks finish with no wake-up latency).
  int spinMicroseconds = 50;
  /// Let cuBLAS use TF32 tensor cores for f32 GEMMs (faster, ~1e-3
  /// relative error). Off: plain f32 as on the CPU.
  bool allowTf32 = false;
  /// Enable direct peer access between the GPUs in use where possible.
  bool enablePeerAccess = true;
  /// Freed device blocks each virtual device keeps for reuse (cudaFree
  /// synchronises the whole GPU, so the default keeps everything; the cache
  /// is emptied and the allocation retried when cudaMalloc runs out).
  uint64_t cachedBytesPerDevice = UINT64_MAX;
  /// Size of each of the two pinned staging buffers per virtual device
  /// that uploads and downloads stream through.
  uint64_t stagingBytes = uint64_t(8) << 20;
};

/// Number of visible CUDA devices, or a failure "no CUDA device: <reason>"
/// (no driver, no GPU, CUDA_VISIBLE_DEVICES empty, ...).
Result<int> cudaDeviceCount();

/// Fails cleanly (no crash) when there is no usable GPU, on invalid options
/// (negative counts, a mapping naming a missing GPU, a mapping whose size
/// differs from numDevices) and when creating streams, handles or staging
/// buffers fails.
Result<std::unique_ptr<Backend>>
createCudaBackend(const CudaBackendOptions &options = {});

} // namespace doppler::runtime

#endif // DOPPLER_RUNTIME_CUDABACKEND_H
