//===- CudaKernels.cu - The CUDA backend's kernels ------------------------===//
//
// Grid-stride loops around the per-element functions of CudaKernelMath.h.
// Joins and aggregations are switches on uniform parameters rather than
// template arguments: every thread of a launch takes the same branch, and
// this keeps the instantiations (and nvcc's compile time) few.
//
//===----------------------------------------------------------------------===//

#include "CudaKernels.h"

#include <cstdint>

namespace doppler::runtime::cuda {
namespace {

constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kWarpSize = 32;

/// Combines the values of the `Width` lanes (a power of two <= 32, aligned
/// groups) into lane 0 of each group.
template <int Width, typename T>
__device__ __forceinline__ T groupCombine(AggKind agg, T value) {
#pragma unroll
  for (int offset = Width / 2; offset > 0; offset /= 2)
    value = aggOp(agg, value, __shfl_down_sync(kFullMask, value, offset));
  return value;
}

template <typename T, typename Index>
__global__ void __launch_bounds__(kBlockSize)
    mapKernel(const EinsumParams p, T *__restrict__ out,
              const T *__restrict__ in0, const T *__restrict__ in1) {
  const Index count = static_cast<Index>(p.outCount);
  const Index stride = static_cast<Index>(gridDim.x) * blockDim.x;
  for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < count; i += stride)
    mapElement<T, Index>(p, out, in0, in1, i);
}

// Kernel parameters beyond 4 KB need Volta and CUDA 12.1; stay below.
static_assert(sizeof(FusedParams) + sizeof(FusedInputs<double>) +
                      sizeof(void *) <=
                  4096,
              "a fused kernel's parameters fit in 4 KB");

/// A fused elementwise chain: the program is interpreted per element from
/// the parameter space (uniform across the launch, so no divergence).
template <typename T, typename Index>
__global__ void __launch_bounds__(kBlockSize)
    fusedKernel(const FusedParams p, const FusedInputs<T> inputs,
                T *__restrict__ out) {
  const Index count = static_cast<Index>(p.count);
  const Index stride = static_cast<Index>(gridDim.x) * blockDim.x;
  for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < count; i += stride)
    fusedElement<T, Index>(p, out, inputs, i);
}

/// Group 1 or 32: each thread (lane) folds every Group-th point of its work
/// item; warp shuffles combine the lanes. Work items are uniform per warp,
/// so every shuffle has all 32 lanes.
template <typename T, typename Index, int Group>
__global__ void __launch_bounds__(kBlockSize)
    reduceWarpKernel(const EinsumParams p, T *__restrict__ out,
                     const T *__restrict__ in0, const T *__restrict__ in1) {
  static_assert(Group == 1 || Group == kWarpSize, "group is 1 or a warp");
  const Index items = static_cast<Index>(p.outCount * p.splits);
  const Index thread =
      static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x;
  const Index lane = thread % Group;
  const Index stride = static_cast<Index>(gridDim.x) * blockDim.x / Group;
  for (Index item = thread / Group; item < items; item += stride) {
    Index outOffset;
    T acc = reduceLane<T, Index>(p, in0, in1, item, lane, Group, outOffset);
    if constexpr (Group > 1)
      acc = groupCombine<Group>(p.agg, acc);
    if (lane == 0)
      out[outOffset] = acc;
  }
}

/// One block per work item: warps combine by shuffles, then through
/// shared memory.
template <typename T, typename Index>
__global__ void __launch_bounds__(kBlockSize)
    reduceBlockKernel(const EinsumParams p, T *__restrict__ out,
                      const T *__restrict__ in0, const T *__restrict__ in1) {
  constexpr int kWarps = kBlockSize / kWarpSize;
  __shared__ T warpResults[kWarps];
  const Index items = static_cast<Index>(p.outCount * p.splits);
  const int warp = threadIdx.x / kWarpSize;
  const int lane = threadIdx.x % kWarpSize;
  for (Index item = blockIdx.x; item < items; item += gridDim.x) {
    Index outOffset;
    T acc = reduceLane<T, Index>(p, in0, in1, item, threadIdx.x, kBlockSize,
                                 outOffset);
    acc = groupCombine<kWarpSize>(p.agg, acc);
    if (lane == 0)
      warpResults[warp] = acc;
    __syncthreads();
    if (warp == 0) {
      acc = lane < kWarps ? warpResults[lane] : static_cast<T>(p.identity);
      acc = groupCombine<kWarpSize>(p.agg, acc);
      if (lane == 0)
        out[outOffset] = acc;
    }
    __syncthreads(); // warpResults is reused by the next item.
  }
}

