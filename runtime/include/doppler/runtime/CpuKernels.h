//===- CpuKernels.h - CPU kernels for the runtime's tasks -------*- C++ -*-===//
//
// Single-threaded kernels on dense row-major host buffers; the CPU backend
// runs them on each virtual device's worker thread. Exposed so that tests
// and benchmarks can call them without an executor.
//
// Fused elementwise chains have their own kernel (FusedKernel, CpuFused.cpp),
// convolutions and pooling theirs (ConvolutionKernel, PoolKernel,
// CpuWindow.cpp).
//
// Einsums take one of two paths, chosen once when the kernel is built:
//  - contraction: join mul + aggregation add over two inputs with at least
//    one index shared by both inputs and absent from the output. Indices
//    contracted in only one input are summed out first; the operands are
//    viewed (or, when their layout does not allow it, permuted) as batched
//    matrices and multiplied with OpenBLAS, one GEMM per batch element.
//  - loop: everything else (elementwise, broadcast, reductions, contractions
//    with other joins or aggregations). A strided loop nest whose innermost
//    loop follows the largest operand's contiguous dimension, with adjacent
//    dimensions merged and pointer offsets stepped incrementally (no index
//    decoding per element).
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_RUNTIME_CPUKERNELS_H
#define DOPPLER_RUNTIME_CPUKERNELS_H

#include "doppler/runtime/Status.h"
#include "doppler/runtime/Types.h"

#include "Doppler/Support/EinsumSpec.h"
#include "Doppler/Support/Window.h"

#include <memory>
#include <optional>
#include <string_view>
#include <vector>

namespace doppler::runtime::cpu {

struct EinsumPlan;

/// An einsum bound to input shapes and an element type (f32 or f64).
class EinsumKernel {
public:
  static Result<EinsumKernel> create(const EinsumSpec &spec, JoinKind join,
                                     std::optional<AggKind> aggregation,
                                     double scalar,
                                     const std::vector<Shape> &inputShapes,
                                     ElementType type);

  /// `inputs` has one pointer per spec input; buffers are dense row-major.
  /// Temporary storage (permuted operands) comes from a per-thread cache.
  void run(const void *const *inputs, void *output) const;

  const Shape &outputShape() const;
  /// True when the contraction path (BLAS) is used.
  bool usesGemm() const;

private:
  explicit EinsumKernel(std::shared_ptr<const EinsumPlan> plan)
      : plan_(std::move(plan)) {}
  std::shared_ptr<const EinsumPlan> plan_;
};

struct FusedPlan;

/// A fused elementwise chain (TaskGraph::addFused) bound to input shapes
/// and an element type (f32 or f64). The output is walked in chunks of at
/// most 512 elements along its merged innermost dimension (several whole
/// rows when rows are shorter); each input's chunk is read in place when it
/// is contiguous, as one value when it is broadcast along the chunk, and
/// gathered otherwise; every step of the program then runs over the chunk
/// with the vectorised span joins (CpuJoins.h), into per-thread chunk
/// buffers reused by later steps, and the last step writes the output.
/// Each step rounds to the element type, as the chain of einsums it
/// replaces does, so results match that chain within the joins' accuracy
/// (CpuJoins.h); against JoinProgram::evaluate (double) the tests bound the
/// difference by 1e-6 * max(1, |reference|) in f32 and 1e-12 in f64.
class FusedKernel {
public:
  static Result<FusedKernel> create(const EinsumSpec &spec,
                                    std::string_view program,
                                    const std::vector<Shape> &inputShapes,
                                    ElementType type);

  /// `inputs` has one pointer per spec input; buffers are dense row-major
  /// and the output must not overlap an input. Allocation-free once the
  /// calling thread's chunk buffers have grown to the program's needs.
  void run(const void *const *inputs, void *output) const;

