//===- CpuLoopNest.h - Strided loop nests of the CPU kernels ----*- C++ -*-===//
//
// Internal to the runtime: the loop nest that runs every einsum the GEMM
// path does not take (and the GEMM path's operand preparation), defined in
// CpuLoopNest.cpp and used by CpuKernels.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_RUNTIME_LIB_CPULOOPNEST_H
#define DOPPLER_RUNTIME_LIB_CPULOOPNEST_H

#include "ContractionPlan.h"

#include "doppler/runtime/Types.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace doppler::runtime::cpu::detail {

/// The innermost loop of a nest, one instantiation per (type, join, mode,
/// aggregation); CpuLoopNest.cpp picks it.
using InnerFn = void (*)(void *out, const void *a, const void *b, int64_t n,
                         int64_t so, int64_t sa, int64_t sb, double scalar);

/// Operand slots of a loop nest: the output, then up to two inputs.
constexpr int kOut = 0, kIn0 = 1, kIn1 = 2, kNumSlots = 3;

struct LoopDim {
  int64_t extent = 1;
  std::array<int64_t, kNumSlots> strides{}; ///< In elements; 0: absent.
};

/// out = [AGG over contracted dims] JOIN(in0, in1) over an iteration space
/// whose dimensions are ordered outermost first.
struct LoopNest {
  ElementType type = ElementType::F32;
  std::vector<LoopDim> outer; ///< All dimensions but the innermost.
  LoopDim inner;              ///< Extent 1 when the nest is a single point.
  InnerFn innerFn = nullptr;
  bool accumulate = false; ///< Output starts at the aggregation identity.
  double identity = 0;
  double scalar = 0;
  int64_t outElements = 0;
  bool emptySpace = false; ///< Some extent is 0: nothing to iterate.
  /// Walk the innermost two dimensions in square tiles (transposes: one
  /// operand is contiguous along each of them).
  bool tileLastTwo = false;
};

// Operand layouts are shared with the GEMM planner (ContractionPlan.h).
using contraction::denseLayout;
using contraction::elementsOf;
using contraction::OperandLayout;

/// Builds a nest over `indices` (with `extents`). `operands[0]` is the output
/// and the rest the inputs (1 or 2). Indices absent from the output are
/// aggregated with `agg` when `accumulate` is set.
LoopNest buildLoopNest(ElementType type, const std::string &indices,
                       const std::vector<int64_t> &extents,
                       const std::vector<OperandLayout> &operands,
                       JoinKind join, bool accumulate, AggKind agg,
                       double scalar);

/// Fills `count` elements of `type` at `out` with `value`.
void fillTyped(void *out, ElementType type, int64_t count, double value);

/// Runs `nest`: out = [AGG] JOIN(in0, in1) (in1 null for one input).
void runLoopNest(const LoopNest &nest, void *out, const void *in0,
                 const void *in1);

} // namespace doppler::runtime::cpu::detail

#endif // DOPPLER_RUNTIME_LIB_CPULOOPNEST_H