template <typename Word, typename Index>
__global__ void __launch_bounds__(kBlockSize)
    copyKernel(const CopyParams p, Word *__restrict__ dst,
               const Word *__restrict__ src) {
  const Index count = static_cast<Index>(p.count);
  const Index stride = static_cast<Index>(gridDim.x) * blockDim.x;
  for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < count; i += stride)
    copyElement<Word, Index>(p, dst, src, i);
}

/// A tile per block: read coalesced along the source's unit-stride rows
/// into shared memory, write coalesced along the destination's columns.
template <typename Word, typename Index>
__global__ void __launch_bounds__(kBlockSize)
    transposeKernel(const TransposeParams t, Word *__restrict__ dst,
                    const Word *__restrict__ src) {
  static_assert(kTransposeTile * kTransposeBlockRows == kBlockSize,
                "a transpose block has kBlockSize threads");
  // +1 column: the transposed reads hit different banks.
  __shared__ Word tile[kTransposeTile][kTransposeTile + 1];
  const Index rows = static_cast<Index>(t.rows);
  const Index cols = static_cast<Index>(t.cols);
  const Index tiles = static_cast<Index>(t.batches) *
                      ((rows + kTransposeTile - 1) / kTransposeTile) *
                      ((cols + kTransposeTile - 1) / kTransposeTile);
  for (Index id = blockIdx.x; id < tiles; id += gridDim.x) {
    Index offset[2], row0, col0;
    transposeTile<Index>(t, id, offset, row0, col0);
    for (int i = threadIdx.y; i < kTransposeTile; i += kTransposeBlockRows) {
      Index row = row0 + threadIdx.x, col = col0 + i;
      if (row < rows && col < cols)
        tile[i][threadIdx.x] =
            src[offset[1] + row + col * static_cast<Index>(t.srcColStride)];
    }
    __syncthreads();
    for (int i = threadIdx.y; i < kTransposeTile; i += kTransposeBlockRows) {
      Index row = row0 + i, col = col0 + threadIdx.x;
      if (row < rows && col < cols)
        dst[offset[0] + row * static_cast<Index>(t.dstRowStride) + col] =
            tile[threadIdx.x][i];
    }
    __syncthreads(); // The tile is refilled by the next iteration.
  }
}

template <typename Word>
__global__ void __launch_bounds__(kBlockSize)
    fillKernel(Word *__restrict__ dst, uint64_t count, Word value) {
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t i =
           static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < count; i += stride)
    dst[i] = value;
}

__device__ __forceinline__ uint64_t globalTimer() {
  uint64_t nanoseconds;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(nanoseconds));
  return nanoseconds;
}

__global__ void delayKernel(uint64_t nanoseconds) {
  const uint64_t start = globalTimer();
  while (globalTimer() - start < nanoseconds)
    __nanosleep(1000);
}

template <typename T, typename Index>
void enqueueReduce(const ReduceStep &step, T *out, const T *in0, const T *in1,
                   cudaStream_t stream) {
  dim3 grid(step.launch.blocks), block(kBlockSize);
  if (step.group == kBlockSize)
    reduceBlockKernel<T, Index>
        <<<grid, block, 0, stream>>>(step.params, out, in0, in1);
  else if (step.group == kWarpSize)
    reduceWarpKernel<T, Index, kWarpSize>
        <<<grid, block, 0, stream>>>(step.params, out, in0, in1);
  else
    reduceWarpKernel<T, Index, 1>
        <<<grid, block, 0, stream>>>(step.params, out, in0, in1);
}