  const Shape &outputShape() const;

private:
  explicit FusedKernel(std::shared_ptr<const FusedPlan> plan)
      : plan_(std::move(plan)) {}
  std::shared_ptr<const FusedPlan> plan_;
};

/// How a convolution is computed (ConvolutionKernel::create picks one when
/// asked for Auto; the others are for tests and benchmarks).
enum class ConvMethod : uint8_t {
  Auto,
  /// 1x1 kernel, stride 1, no padding: per batch element and group, one
  /// GEMM straight on the input (no copy).
  Gemm,
  /// Per batch element and group, the input windows of a block of output
  /// positions copied into columns (at most kIm2colBlockBytes of scratch
  /// per thread, or one position's column when that is larger), then one
  /// GEMM of the group's filters with them.
  Im2col,
  /// One input channel per output channel (C / groups == 1): register-
  /// blocked AVX2+FMA loops over a copy of the channel padded along its
  /// rows (unit stride along the last dim; CPUs with AVX2 and FMA).
  Depthwise,
  /// Loops over valid taps only (any shape; the fallback).
  Direct,
};
std::string_view convMethodName(ConvMethod method);

/// Scratch per thread of the im2col method's column blocks, by default:
/// measured with doppler-bench-window on ResNet-18 layers
/// (bench/WindowBench.cpp).
constexpr uint64_t kIm2colBlockBytes = uint64_t(1) << 20;

struct ConvOptions {
  ConvMethod method = ConvMethod::Auto;
  /// Im2col: bytes of columns per block (at least one position's column).
  uint64_t im2colBlockBytes = kIm2colBlockBytes;
};

struct WindowPlan;

/// A convolution (TaskGraph::addConvolution) bound to shapes, groups, a
/// geometry and an element type (f32 or f64). Results equal
/// convolutionReference up to the order of the sums (rounded to the
/// element type).
class ConvolutionKernel {
public:
  /// Fails on shapes convolutionResultShape refuses, on f16, and when
  /// `options.method` cannot compute this convolution (Gemm on a kernel other than
  /// 1x1 stride 1 unpadded, Depthwise on C / groups > 1 or a stride along
  /// the last dim, Gemm and Im2col on sizes past BLAS's 32-bit integers).
  static Result<ConvolutionKernel>
  create(const Shape &inputShape, const Shape &weightShape, int64_t groups,
         const WindowGeometry &geometry, ElementType type,
         const ConvOptions &options = {});

  /// Dense row-major buffers; the output must not overlap the inputs.
  void run(const void *input, const void *weight, void *output) const;

  const Shape &outputShape() const;
  ConvMethod method() const;

private:
  explicit ConvolutionKernel(std::shared_ptr<const WindowPlan> plan)
      : plan_(std::move(plan)) {}
  std::shared_ptr<const WindowPlan> plan_;
};

/// Max or average pooling (TaskGraph::addPool) bound to a shape, a
/// geometry and an element type (f32 or f64): direct loops over the valid
/// taps of each window. Max equals poolReference exactly (NaN propagates);
/// avg sums in the element type, in the reference's order.
class PoolKernel {
public:
  static Result<PoolKernel> create(PoolKind kind, const Shape &inputShape,
                                   const WindowGeometry &geometry,
                                   ElementType type);
  void run(const void *input, void *output) const;
  const Shape &outputShape() const;

private:
  explicit PoolKernel(std::shared_ptr<const WindowPlan> plan)
      : plan_(std::move(plan)) {}
  std::shared_ptr<const WindowPlan> plan_;
};

/// Sets `count` elements of `out` to `value`.
void fill(void *out, ElementType type, int64_t count, double value);

/// Copies the box `offsets` + `outShape` of `in` (shape `inShape`) into the
/// dense `out`. Arguments must have been validated (the task graph does).
void slice(const void *in, const Shape &inShape,
           const std::vector<int64_t> &offsets, void *out,
           const Shape &outShape, ElementType type);

/// Writes the dense `block` (shape `blockShape`) into `out` (shape
/// `outShape`) at `offsets`: the inverse of slice.
void insertBlock(const void *block, const Shape &blockShape, void *out,
                 const Shape &outShape, const std::vector<int64_t> &offsets,
                 ElementType type);

/// Concatenates a row-major grid of dense blocks (see
/// TaskGraph::addAssemble) into the dense `out`.
void assemble(const std::vector<const void *> &blocks,
              const std::vector<std::vector<int64_t>> &blockExtents, void *out,
              ElementType type);

/// out[p, i, q] = table[p, indices[i], q] for the table of shape
/// `tableShape` [P.., V, Q..] (V at `axis`) and `indexCount` indices of
/// `indexType` (i32, i64, or f32/f64 holding integers); `out` is
/// [P.., I.., Q..] of `type`. Fails, naming the first index outside [0, V)
/// (or not an integer) and its position, before writing anything
/// (CpuGather.cpp).
Status gather(const void *table, const Shape &tableShape, const void *indices,
              ElementType indexType, int64_t indexCount, int64_t axis,
              void *out, ElementType type);

/// out[i] = in[i] converted from `from` (i32, i64, f32, f64) to `to` (f32,
/// f64) for `count` elements: a conversion einsum (CpuConvert.cpp). An
/// integer without an exact value in `to` fails the task, naming it and
/// its position, before anything is written; floats round to nearest.
Status convertElements(const void *in, ElementType from, void *out,
                       ElementType to, int64_t count);

/// Ok when all `indexCount` indices (i32, i64, f32 or f64; host memory)
/// are integers in [0, tableShape[axis]); else the gather's error naming the first bad
/// index and its position (also used by the CUDA backend on a host copy).
Status checkGatherIndices(const void *indices, ElementType indexType,
                          int64_t indexCount, const Shape &tableShape,
                          int64_t axis);

/// Limits OpenBLAS to one thread per call: every virtual device is one
/// worker, so parallelism comes from devices, not from inside a GEMM.
void useSingleThreadedBlas();

} // namespace doppler::runtime::cpu

#endif // DOPPLER_RUNTIME_CPUKERNELS_H
