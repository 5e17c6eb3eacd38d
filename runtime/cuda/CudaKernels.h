//===- CudaKernels.h - Launchers of the CUDA backend's kernels --*- C++ -*-===//
//
// One launcher per step kind of CudaSteps.h. Pointers are the step's buffers
// with their offsets applied; each launcher picks the kernel instantiation
// (element type, index width, group size), enqueues it on `stream` and
// returns the launch's error code (cudaSuccess when nothing was enqueued).
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_RUNTIME_CUDA_CUDAKERNELS_H
#define DOPPLER_RUNTIME_CUDA_CUDAKERNELS_H

#include "CudaSteps.h"

#include <cuda_runtime.h>

namespace doppler::runtime::cuda {

cudaError_t launchMap(const MapStep &step, ElementType type, void *out,
                      const void *in0, const void *in1, cudaStream_t stream);
cudaError_t launchReduce(const ReduceStep &step, ElementType type, void *out,
                         const void *in0, const void *in1, cudaStream_t stream);
/// `inputs`: step.numInputs pointers, offsets applied.
cudaError_t launchFused(const FusedStep &step, ElementType type, void *out,
                        const void *const *inputs, cudaStream_t stream);
/// Contiguous copies become cudaMemcpyAsync.
cudaError_t launchCopy(const CopyStep &step, void *dst, const void *src,
                       cudaStream_t stream);
/// All-zero patterns become cudaMemsetAsync.
cudaError_t launchFill(const FillStep &step, void *dst, cudaStream_t stream);
/// A direct convolution or pool; `weight` is null for a pool.
cudaError_t launchWindow(const WindowStep &step, ElementType type, void *out,
                         const void *input, const void *weight,
                         cudaStream_t stream);
/// A gather's geometry (TaskGraph::addGather): `outer` = prod(table[:axis]),
/// `extent` = table[axis], `count` indices, rows of `rowBytes` bytes.
struct GatherLaunch {
  uint64_t outer = 1, extent = 0, count = 0, rowBytes = 0;
  bool indices64 = true;
};
/// out[p, i, :] = table[p, indices[i], :] (CudaGather.cu); a row whose
/// index is out of range is zero-filled (the backend checks them first).
cudaError_t launchGather(const GatherLaunch &gather, void *out,
                         const void *table, const void *indices,
                         cudaStream_t stream);
/// Keeps one thread of the GPU busy for `seconds` (delay tasks): stream
/// order is kept, and other streams on the GPU keep running.
cudaError_t launchDelay(double seconds, cudaStream_t stream);

} // namespace doppler::runtime::cuda

#endif // DOPPLER_RUNTIME_CUDA_CUDAKERNELS_H