template <typename T>
void enqueueReduceTyped(const ReduceStep &step, void *out, const void *in0,
                        const void *in1, cudaStream_t stream) {
  T *o = static_cast<T *>(out);
  const T *a = static_cast<const T *>(in0);
  const T *b = static_cast<const T *>(in1);
  if (step.wide)
    enqueueReduce<T, uint64_t>(step, o, a, b, stream);
  else
    enqueueReduce<T, uint32_t>(step, o, a, b, stream);
}

template <typename T>
void enqueueMapTyped(const MapStep &step, void *out, const void *in0,
                     const void *in1, cudaStream_t stream) {
  T *o = static_cast<T *>(out);
  const T *a = static_cast<const T *>(in0);
  const T *b = static_cast<const T *>(in1);
  dim3 grid(step.launch.blocks), block(kBlockSize);
  if (step.wide)
    mapKernel<T, uint64_t><<<grid, block, 0, stream>>>(step.params, o, a, b);
  else
    mapKernel<T, uint32_t><<<grid, block, 0, stream>>>(step.params, o, a, b);
}

template <typename T>
void enqueueFusedTyped(const FusedStep &step, void *out,
                       const void *const *inputs, cudaStream_t stream) {
  FusedInputs<T> typed;
  for (int k = 0; k < step.numInputs; ++k)
    typed.in[k] = static_cast<const T *>(inputs[k]);
  T *o = static_cast<T *>(out);
  dim3 grid(step.launch.blocks), block(kBlockSize);
  if (step.wide)
    fusedKernel<T, uint64_t>
        <<<grid, block, 0, stream>>>(*step.params, typed, o);
  else
    fusedKernel<T, uint32_t>
        <<<grid, block, 0, stream>>>(*step.params, typed, o);
}

template <typename Word>
void enqueueCopyTyped(const CopyStep &step, void *dst, const void *src,
                      cudaStream_t stream) {
  Word *d = static_cast<Word *>(dst);
  const Word *s = static_cast<const Word *>(src);
  dim3 grid(step.launch.blocks), block(kBlockSize);
  if (step.tiled) {
    dim3 tileBlock(kTransposeTile, kTransposeBlockRows);
    if (step.wide)
      transposeKernel<Word, uint64_t>
          <<<grid, tileBlock, 0, stream>>>(step.transpose, d, s);
    else
      transposeKernel<Word, uint32_t>
          <<<grid, tileBlock, 0, stream>>>(step.transpose, d, s);
    return;
  }
  if (step.wide)
    copyKernel<Word, uint64_t><<<grid, block, 0, stream>>>(step.params, d, s);
  else
    copyKernel<Word, uint32_t><<<grid, block, 0, stream>>>(step.params, d, s);
}

/// A direct convolution or pool: one output element per thread.
template <typename T, typename Index>
__global__ void __launch_bounds__(kBlockSize)
    windowKernel(const WindowParams p, T *__restrict__ out,
                 const T *__restrict__ input, const T *__restrict__ weight) {
  const Index count = static_cast<Index>(p.count);
  const Index stride = static_cast<Index>(gridDim.x) * blockDim.x;
  for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < count; i += stride)
    windowElement<T, Index>(p, out, input, weight, i);
}

template <typename T>
void enqueueWindowTyped(const WindowStep &step, void *out, const void *input,
                        const void *weight, cudaStream_t stream) {
  dim3 grid(step.launch.blocks), block(kBlockSize);
  T *o = static_cast<T *>(out);
  const T *in = static_cast<const T *>(input);
  const T *w = static_cast<const T *>(weight);
  if (step.wide)
    windowKernel<T, uint64_t><<<grid, block, 0, stream>>>(step.params, o, in, w);
  else
    windowKernel<T, uint32_t><<<grid, block, 0, stream>>>(step.params, o, in, w);
}

} // namespace

cudaError_t launchWindow(const WindowStep &step, ElementType type, void *out,
                         const void *input, const void *weight,
                         cudaStream_t stream) {
  if (step.launch.blocks == 0 || step.params.count == 0)
    return cudaSuccess;
  if (type == ElementType::F64)
    enqueueWindowTyped<double>(step, out, input, weight, stream);
  else if (type == ElementType::F32)
    enqueueWindowTyped<float>(step, out, input, weight, stream);
  else
    return cudaErrorInvalidValue;
  return cudaGetLastError();
}

