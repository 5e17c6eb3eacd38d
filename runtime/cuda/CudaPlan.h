//===- CudaPlan.h - Tasks as sequences of GPU steps -------------*- C++ -*-===//
//
// Host-side planning for the CUDA backend, done once per task in prepare():
// a task becomes a short list of steps (elementwise map, reduction pass,
// strided copy, cuBLAS strided-batched GEMM, fill) over its inputs, its
// output and scratch buffers, with every kernel parameter and launch
// dimension computed here. Executing a plan is a loop of launches; the
// tests interpret the same plans on the host. No CUDA headers needed.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_RUNTIME_CUDA_CUDAPLAN_H
#define DOPPLER_RUNTIME_CUDA_CUDAPLAN_H

#include "CudaSteps.h"

#include "doppler/runtime/Status.h"
#include "doppler/runtime/Types.h"

#include "Doppler/Support/Window.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace doppler::runtime::cuda {

/// A task as steps, with the scratch buffers they need.
struct KernelPlan {
  ElementType type = ElementType::F32;
  std::vector<Step> steps;
  std::vector<uint64_t> tempBytes;
  bool usesGemm = false;

  /// Scratch bytes of all temps (each 256-byte aligned) and where temp `t`
  /// starts in it.
  uint64_t scratchBytes() const;
  uint64_t tempOffset(int t) const;
  int addTemp(uint64_t bytes);
};

/// An einsum of 1 or 2 inputs (same checks and semantics as the CPU
/// kernels). Mul/add contractions become GEMMs when worth it.
Result<KernelPlan> planEinsum(const EinsumSpec &spec, JoinKind join,
                              std::optional<AggKind> aggregation, double scalar,
                              const std::vector<Shape> &inputShapes,
                              ElementType type, const DeviceLimits &limits);
/// A fused elementwise chain (TaskGraph::addFused): one kernel that
/// interprets `program` per element. At most kMaxFusedInputs inputs.
Result<KernelPlan> planFused(const EinsumSpec &spec, std::string_view program,
                             const std::vector<Shape> &inputShapes,
                             ElementType type, const DeviceLimits &limits);
/// input[offsets : offsets + outShape] into the dense output.
Result<KernelPlan> planSlice(const Shape &inShape,
                             const std::vector<int64_t> &offsets,
                             const Shape &outShape, ElementType type,
                             const DeviceLimits &limits);
/// A row-major grid of blocks (inputs in order) into the output.
Result<KernelPlan>
planAssemble(const std::vector<std::vector<int64_t>> &blockExtents,
             ElementType type, const DeviceLimits &limits);
KernelPlan planFill(int64_t count, ElementType type, double value,
                    const DeviceLimits &limits);
/// A convolution (TaskGraph::addConvolution; inputs 0 and 1 the input and
/// the weight) as one direct WindowStep; f32 or f64 (CudaWindowPlan.cpp).
Result<KernelPlan> planConvolution(const Shape &inputShape,
                                   const Shape &weightShape, int64_t groups,
                                   const WindowGeometry &geometry,
                                   ElementType type,
                                   const DeviceLimits &limits);
/// Max or average pooling (TaskGraph::addPool) as one WindowStep.
Result<KernelPlan> planPool(PoolKind kind, const Shape &inputShape,
                            const WindowGeometry &geometry, ElementType type,
                            const DeviceLimits &limits);

/// Grid for `threads` threads of a grid-stride kernel: enough blocks to
/// cover them, at most a few waves of full occupancy.
LaunchConfig gridFor(uint64_t threads, const DeviceLimits &limits);

/// How a reduction pass is spread over threads.
struct ReduceShape {
  int group = 1;      ///< Threads per work item: 1, 32 or kBlockSize.
  int64_t splits = 1; ///< Work items per output point.
  int64_t chunk = 1;  ///< Reduced points per split.
};
/// `contiguous`: the innermost reduced dimension is unit-stride in the
/// larger input, so lanes of a warp read neighbouring elements.
ReduceShape chooseReduceShape(int64_t outCount, int64_t redCount,
                              bool contiguous, const DeviceLimits &limits);

/// The size class a device allocation of `bytes` is rounded up to (512-byte
/// multiples up to 4 KiB, then 8 classes per power of two: at most 12.5%
/// waste), so that freed blocks are reused by similar requests.
uint64_t deviceBlockSize(uint64_t bytes);

/// A one-line description of a step, for messages.
std::string describeStep(const Step &step);
std::string describeWindowStep(const WindowStep &step);

} // namespace doppler::runtime::cuda

#endif // DOPPLER_RUNTIME_CUDA_CUDAPLAN_H
