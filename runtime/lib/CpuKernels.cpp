//===- CpuKernels.cpp - CPU kernels for the runtime's tasks ---------------===//

#include "doppler/runtime/CpuKernels.h"

#include "ContractionPlan.h"

#include <cblas.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

namespace doppler::runtime::cpu {
namespace {

//===----------------------------------------------------------------------===//
// Scalar functions, specialised per join/aggregation at compile time. They
// follow applyJoin/applyAgg in EinsumSpec.cpp (same formulas, same
// std::max/std::min argument order, so NaN handling matches too).
//===----------------------------------------------------------------------===//

/// std::exp, but past the bounds where the result is exactly 0 or +inf it
/// returns that value directly: glibc reaches it through an error-reporting
/// path (errno) about twice as slow, so a softmax whose masked or far-off
/// logits underflow would run at half the speed that doppler-calibrate
/// measures. Same results, NaN included.
template <typename T> inline T boundedExp(T x) {
  constexpr bool isFloat = std::is_same_v<T, float>;
  // expf underflows to 0 below about -103.97 and overflows above 88.73;
  // exp (double) below -745.14 and above 709.79.
  constexpr T kZeroBelow = isFloat ? T(-104) : T(-746);
  constexpr T kInfAbove = isFloat ? T(89) : T(710);
  if (x < kZeroBelow)
    return T(0);
  if (x > kInfAbove)
    return std::numeric_limits<T>::infinity();
  return std::exp(x);
}

template <JoinKind J, typename T> inline T joinValue(T a, T b, T scalar) {
  (void)b, (void)scalar;
  if constexpr (J == JoinKind::Identity)
    return a;
  else if constexpr (J == JoinKind::Add)
    return a + b;
  else if constexpr (J == JoinKind::Sub)
    return a - b;
  else if constexpr (J == JoinKind::Mul)
    return a * b;
  else if constexpr (J == JoinKind::Div)
    return a / b;
  else if constexpr (J == JoinKind::Max)
    return std::max(a, b);
  else if constexpr (J == JoinKind::Min)
    return std::min(a, b);
  else if constexpr (J == JoinKind::Pow)
    return std::pow(a, b);
  else if constexpr (J == JoinKind::Neg)
    return -a;
  else if constexpr (J == JoinKind::Exp)
    return boundedExp(a);
  else if constexpr (J == JoinKind::Log)
    return std::log(a);
  else if constexpr (J == JoinKind::Sqrt)
    return std::sqrt(a);
  else if constexpr (J == JoinKind::Rsqrt)
    return T(1) / std::sqrt(a);
  else if constexpr (J == JoinKind::Reciprocal)
    return T(1) / a;
  else if constexpr (J == JoinKind::Abs)
    return std::fabs(a);
  else if constexpr (J == JoinKind::Relu)
    return a > T(0) ? a : T(0);
  else if constexpr (J == JoinKind::Silu)
    return a / (T(1) + boundedExp(-a));
  else if constexpr (J == JoinKind::Gelu)
    return T(0.5) * a *
           (T(1) +
            std::tanh(T(0.7978845608028654) * (a + T(0.044715) * a * a * a)));
  else if constexpr (J == JoinKind::Tanh)
    return std::tanh(a);
  else if constexpr (J == JoinKind::Sigmoid)
    return T(1) / (T(1) + boundedExp(-a));
  else if constexpr (J == JoinKind::Square)
    return a * a;
  else if constexpr (J == JoinKind::Scale)
    return a * scalar;
  else if constexpr (J == JoinKind::Shift)
    return a + scalar;
  else
    return a;
}

template <AggKind A, typename T> inline T aggValue(T acc, T value) {
  if constexpr (A == AggKind::Add)
    return acc + value;
  else if constexpr (A == AggKind::Mul)
    return acc * value;
  else if constexpr (A == AggKind::Max)
    return std::max(acc, value);
  else
    return std::min(acc, value);
}

//===----------------------------------------------------------------------===//
// Innermost loops. One instantiation per (type, join, mode, aggregation),
// picked once when a kernel is built; the loop nest calls it through a
// function pointer once per innermost run.
//===----------------------------------------------------------------------===//

enum class InnerMode : uint8_t {
  Write,      ///< out[i] = join(a[i], b[i])
  Accumulate, ///< out[i] = agg(out[i], join(a[i], b[i]))
  Reduce,     ///< out stride 0: acc = agg(acc, join(a[i], b[i])) in a register
};

using InnerFn = void (*)(void *out, const void *a, const void *b, int64_t n,
                         int64_t so, int64_t sa, int64_t sb, double scalar);

template <typename T, JoinKind J, InnerMode M, AggKind A>
void innerLoop(void *outPtr, const void *aPtr, const void *bPtr, int64_t n,
               int64_t so, int64_t sa, int64_t sb, double scalarValue) {
  T *out = static_cast<T *>(outPtr);
  const T *a = static_cast<const T *>(aPtr);
  const T *b = static_cast<const T *>(bPtr);
  const T scalar = static_cast<T>(scalarValue);
  if constexpr (M == InnerMode::Reduce) {
    T acc = *out;
    if (sa == 1 && sb == 1) {
      for (int64_t i = 0; i < n; ++i)
        acc = aggValue<A>(acc, joinValue<J>(a[i], b[i], scalar));
    } else {
      for (int64_t i = 0; i < n; ++i)
        acc = aggValue<A>(acc, joinValue<J>(a[i * sa], b[i * sb], scalar));
    }
    *out = acc;
  } else {
    auto step = [&](T &o, T x, T y) {
      if constexpr (M == InnerMode::Write)
        o = joinValue<J>(x, y, scalar);
      else
        o = aggValue<A>(o, joinValue<J>(x, y, scalar));
    };
    // Unit-stride and broadcast cases get their own loops so the compiler
    // can vectorise them; the general case handles the rest.
    if (so == 1 && sa == 1 && sb == 1) {
      for (int64_t i = 0; i < n; ++i)
        step(out[i], a[i], b[i]);
    } else if (so == 1 && sa == 1 && sb == 0) {
      const T y = *b;
      for (int64_t i = 0; i < n; ++i)
        step(out[i], a[i], y);
    } else if (so == 1 && sa == 0 && sb == 1) {
      const T x = *a;
      for (int64_t i = 0; i < n; ++i)
        step(out[i], x, b[i]);
    } else {
      for (int64_t i = 0; i < n; ++i)
        step(out[i * so], a[i * sa], b[i * sb]);
    }
  }
}

template <typename T, unsigned JoinIndex>
InnerFn pickInnerForJoin(InnerMode mode, AggKind agg) {
  constexpr JoinKind J = static_cast<JoinKind>(JoinIndex);
  if (mode == InnerMode::Write)
    return &innerLoop<T, J, InnerMode::Write, AggKind::Add>;
  bool reduce = mode == InnerMode::Reduce;
  switch (agg) {
  case AggKind::Add:
    return reduce ? &innerLoop<T, J, InnerMode::Reduce, AggKind::Add>
                  : &innerLoop<T, J, InnerMode::Accumulate, AggKind::Add>;
  case AggKind::Mul:
    return reduce ? &innerLoop<T, J, InnerMode::Reduce, AggKind::Mul>
                  : &innerLoop<T, J, InnerMode::Accumulate, AggKind::Mul>;
  case AggKind::Max:
    return reduce ? &innerLoop<T, J, InnerMode::Reduce, AggKind::Max>
                  : &innerLoop<T, J, InnerMode::Accumulate, AggKind::Max>;
  case AggKind::Min:
    return reduce ? &innerLoop<T, J, InnerMode::Reduce, AggKind::Min>
                  : &innerLoop<T, J, InnerMode::Accumulate, AggKind::Min>;
  }
  return nullptr;
}

template <typename T, size_t... JoinIndices>
InnerFn pickInner(JoinKind join, InnerMode mode, AggKind agg,
                  std::index_sequence<JoinIndices...>) {
  using Picker = InnerFn (*)(InnerMode, AggKind);
  static constexpr Picker pickers[] = {
      &pickInnerForJoin<T, static_cast<unsigned>(JoinIndices)>...};
  return pickers[static_cast<unsigned>(join)](mode, agg);
}

InnerFn pickInner(ElementType type, JoinKind join, InnerMode mode,
                  AggKind agg) {
  auto joins = std::make_index_sequence<kNumJoinKinds>();
  if (type == ElementType::F64)
    return pickInner<double>(join, mode, agg, joins);
  return pickInner<float>(join, mode, agg, joins);
}

//===----------------------------------------------------------------------===//
// Loop nests
//===----------------------------------------------------------------------===//

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

/// Tile edge in elements for tiled nests: a few cache lines per row.
constexpr int64_t kTileEdge = 16;

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
                       double scalar) {
  LoopNest nest;
  nest.type = type;
  nest.accumulate = accumulate;
  nest.identity = aggIdentity(agg);
  nest.scalar = scalar;
  nest.outElements = elementsOf(operands[kOut], indices, extents);

  std::vector<LoopDim> dims;
  for (size_t i = 0; i < indices.size(); ++i) {
    if (extents[i] == 0)
      nest.emptySpace = true;
    if (extents[i] == 1)
      continue; // Contributes nothing to any offset.
    LoopDim dim;
    dim.extent = extents[i];
    for (size_t slot = 0; slot < operands.size(); ++slot)
      dim.strides[slot] = operands[slot].strideOf(indices[i]);
    // A unary join reads slot 2 as a dummy copy of slot 1 (same strides keep
    // the unit-stride fast paths applicable).
    if (operands.size() == 2)
      dim.strides[kIn1] = dim.strides[kIn0];
    dims.push_back(dim);
  }

  // Walk the largest operand (ties: the output) in memory order: sort by its
  // strides, descending; dimensions it lacks go outermost. The other
  // operands' strides break ties the same way.
  int primary = 0;
  int64_t largest = -1;
  for (size_t slot = 0; slot < operands.size(); ++slot) {
    int64_t count = elementsOf(operands[slot], indices, extents);
    if (count > largest) {
      largest = count;
      primary = static_cast<int>(slot);
    }
  }
  std::array<int, kNumSlots> priority = {primary, (primary + 1) % kNumSlots,
                                         (primary + 2) % kNumSlots};
  auto key = [](int64_t stride) { return stride == 0 ? INT64_MAX : stride; };
  std::stable_sort(dims.begin(), dims.end(),
                   [&](const LoopDim &x, const LoopDim &y) {
                     for (int slot : priority) {
                       int64_t kx = key(x.strides[slot]);
                       int64_t ky = key(y.strides[slot]);
                       if (kx != ky)
                         return kx > ky;
                     }
                     return false;
                   });

  // Merge neighbours that every operand walks as one dimension.
  std::vector<LoopDim> merged;
  for (const LoopDim &dim : dims) {
    if (!merged.empty()) {
      LoopDim &prev = merged.back();
      bool contiguous = true;
      for (int slot = 0; slot < kNumSlots; ++slot)
        contiguous &= prev.strides[slot] == dim.strides[slot] * dim.extent;
      if (contiguous) {
        prev.extent *= dim.extent;
        prev.strides = dim.strides;
        continue;
      }
    }
    merged.push_back(dim);
  }

  if (!merged.empty()) {
    nest.inner = merged.back();
    merged.pop_back();
  }
  nest.outer = std::move(merged);
  InnerMode mode = !accumulate                     ? InnerMode::Write
                   : nest.inner.strides[kOut] == 0 ? InnerMode::Reduce
                                                   : InnerMode::Accumulate;
  nest.innerFn = pickInner(type, join, mode, agg);

  // Tiling reorders the iteration, so only nests that write each output
  // once use it (reductions keep their summation order).
  if (!accumulate && !nest.outer.empty()) {
    const LoopDim &next = nest.outer.back();
    for (int slot = 0; slot < kNumSlots; ++slot)
      if (nest.inner.strides[slot] > 1 && next.strides[slot] == 1 &&
          nest.inner.extent >= kTileEdge && next.extent >= kTileEdge)
        nest.tileLastTwo = true;
  }
  return nest;
}

void fillTyped(void *out, ElementType type, int64_t count, double value) {
  switch (type) {
  case ElementType::F32:
    std::fill_n(static_cast<float *>(out), count, static_cast<float>(value));
    return;
  case ElementType::F64:
    std::fill_n(static_cast<double *>(out), count, value);
    return;
  case ElementType::F16:
    std::fill_n(static_cast<uint16_t *>(out), count,
                floatToHalf(static_cast<float>(value)));
    return;
  }
}

void runLoopNest(const LoopNest &nest, void *out, const void *in0,
                 const void *in1) {
  if (nest.accumulate)
    fillTyped(out, nest.type, nest.outElements, nest.identity);
  if (nest.emptySpace)
    return;
  if (!in1)
    in1 = in0;
  const int64_t elementBytes = elementSize(nest.type);
  char *base[kNumSlots] = {static_cast<char *>(out),
                           const_cast<char *>(static_cast<const char *>(in0)),
                           const_cast<char *>(static_cast<const char *>(in1))};
  const LoopDim &inner = nest.inner;
  auto callInner = [&](const int64_t *offset, int64_t count) {
    nest.innerFn(base[kOut] + offset[kOut] * elementBytes,
                 base[kIn0] + offset[kIn0] * elementBytes,
                 base[kIn1] + offset[kIn1] * elementBytes, count,
                 inner.strides[kOut], inner.strides[kIn0], inner.strides[kIn1],
                 nest.scalar);
  };
  // With tiling, the last outer dimension is walked by the tiles instead of
  // the odometer.
  size_t depth = nest.outer.size();
  const LoopDim *tiled = nullptr;
  if (nest.tileLastTwo)
    tiled = &nest.outer[--depth];
  auto body = [&](const int64_t *offset) {
    if (!tiled) {
      callInner(offset, inner.extent);
      return;
    }
    for (int64_t j0 = 0; j0 < tiled->extent; j0 += kTileEdge) {
      int64_t jEnd = std::min(j0 + kTileEdge, tiled->extent);
      for (int64_t i0 = 0; i0 < inner.extent; i0 += kTileEdge) {
        int64_t count = std::min(kTileEdge, inner.extent - i0);
        for (int64_t j = j0; j < jEnd; ++j) {
          int64_t at[kNumSlots];
          for (int slot = 0; slot < kNumSlots; ++slot)
            at[slot] = offset[slot] + j * tiled->strides[slot] +
                       i0 * inner.strides[slot];
          callInner(at, count);
        }
      }
    }
  };

  // Odometer over the outer dimensions, stepping offsets incrementally.
  std::array<int64_t, 64> counter{};
  int64_t offset[kNumSlots] = {0, 0, 0};
  while (true) {
    body(offset);
    size_t d = depth;
    while (d > 0) {
      --d;
      const LoopDim &dim = nest.outer[d];
      for (int slot = 0; slot < kNumSlots; ++slot)
        offset[slot] += dim.strides[slot];
      if (++counter[d] < dim.extent)
        break;
      for (int slot = 0; slot < kNumSlots; ++slot)
        offset[slot] -= dim.strides[slot] * dim.extent;
      counter[d] = 0;
      if (d == 0)
        return;
    }
    if (depth == 0)
      return;
  }
}

//===----------------------------------------------------------------------===//
// Per-thread scratch memory for GEMM operands.
//===----------------------------------------------------------------------===//

enum ScratchSlot {
  kPreReduceA,
  kPreReduceB,
  kPermuteA,
  kPermuteB,
  kTempC,
  kNumScratchSlots
};

class Scratch {
public:
  ~Scratch() {
    for (void *block : blocks_)
      std::free(block);
  }
  void *get(int slot, uint64_t bytes) {
    if (sizes_[slot] < bytes) {
      std::free(blocks_[slot]);
      uint64_t rounded = std::max<uint64_t>(64, (bytes + 63) / 64 * 64);
      blocks_[slot] = std::aligned_alloc(64, rounded);
      sizes_[slot] = blocks_[slot] ? rounded : 0;
    }
    return blocks_[slot];
  }

private:
  std::array<void *, kNumScratchSlots> blocks_{};
  std::array<uint64_t, kNumScratchSlots> sizes_{};
};

thread_local Scratch threadScratch;

//===----------------------------------------------------------------------===//
// Contractions as batched GEMMs
//===----------------------------------------------------------------------===//

/// One GEMM operand: where it comes from, how it is prepared, and the
/// strided matrix view BLAS reads.
struct GemmOperand {
  int input = 0;          ///< Spec input providing it.
  bool preReduce = false; ///< Sum out indices only it has first.
  LoopNest preReduceNest; ///< input -> dense scratch.
  uint64_t preReduceBytes = 0;
  bool permute = false; ///< Copy into [batch][rows][cols].
  LoopNest permuteNest;
  uint64_t permuteBytes = 0;
  bool transposed = false;
  int64_t leadingDim = 1;
  int64_t batchStride = 0;
};

/// Smallest m*n*k worth a BLAS call.
constexpr int64_t kMinGemmVolume = 256;

struct GemmPlan {
  GemmOperand a, b;
  int64_t batch = 1, m = 1, n = 1, k = 1;
  bool outDirect = true; ///< Else: C into scratch, then permuteOut.
  int64_t ldc = 1;
  int64_t batchStrideC = 0;
  LoopNest permuteOut;
  uint64_t tempBytes = 0;
};

/// The CPU side of one operand of a contraction plan: loop nests for its
/// reduction and permutation.
GemmOperand lowerGemmOperand(ElementType type,
                             const contraction::GemmOperandPlan &planned,
                             const std::string &indices,
                             const std::vector<int64_t> &extents) {
  GemmOperand operand;
  operand.input = planned.input;
  OperandLayout layout = denseLayout(planned.term, indices, extents);
  if (planned.preReduce()) {
    OperandLayout reduced = denseLayout(planned.reducedTerm, indices, extents);
    // The nest iterates over this operand's indices only.
    std::vector<int64_t> termExtents;
    for (char c : planned.term)
      termExtents.push_back(extents[indices.find(c)]);
    operand.preReduce = true;
    operand.preReduceNest =
        buildLoopNest(type, planned.term, termExtents, {reduced, layout},
                      JoinKind::Identity, true, AggKind::Add, 0);
    operand.preReduceBytes =
        static_cast<uint64_t>(elementsOf(reduced, indices, extents)) *
        elementSize(type);
    layout = reduced;
  }
  if (planned.permute) {
    const std::string &canonical = planned.canonical;
    std::vector<int64_t> canonicalExtents;
    for (char c : canonical)
      canonicalExtents.push_back(extents[indices.find(c)]);
    OperandLayout dense = denseLayout(canonical, indices, extents);
    operand.permute = true;
    operand.permuteNest =
        buildLoopNest(type, canonical, canonicalExtents, {dense, layout},
                      JoinKind::Identity, false, AggKind::Add, 0);
    operand.permuteBytes =
        static_cast<uint64_t>(elementsOf(dense, indices, extents)) *
        elementSize(type);
  }
  operand.transposed = planned.transposed;
  operand.leadingDim = planned.leadingDim;
  operand.batchStride = planned.batchStride;
  return operand;
}

/// The GEMM plan for a mul/add contraction of two inputs, or nullopt when
/// the einsum contracts nothing both inputs share (the loop path is as good
/// there) or the sizes exceed BLAS's 32-bit integers.
std::optional<GemmPlan> planGemm(ElementType type, const EinsumSpec &spec,
                                 const std::string &indices,
                                 const std::vector<int64_t> &extents) {
  contraction::GemmLimits limits;
  limits.minVolume = kMinGemmVolume;
  std::optional<contraction::GemmPlan> planned =
      contraction::planGemm(spec, indices, extents, limits);
  if (!planned)
    return std::nullopt;
  GemmPlan plan;
  plan.batch = planned->batch;
  plan.m = planned->m;
  plan.n = planned->n;
  plan.k = planned->k;
  plan.outDirect = planned->outDirect;
  plan.ldc = planned->ldc;
  plan.batchStrideC = planned->batchStrideC;
  if (!plan.outDirect) {
    const std::string &canonical = planned->outCanonical;
    std::vector<int64_t> canonicalExtents;
    for (char c : canonical)
      canonicalExtents.push_back(extents[indices.find(c)]);
    OperandLayout temp = denseLayout(canonical, indices, extents);
    plan.permuteOut =
        buildLoopNest(type, canonical, canonicalExtents,
                      {denseLayout(spec.output, indices, extents), temp},
                      JoinKind::Identity, false, AggKind::Add, 0);
    plan.tempBytes =
        static_cast<uint64_t>(plan.batch * plan.m * plan.n) * elementSize(type);
  }
  plan.a = lowerGemmOperand(type, planned->a, indices, extents);
  plan.b = lowerGemmOperand(type, planned->b, indices, extents);
  return plan;
}

const void *prepareGemmOperand(const GemmOperand &operand,
                               const void *const *inputs, int reduceSlot,
                               int permuteSlot) {
  const void *data = inputs[operand.input];
  if (operand.preReduce) {
    void *reduced = threadScratch.get(reduceSlot, operand.preReduceBytes);
    runLoopNest(operand.preReduceNest, reduced, data, nullptr);
    data = reduced;
  }
  if (operand.permute) {
    void *permuted = threadScratch.get(permuteSlot, operand.permuteBytes);
    runLoopNest(operand.permuteNest, permuted, data, nullptr);
    data = permuted;
  }
  return data;
}

CBLAS_TRANSPOSE blasTranspose(bool transposed) {
  return transposed ? CblasTrans : CblasNoTrans;
}

template <typename T>
void runGemmBatches(const GemmPlan &plan, const T *a, const T *b, T *c) {
  const int m = static_cast<int>(plan.m), n = static_cast<int>(plan.n),
            k = static_cast<int>(plan.k);
  const int lda = static_cast<int>(plan.a.leadingDim),
            ldb = static_cast<int>(plan.b.leadingDim),
            ldc = static_cast<int>(plan.ldc);
  for (int64_t i = 0; i < plan.batch; ++i) {
    const T *aBatch = a + i * plan.a.batchStride;
    const T *bBatch = b + i * plan.b.batchStride;
    T *cBatch = c + i * plan.batchStrideC;
    if constexpr (std::is_same_v<T, float>)
      cblas_sgemm(CblasRowMajor, blasTranspose(plan.a.transposed),
                  blasTranspose(plan.b.transposed), m, n, k, 1.0f, aBatch, lda,
                  bBatch, ldb, 0.0f, cBatch, ldc);
    else
      cblas_dgemm(CblasRowMajor, blasTranspose(plan.a.transposed),
                  blasTranspose(plan.b.transposed), m, n, k, 1.0, aBatch, lda,
                  bBatch, ldb, 0.0, cBatch, ldc);
  }
}

void runGemm(const GemmPlan &plan, ElementType type, int64_t outElements,
             const void *const *inputs, void *output) {
  if (plan.batch == 0 || plan.m == 0 || plan.n == 0)
    return;
  if (plan.k == 0) { // Sum over nothing.
    fillTyped(output, type, outElements, 0.0);
    return;
  }
  const void *a = prepareGemmOperand(plan.a, inputs, kPreReduceA, kPermuteA);
  const void *b = prepareGemmOperand(plan.b, inputs, kPreReduceB, kPermuteB);
  void *c = plan.outDirect ? output : threadScratch.get(kTempC, plan.tempBytes);
  if (type == ElementType::F64)
    runGemmBatches(plan, static_cast<const double *>(a),
                   static_cast<const double *>(b), static_cast<double *>(c));
  else
    runGemmBatches(plan, static_cast<const float *>(a),
                   static_cast<const float *>(b), static_cast<float *>(c));
  if (!plan.outDirect)
    runLoopNest(plan.permuteOut, output, c, nullptr);
}

//===----------------------------------------------------------------------===//
// Strided copies (slice, assemble)
//===----------------------------------------------------------------------===//

/// Copies an n-d box of `extents` between two strided layouts. Runs that
/// are contiguous on both sides are copied with memcpy.
void copyBox(void *dst, const std::vector<int64_t> &dstStrides, const void *src,
             const std::vector<int64_t> &srcStrides, const Shape &extents,
             unsigned elementBytes) {
  struct Dim {
    int64_t extent, dstStride, srcStride;
  };
  std::vector<Dim> dims;
  for (size_t d = 0; d < extents.size(); ++d) {
    if (extents[d] == 0)
      return;
    if (extents[d] == 1)
      continue;
    Dim dim{extents[d], dstStrides[d], srcStrides[d]};
    if (!dims.empty() && dims.back().dstStride == dim.dstStride * dim.extent &&
        dims.back().srcStride == dim.srcStride * dim.extent) {
      dims.back() = {dims.back().extent * dim.extent, dim.dstStride,
                     dim.srcStride};
      continue;
    }
    dims.push_back(dim);
  }
  auto *dstBytes = static_cast<char *>(dst);
  auto *srcBytes = static_cast<const char *>(src);
  Dim inner{1, 1, 1};
  if (!dims.empty()) {
    inner = dims.back();
    dims.pop_back();
  }
  const bool contiguous = inner.dstStride == 1 && inner.srcStride == 1;
  auto copyRun = [&](char *to, const char *from) {
    if (contiguous) {
      std::memcpy(to, from, static_cast<size_t>(inner.extent) * elementBytes);
      return;
    }
    for (int64_t i = 0; i < inner.extent; ++i)
      std::memcpy(to + i * inner.dstStride * elementBytes,
                  from + i * inner.srcStride * elementBytes, elementBytes);
  };
  std::vector<int64_t> counter(dims.size(), 0);
  int64_t dstOffset = 0, srcOffset = 0;
  while (true) {
    copyRun(dstBytes + dstOffset * elementBytes,
            srcBytes + srcOffset * elementBytes);
    size_t d = dims.size();
    while (true) {
      if (d == 0)
        return;
      --d;
      dstOffset += dims[d].dstStride;
      srcOffset += dims[d].srcStride;
      if (++counter[d] < dims[d].extent)
        break;
      dstOffset -= dims[d].dstStride * dims[d].extent;
      srcOffset -= dims[d].srcStride * dims[d].extent;
      counter[d] = 0;
    }
  }
}

int64_t linearOffset(const std::vector<int64_t> &offsets,
                     const std::vector<int64_t> &strides) {
  int64_t offset = 0;
  for (size_t d = 0; d < offsets.size(); ++d)
    offset += offsets[d] * strides[d];
  return offset;
}

} // namespace

