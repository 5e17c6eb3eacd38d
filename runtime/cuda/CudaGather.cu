//===- CudaGather.cu - The CUDA gather kernel -----------------------------===//
//
// out[p, i, q] = table[p, indices[i], q] as a grid-stride loop over the
// output's words (4-byte words where a row allows, else 2 or 1 bytes). The
// backend checks the indices on the host before the launch (CudaBackend.cpp,
// cpu::checkGatherIndices), so a bad index is an error naming the task; the
// kernel still skips (zero-fills) a row whose index is out of range rather
// than read outside the table.
//
//===----------------------------------------------------------------------===//

#include "CudaKernels.h"

#include <algorithm>
#include <cstdint>

namespace doppler::runtime::cuda {
namespace {

template <typename Word, typename Index>
__global__ void __launch_bounds__(kBlockSize)
    gatherKernel(Word *__restrict__ out, const Word *__restrict__ table,
                 const Index *__restrict__ indices, uint64_t count,
                 uint64_t extent, uint64_t rowWords, uint64_t total) {
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t k = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       k < total; k += stride) {
    const uint64_t word = k % rowWords;
    const uint64_t row = k / rowWords; // p * count + i
    const uint64_t i = row % count, p = row / count;
    const int64_t index = static_cast<int64_t>(indices[i]);
    out[k] = index >= 0 && static_cast<uint64_t>(index) < extent
                 ? table[(p * extent + static_cast<uint64_t>(index)) * rowWords +
                         word]
                 : Word(0);
  }
}

template <typename Word>
cudaError_t enqueueGather(const GatherLaunch &g, void *out, const void *table,
                          const void *indices, cudaStream_t stream) {
  const uint64_t rowWords = g.rowBytes / sizeof(Word);
  const uint64_t total = g.outer * g.count * rowWords;
  const uint64_t wanted = (total + kBlockSize - 1) / kBlockSize;
  dim3 grid(static_cast<unsigned>(std::min<uint64_t>(wanted, 65535))),
      block(kBlockSize);
  if (g.indices64)
    gatherKernel<Word, int64_t><<<grid, block, 0, stream>>>(
        static_cast<Word *>(out), static_cast<const Word *>(table),
        static_cast<const int64_t *>(indices), g.count, g.extent, rowWords,
        total);
  else
    gatherKernel<Word, int32_t><<<grid, block, 0, stream>>>(
        static_cast<Word *>(out), static_cast<const Word *>(table),
        static_cast<const int32_t *>(indices), g.count, g.extent, rowWords,
        total);
  return cudaGetLastError();
}

} // namespace

cudaError_t launchGather(const GatherLaunch &g, void *out, const void *table,
                         const void *indices, cudaStream_t stream) {
  if (g.outer == 0 || g.count == 0 || g.rowBytes == 0)
    return cudaSuccess;
  if (g.rowBytes % 4 == 0)
    return enqueueGather<uint32_t>(g, out, table, indices, stream);
  if (g.rowBytes % 2 == 0)
    return enqueueGather<uint16_t>(g, out, table, indices, stream);
  return enqueueGather<uint8_t>(g, out, table, indices, stream);
}

} // namespace doppler::runtime::cuda
