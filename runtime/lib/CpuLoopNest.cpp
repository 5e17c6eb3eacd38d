//===- CpuLoopNest.cpp - Strided loop nests of the CPU kernels ------------===//

#include "CpuLoopNest.h"

#include "doppler/runtime/CpuKernels.h"

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

namespace doppler::runtime::cpu::detail {
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

/// Tile edge in elements for tiled nests: a few cache lines per row.
constexpr int64_t kTileEdge = 16;

} // namespace

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

} // namespace doppler::runtime::cpu::detail
