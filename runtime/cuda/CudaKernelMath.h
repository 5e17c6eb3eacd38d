//===- CudaKernelMath.h - What one GPU thread computes ----------*- C++ -*-===//
//
// The per-element work of the CUDA kernels as __host__ __device__ functions:
// join and aggregation formulas (exactly applyJoin/applyAgg's, in the
// element type, as the CPU kernels compute them), decoding a linear index
// into strided offsets, and folding a range of a reduction. The kernels in
// CudaKernels.cu are thin loops around these, and the host-side tests run
// the very same functions over whole plans, so the index math and the
// semantics are checked on machines without a GPU.
//
// Compiled by nvcc (device and host) and by the host compiler (tests).
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_RUNTIME_CUDA_CUDAKERNELMATH_H
#define DOPPLER_RUNTIME_CUDA_CUDAKERNELMATH_H

#include "Doppler/Support/EinsumSpec.h"

#include <cstdint>
#include <math.h>

#if defined(__CUDACC__)
#define DOPPLER_HD __host__ __device__ __forceinline__
#else
#define DOPPLER_HD inline
#endif
// Loops over kMaxDims are unrolled on the device so that per-dimension
// counters stay in registers instead of local memory.
#if defined(__CUDA_ARCH__)
#define DOPPLER_UNROLL _Pragma("unroll")
#else
#define DOPPLER_UNROLL
#endif