//===----------------------------------------------------------------------===//
// EinsumKernel
//===----------------------------------------------------------------------===//

struct EinsumPlan {
  ElementType type = ElementType::F32;
  Shape outShape;
  int64_t outElements = 0;
  unsigned numInputs = 1;
  bool useGemm = false;
  LoopNest loop;
  GemmPlan gemm;
};

Result<EinsumKernel> EinsumKernel::create(const EinsumSpec &spec, JoinKind join,
                                          std::optional<AggKind> aggregation,
                                          double scalar,
                                          const std::vector<Shape> &inputShapes,
                                          ElementType type) {
  if (type != ElementType::F32 && type != ElementType::F64)
    return Status::failure("einsum on " + std::string(elementTypeName(type)) +
                           " is not supported on the CPU (f32, f64 only)");
  if (spec.numInputs() != joinArity(join))
    return Status::failure("join '" + std::string(joinKindName(join)) +
                           "' takes " + std::to_string(joinArity(join)) +
                           " input(s) but spec '" + spec.str() + "' has " +
                           std::to_string(spec.numInputs()));
  if (spec.contracts() && !aggregation)
    return Status::failure("spec '" + spec.str() +
                           "' contracts indices but has no aggregation");
  std::string error;
  std::optional<IndexSizes> sizes = inferIndexSizes(spec, inputShapes, &error);
  if (!sizes)
    return Status::failure(error);

  auto plan = std::make_shared<EinsumPlan>();
  plan->type = type;
  plan->outShape = doppler::outputShape(spec, *sizes);
  plan->outElements = numElements(plan->outShape);
  plan->numInputs = spec.numInputs();
  const std::string &indices = sizes->indices;
  const std::vector<int64_t> &extents = sizes->sizes;
  bool accumulate = spec.contracts();
  AggKind agg = aggregation.value_or(AggKind::Add);

  if (accumulate && join == JoinKind::Mul && agg == AggKind::Add &&
      spec.numInputs() == 2) {
    if (std::optional<GemmPlan> gemm = planGemm(type, spec, indices, extents)) {
      plan->useGemm = true;
      plan->gemm = std::move(*gemm);
      return EinsumKernel(std::move(plan));
    }
  }
  std::vector<OperandLayout> operands = {
      denseLayout(spec.output, indices, extents)};
  for (const std::string &term : spec.inputs)
    operands.push_back(denseLayout(term, indices, extents));
  plan->loop = buildLoopNest(type, indices, extents, operands, join, accumulate,
                             agg, scalar);
  return EinsumKernel(std::move(plan));
}

