//===- CudaSteps.h - The steps a CUDA task is made of -----------*- C++ -*-===//
//
// Plain descriptions of what the CUDA backend enqueues for a task: kernel
// parameters, launch grids, cuBLAS arguments and the buffers involved.
// Built by CudaPlan.h, launched by CudaKernels.h. Kept free of Status so
// that nvcc compiles it without the host-only parts.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_RUNTIME_CUDA_CUDASTEPS_H
#define DOPPLER_RUNTIME_CUDA_CUDASTEPS_H

#include "CudaKernelMath.h"
#include "CudaWindowMath.h"

#include "doppler/runtime/Types.h"

#include <cstdint>
#include <memory>
#include <variant>

namespace doppler::runtime::cuda {

/// What a GPU offers, for launch and splitting decisions.
struct DeviceLimits {
  int smCount = 132;
  int maxThreadsPerSm = 2048;
};

/// Threads per block of every kernel (a multiple of the warp size).
constexpr int kBlockSize = 256;

/// A buffer a step reads or writes, `offset` elements into it.
struct BufferRef {
  enum class Kind : uint8_t { Input, Output, Temp };
  Kind kind = Kind::Output;
  int index = 0; ///< Input number or temp number.
  int64_t offset = 0;

  static BufferRef input(int i, int64_t offset = 0) {
    return {Kind::Input, i, offset};
  }
  static BufferRef output(int64_t offset = 0) {
    return {Kind::Output, 0, offset};
  }
  static BufferRef temp(int t) { return {Kind::Temp, t, 0}; }
};

/// Grid of a grid-stride kernel (blocks of kBlockSize threads).
struct LaunchConfig {
  uint32_t blocks = 0;
};

/// out = join(in0, in1) elementwise over params.out.
struct MapStep {
  EinsumParams params;
  BufferRef out, in0, in1;
  bool wide = false; ///< 64-bit index math.
  LaunchConfig launch;
};

/// One reduction pass: `group` threads (1, 32 or kBlockSize) per work item
/// (output point x split).
struct ReduceStep {
  EinsumParams params;
  BufferRef out, in0, in1;
  int group = 1;
  bool wide = false;
  LaunchConfig launch;
};

/// dst = src over a strided box of elements of `elementBytes` (2, 4, 8).
struct CopyStep {
  CopyParams params;
  unsigned elementBytes = 4;
  BufferRef dst, src;
  /// Both sides dense over the whole box: a plain memcpy.
  bool contiguous = false;
  /// A batched transpose: `transpose` tiles, `launch` blocks of
  /// kTransposeTile x kTransposeBlockRows threads.
  bool tiled = false;
  TransposeParams transpose;
  bool wide = false;
  LaunchConfig launch;
};

/// cuBLAS <S|D>gemmStridedBatched, arguments in cuBLAS's column-major
/// terms: C (m x n) = op(A) (m x k) * op(B) (k x n) per batch element.
struct GemmStep {
  bool transA = false, transB = false;
  int64_t m = 0, n = 0, k = 0;
  int64_t lda = 1, ldb = 1, ldc = 1;
  int64_t strideA = 0, strideB = 0, strideC = 0;
  int64_t batch = 1;
  BufferRef a, b, c;
};

/// `count` elements of `elementBytes` set to the bit pattern `pattern`.
struct FillStep {
  BufferRef dst;
  int64_t count = 0;
  unsigned elementBytes = 4;
  uint64_t pattern = 0;
  LaunchConfig launch;
};

/// out = program(inputs) elementwise (a fused task). The parameters are
/// shared, not inline: they are several times a MapStep's size and every
/// Step would otherwise carry that much.
struct FusedStep {
  std::shared_ptr<const FusedParams> params;
  BufferRef out;
  int numInputs = 0;
  BufferRef in[kMaxFusedInputs];
  bool wide = false;
  LaunchConfig launch;
};

/// A direct convolution or pool (CudaWindowMath.h): one thread per output
/// element. `weight` is read by convolutions only.
struct WindowStep {
  WindowParams params;
  BufferRef out, input, weight;
  bool hasWeight = false;
  bool wide = false; ///< 64-bit output index.
  LaunchConfig launch;
};

using Step = std::variant<MapStep, ReduceStep, CopyStep, GemmStep, FillStep,
                          FusedStep, WindowStep>;

} // namespace doppler::runtime::cuda

#endif // DOPPLER_RUNTIME_CUDA_CUDASTEPS_H