namespace doppler::runtime::cuda {

/// Dimensions a kernel walks after merging (more fail at planning time).
constexpr int kMaxDims = 10;
/// Operand slots of a space: output (or copy destination), then inputs.
constexpr int kOutSlot = 0, kIn0Slot = 1, kIn1Slot = 2, kNumSlots = 3;

/// A strided index space, outermost dimension first. Each slot (operand)
/// has a stride per dimension, in elements (0: broadcast or absent).
struct StridedSpace {
  int rank = 0;
  int64_t extent[kMaxDims] = {};
  int64_t stride[kNumSlots][kMaxDims] = {};
};

/// One einsum step: out[o] = join(in0, in1) for elementwise maps, or
/// out[o] = agg over the reduced space of join(in0, in1) for reductions.
struct EinsumParams {
  StridedSpace out; ///< Output dimensions; strides for out, in0, in1.
  StridedSpace red; ///< Reduced dimensions; strides for in0, in1.
  int64_t outCount = 1;
  int64_t redCount = 1;
  /// Reductions: each output is split into `splits` chunks of `chunk`
  /// reduced points; with more than one split the partial results go to a
  /// dense [splits][outCount] buffer that a further step reduces.
  int64_t splits = 1;
  int64_t chunk = 1;
  bool toPartials = false;
  JoinKind join = JoinKind::Identity;
  AggKind agg = AggKind::Add;
  double scalar = 0;
  double identity = 0; ///< aggIdentity(agg).
};

/// A strided copy of `count` elements: slot 0 destination, slot 1 source.
struct CopyParams {
  StridedSpace space;
  int64_t count = 0;
};

/// A copy whose source is unit-stride along dimension `rows` and whose
/// destination is unit-stride along the last dimension `cols` (a batched
/// transpose), walked in square tiles through shared memory so that both
/// sides are read and written coalesced. `batch` holds the other
/// dimensions (slot 0 destination, slot 1 source).
struct TransposeParams {
  StridedSpace batch;
  int64_t batches = 1;
  int64_t rows = 1, cols = 1;
  int64_t srcColStride = 0; ///< Source stride of the column dimension.
  int64_t dstRowStride = 0; ///< Destination stride of the row dimension.
};

/// Most inputs and steps a fused elementwise kernel takes (planning fails
/// beyond them); the steps' bound is JoinProgram.h's kMaxJoinProgramSteps.
constexpr int kMaxFusedInputs = 12;
constexpr int kMaxFusedSteps = 64;

/// One step of a fused program: value[kMaxFusedInputs + j] =
/// join(value[a], value[b], scalar), where operand codes below
/// kMaxFusedInputs name inputs and the others earlier steps (b is a for
/// unary joins).
struct FusedStepCode {
  JoinKind join = JoinKind::Identity;
  uint8_t a = 0, b = 0;
  double scalar = 0;
};

/// A fused elementwise chain over a dense output walked in its own order
/// (the output offset of point i is i): `space` holds each input's strides
/// in slots 0..numInputs-1 (0: broadcast). A kernel parameter of about
/// 2.2 KB, within the 4 KB every architecture takes.
struct FusedParams {
  int rank = 0;
  int64_t extent[kMaxDims] = {};
  int64_t stride[kMaxFusedInputs][kMaxDims] = {};
  int64_t count = 0;
  int numInputs = 0;
  int numSteps = 0;
  FusedStepCode steps[kMaxFusedSteps] = {};
};

/// The inputs of a fused step, by kernel parameter.
template <typename T> struct FusedInputs {
  const T *in[kMaxFusedInputs] = {};
};

/// Tile edge and the rows of a tile each thread block row handles.
constexpr int kTransposeTile = 32;
constexpr int kTransposeBlockRows = 8;

//===----------------------------------------------------------------------===//
// Scalar functions (float and double overloads on host and device).
//===----------------------------------------------------------------------===//

DOPPLER_HD float mathExp(float x) { return expf(x); }
DOPPLER_HD double mathExp(double x) { return exp(x); }
DOPPLER_HD float mathLog(float x) { return logf(x); }
DOPPLER_HD double mathLog(double x) { return log(x); }
DOPPLER_HD float mathSqrt(float x) { return sqrtf(x); }
DOPPLER_HD double mathSqrt(double x) { return sqrt(x); }
DOPPLER_HD float mathPow(float x, float y) { return powf(x, y); }
DOPPLER_HD double mathPow(double x, double y) { return pow(x, y); }
DOPPLER_HD float mathAbs(float x) { return fabsf(x); }
DOPPLER_HD double mathAbs(double x) { return fabs(x); }
DOPPLER_HD float mathTanh(float x) { return tanhf(x); }
DOPPLER_HD double mathTanh(double x) { return tanh(x); }
DOPPLER_HD float mathErf(float x) { return erff(x); }
DOPPLER_HD double mathErf(double x) { return erf(x); }

/// applyJoin in T. Max/Min keep std::max(a, b)/std::min(a, b)'s argument
/// order, so a NaN in `a` propagates and one in `b` does not.
template <typename T> DOPPLER_HD T joinOp(JoinKind kind, T a, T b, T scalar) {
  switch (kind) {
  case JoinKind::Identity:
    return a;
  case JoinKind::Add:
    return a + b;
  case JoinKind::Sub:
    return a - b;
  case JoinKind::Mul:
    return a * b;
  case JoinKind::Div:
    return a / b;
  case JoinKind::Max:
    return a < b ? b : a;
  case JoinKind::Min:
    return b < a ? b : a;
  case JoinKind::Pow:
    return mathPow(a, b);
  case JoinKind::Neg:
    return -a;
  case JoinKind::Exp:
    return mathExp(a);
  case JoinKind::Log:
    return mathLog(a);
  case JoinKind::Sqrt:
    return mathSqrt(a);
  case JoinKind::Rsqrt:
    return T(1) / mathSqrt(a);
  case JoinKind::Reciprocal:
    return T(1) / a;
  case JoinKind::Abs:
    return mathAbs(a);
  case JoinKind::Relu:
    return a > T(0) ? a : T(0);
  case JoinKind::Silu:
    return a / (T(1) + mathExp(-a));
  case JoinKind::Gelu:
    return T(0.5) * a *
           (T(1) +
            mathTanh(T(0.7978845608028654) * (a + T(0.044715) * a * a * a)));
  case JoinKind::Tanh:
    return mathTanh(a);
  case JoinKind::Sigmoid:
    return T(1) / (T(1) + mathExp(-a));
  case JoinKind::Square:
    return a * a;
  case JoinKind::Scale:
    return a * scalar;
  case JoinKind::Shift:
    return a + scalar;
  case JoinKind::Erf:
    return mathErf(a);
  case JoinKind::Eq:
    return a == b ? T(1) : T(0);
  case JoinKind::Ne:
    return a != b ? T(1) : T(0);
  case JoinKind::Lt:
    return a < b ? T(1) : T(0);
  case JoinKind::Le:
    return a <= b ? T(1) : T(0);
  case JoinKind::Gt:
    return a > b ? T(1) : T(0);
  case JoinKind::Ge:
    return a >= b ? T(1) : T(0);
  case JoinKind::Where:
    return a != T(0) ? b : T(-0.0);
  }
  return a;
}

/// applyAgg in T. Folding from the identity, max and min never take a NaN
/// (std::max(acc, NaN) is acc), so partial results of a reduction can be
/// combined in any order with the same function.
template <typename T> DOPPLER_HD T aggOp(AggKind kind, T acc, T value) {
  switch (kind) {
  case AggKind::Add:
    return acc + value;
  case AggKind::Mul:
    return acc * value;
  case AggKind::Max:
    return acc < value ? value : acc;
  case AggKind::Min:
    return value < acc ? value : acc;
  }
  return acc;
}

//===----------------------------------------------------------------------===//
// Index math. `Index` is uint32_t when every count and offset of a step
// fits in 31 bits (cheaper division), else uint64_t. Unsigned wrap-around
// in intermediate offsets is harmless: results are taken modulo 2^N.
//===----------------------------------------------------------------------===//

/// Offsets of point `linear` of a space of `rank` dimensions of `extent`,
/// one per row of `stride`: the first `used` of the `Slots` rows (the rest
/// stay 0). Shared by einsum spaces and fused steps.
template <typename Index, int Slots>
DOPPLER_HD void decodeStrided(int rank, const int64_t (&extent)[kMaxDims],
                              const int64_t (*stride)[kMaxDims], int used,
                              Index linear, Index (&offset)[Slots]) {
  DOPPLER_UNROLL
  for (int slot = 0; slot < Slots; ++slot)
    offset[slot] = 0;
  if (rank == 1) { // The common case after merging: no division.
    DOPPLER_UNROLL
    for (int slot = 0; slot < Slots; ++slot)
      if (slot < used)
        offset[slot] = linear * static_cast<Index>(stride[slot][0]);
    return;
  }
  DOPPLER_UNROLL
  for (int d = kMaxDims - 1; d >= 0; --d) {
    if (d < rank) {
      Index coord = linear;
      if (d > 0) {
        Index size = static_cast<Index>(extent[d]);
        Index quotient = linear / size;
        coord = linear - quotient * size;
        linear = quotient;
      }
      DOPPLER_UNROLL
      for (int slot = 0; slot < Slots; ++slot)
        if (slot < used)
          offset[slot] += coord * static_cast<Index>(stride[slot][d]);
    }
  }
}

/// Offsets (per slot, the first `Slots`) of point `linear` of `space`.
template <typename Index, int Slots>
DOPPLER_HD void decodeOffsets(const StridedSpace &space, Index linear,
                              Index (&offset)[Slots]) {
  decodeStrided<Index, Slots>(space.rank, space.extent, space.stride, Slots,
                              linear, offset);
}

/// Folds reduced points begin, begin + step, ... (< end) of `p.red` into
/// the aggregation's identity, reading the inputs at base offsets
/// `base0`/`base1` (the output point's).
template <typename T, typename Index>
DOPPLER_HD T foldReduced(const EinsumParams &p, const T *in0, const T *in1,
                         Index base0, Index base1, Index begin, Index end,
                         Index step) {
  const T scalar = static_cast<T>(p.scalar);
  T acc = static_cast<T>(p.identity);
  if (begin >= end)
    return acc;
  const StridedSpace &red = p.red;
  if (red.rank <= 1) {
    Index s0 = red.rank ? static_cast<Index>(red.stride[kIn0Slot][0]) : 0;
    Index s1 = red.rank ? static_cast<Index>(red.stride[kIn1Slot][0]) : 0;
    for (Index r = begin; r < end; r += step)
      acc = aggOp(
          p.agg, acc,
          joinOp(p.join, in0[base0 + r * s0], in1[base1 + r * s1], scalar));
    return acc;
  }
  // Several dimensions: decode `begin` once, then step an odometer; a
  // division happens only when a counter wraps.
  Index counter[kMaxDims];
  Index o0 = base0, o1 = base1;
  {
    Index linear = begin;
    DOPPLER_UNROLL
    for (int d = kMaxDims - 1; d >= 0; --d) {
      counter[d] = 0;
      if (d < red.rank) {
        Index extent = static_cast<Index>(red.extent[d]);
        Index quotient = linear / extent;
        counter[d] = linear - quotient * extent;
        linear = quotient;
        o0 += counter[d] * static_cast<Index>(red.stride[kIn0Slot][d]);
        o1 += counter[d] * static_cast<Index>(red.stride[kIn1Slot][d]);
      }
    }
  }
  for (Index r = begin; r < end; r += step) {
    acc = aggOp(p.agg, acc, joinOp(p.join, in0[o0], in1[o1], scalar));
    Index carry = step;
    DOPPLER_UNROLL
    for (int d = kMaxDims - 1; d >= 0; --d) {
      if (d < red.rank && carry) {
        Index extent = static_cast<Index>(red.extent[d]);
        Index next = counter[d] + carry;
        carry = 0;
        if (next >= extent) {
          carry = next / extent;
          next -= carry * extent;
        }
        Index delta = next - counter[d]; // May wrap: fine modulo 2^N.
        o0 += delta * static_cast<Index>(red.stride[kIn0Slot][d]);
        o1 += delta * static_cast<Index>(red.stride[kIn1Slot][d]);
        counter[d] = next;
      }
    }
  }
  return acc;
}

/// Lane `lane` (of `group` lanes sharing work item `item`) of a reduction:
/// its partial result, and where the combined result of the group goes.
template <typename T, typename Index>
DOPPLER_HD T reduceLane(const EinsumParams &p, const T *in0, const T *in1,
                        Index item, Index lane, Index group, Index &outOffset) {
  Index outCount = static_cast<Index>(p.outCount);
  Index split = item / outCount;
  Index point = item - split * outCount;
  Index offset[kNumSlots];
  decodeOffsets<Index, kNumSlots>(p.out, point, offset);
  outOffset = p.toPartials ? item : offset[kOutSlot];
  Index chunk = static_cast<Index>(p.chunk);
  Index begin = split * chunk;
  Index end = begin + chunk;
  if (end > static_cast<Index>(p.redCount))
    end = static_cast<Index>(p.redCount);
  return foldReduced<T, Index>(p, in0, in1, offset[kIn0Slot], offset[kIn1Slot],
                               begin + lane, end, group);
}

/// Element `i` of an elementwise einsum step.
template <typename T, typename Index>
DOPPLER_HD void mapElement(const EinsumParams &p, T *out, const T *in0,
                           const T *in1, Index i) {
  Index offset[kNumSlots];
  decodeOffsets<Index, kNumSlots>(p.out, i, offset);
  out[offset[kOutSlot]] =
      joinOp(p.join, in0[offset[kIn0Slot]], in1[offset[kIn1Slot]],
             static_cast<T>(p.scalar));
}

/// Element `i` of a fused step: decodes each input's offset, then
/// interprets the program (every thread takes the same branches).
template <typename T, typename Index>
DOPPLER_HD void fusedElement(const FusedParams &p, T *out,
                             const FusedInputs<T> &inputs, Index i) {
  T value[kMaxFusedInputs + kMaxFusedSteps];
  Index offset[kMaxFusedInputs];
  decodeStrided<Index, kMaxFusedInputs>(p.rank, p.extent, p.stride,
                                        p.numInputs, i, offset);
  DOPPLER_UNROLL
  for (int k = 0; k < kMaxFusedInputs; ++k)
    if (k < p.numInputs)
      value[k] = inputs.in[k][offset[k]];
  for (int j = 0; j < p.numSteps; ++j) {
    const FusedStepCode &step = p.steps[j];
    value[kMaxFusedInputs + j] = joinOp(step.join, value[step.a],
                                        value[step.b],
                                        static_cast<T>(step.scalar));
  }
  out[i] = value[kMaxFusedInputs + p.numSteps - 1];
}

/// Element `i` of a strided copy (Word: the element's bits).
template <typename Word, typename Index>
DOPPLER_HD void copyElement(const CopyParams &p, Word *dst, const Word *src,
                            Index i) {
  Index offset[2];
  decodeOffsets<Index, 2>(p.space, i, offset);
  dst[offset[0]] = src[offset[1]];
}

/// Tile `id` of a transpose: the destination and source offsets of its
/// batch element and its first row and column.
template <typename Index>
DOPPLER_HD void transposeTile(const TransposeParams &t, Index id,
                              Index (&offset)[2], Index &row0, Index &col0) {
  const Index tilesPerRow =
      static_cast<Index>((t.cols + kTransposeTile - 1) / kTransposeTile);
  const Index tilesPerCol =
      static_cast<Index>((t.rows + kTransposeTile - 1) / kTransposeTile);
  Index rest = id / tilesPerRow;
  col0 = (id - rest * tilesPerRow) * kTransposeTile;
  Index batch = rest / tilesPerCol;
  row0 = (rest - batch * tilesPerCol) * kTransposeTile;
  decodeOffsets<Index, 2>(t.batch, batch, offset);
}

} // namespace doppler::runtime::cuda

#endif // DOPPLER_RUNTIME_CUDA_CUDAKERNELMATH_H