void EinsumKernel::run(const void *const *inputs, void *output) const {
  if (plan_->useGemm) {
    runGemm(plan_->gemm, plan_->type, plan_->outElements, inputs, output);
    return;
  }
  runLoopNest(plan_->loop, output, inputs[0],
              plan_->numInputs == 2 ? inputs[1] : nullptr);
}

const Shape &EinsumKernel::outputShape() const { return plan_->outShape; }
bool EinsumKernel::usesGemm() const { return plan_->useGemm; }

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

void fill(void *out, ElementType type, int64_t count, double value) {
  fillTyped(out, type, count, value);
}

void slice(const void *in, const Shape &inShape,
           const std::vector<int64_t> &offsets, void *out,
           const Shape &outShape, ElementType type) {
  unsigned elementBytes = elementSize(type);
  std::vector<int64_t> inStrides = rowMajorStrides(inShape);
  const char *start = static_cast<const char *>(in) +
                      linearOffset(offsets, inStrides) * elementBytes;
  copyBox(out, rowMajorStrides(outShape), start, inStrides, outShape,
          elementBytes);
}

void insertBlock(const void *block, const Shape &blockShape, void *out,
                 const Shape &outShape, const std::vector<int64_t> &offsets,
                 ElementType type) {
  unsigned elementBytes = elementSize(type);
  std::vector<int64_t> outStrides = rowMajorStrides(outShape);
  char *start = static_cast<char *>(out) +
                linearOffset(offsets, outStrides) * elementBytes;
  copyBox(start, outStrides, block, rowMajorStrides(blockShape), blockShape,
          elementBytes);
}

void assemble(const std::vector<const void *> &blocks,
              const std::vector<std::vector<int64_t>> &blockExtents, void *out,
              ElementType type) {
  size_t rank = blockExtents.size();
  Shape outShape(rank, 0);
  for (size_t d = 0; d < rank; ++d)
    for (int64_t extent : blockExtents[d])
      outShape[d] += extent;
  std::vector<size_t> coord(rank, 0);
  std::vector<int64_t> offsets(rank, 0);
  for (const void *block : blocks) {
    Shape blockShape(rank);
    for (size_t d = 0; d < rank; ++d)
      blockShape[d] = blockExtents[d][coord[d]];
    insertBlock(block, blockShape, out, outShape, offsets, type);
    for (size_t d = rank; d-- > 0;) {
      offsets[d] += blockExtents[d][coord[d]];
      if (++coord[d] < blockExtents[d].size())
        break;
      coord[d] = 0;
      offsets[d] = 0;
    }
  }
}

void useSingleThreadedBlas() { openblas_set_num_threads(1); }

} // namespace doppler::runtime::cpu