cudaError_t launchMap(const MapStep &step, ElementType type, void *out,
                      const void *in0, const void *in1, cudaStream_t stream) {
  if (step.launch.blocks == 0)
    return cudaSuccess;
  if (type == ElementType::F64)
    enqueueMapTyped<double>(step, out, in0, in1, stream);
  else if (type == ElementType::F32)
    enqueueMapTyped<float>(step, out, in0, in1, stream);
  else
    return cudaErrorInvalidValue;
  return cudaGetLastError();
}

cudaError_t launchFused(const FusedStep &step, ElementType type, void *out,
                        const void *const *inputs, cudaStream_t stream) {
  if (step.launch.blocks == 0)
    return cudaSuccess;
  if (!step.params || step.numInputs > kMaxFusedInputs)
    return cudaErrorInvalidValue;
  if (type == ElementType::F64)
    enqueueFusedTyped<double>(step, out, inputs, stream);
  else if (type == ElementType::F32)
    enqueueFusedTyped<float>(step, out, inputs, stream);
  else
    return cudaErrorInvalidValue;
  return cudaGetLastError();
}

cudaError_t launchReduce(const ReduceStep &step, ElementType type, void *out,
                         const void *in0, const void *in1,
                         cudaStream_t stream) {
  if (step.launch.blocks == 0)
    return cudaSuccess;
  if (step.group != 1 && step.group != kWarpSize && step.group != kBlockSize)
    return cudaErrorInvalidValue;
  if (type == ElementType::F64)
    enqueueReduceTyped<double>(step, out, in0, in1, stream);
  else if (type == ElementType::F32)
    enqueueReduceTyped<float>(step, out, in0, in1, stream);
  else
    return cudaErrorInvalidValue;
  return cudaGetLastError();
}

cudaError_t launchCopy(const CopyStep &step, void *dst, const void *src,
                       cudaStream_t stream) {
  if (step.params.count == 0)
    return cudaSuccess;
  if (step.contiguous)
    return cudaMemcpyAsync(
        dst, src, static_cast<size_t>(step.params.count) * step.elementBytes,
        cudaMemcpyDeviceToDevice, stream);
  switch (step.elementBytes) {
  case 2:
    enqueueCopyTyped<uint16_t>(step, dst, src, stream);
    break;
  case 4:
    enqueueCopyTyped<uint32_t>(step, dst, src, stream);
    break;
  case 8:
    enqueueCopyTyped<uint64_t>(step, dst, src, stream);
    break;
  default:
    return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t launchFill(const FillStep &step, void *dst, cudaStream_t stream) {
  if (step.count == 0)
    return cudaSuccess;
  if (step.pattern == 0)
    return cudaMemsetAsync(
        dst, 0, static_cast<size_t>(step.count) * step.elementBytes, stream);
  dim3 grid(step.launch.blocks), block(kBlockSize);
  uint64_t count = static_cast<uint64_t>(step.count);
  switch (step.elementBytes) {
  case 2:
    fillKernel<uint16_t>
        <<<grid, block, 0, stream>>>(static_cast<uint16_t *>(dst), count,
                                     static_cast<uint16_t>(step.pattern));
    break;
  case 4:
    fillKernel<uint32_t>
        <<<grid, block, 0, stream>>>(static_cast<uint32_t *>(dst), count,
                                     static_cast<uint32_t>(step.pattern));
    break;
  case 8:
    fillKernel<uint64_t><<<grid, block, 0, stream>>>(
        static_cast<uint64_t *>(dst), count, step.pattern);
    break;
  default:
    return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t launchDelay(double seconds, cudaStream_t stream) {
  if (!(seconds > 0))
    return cudaSuccess;
  delayKernel<<<1, 1, 0, stream>>>(static_cast<uint64_t>(seconds * 1e9));
  return cudaGetLastError();
}

} // namespace doppler::runtime::cuda
