//===- CpuLoopNest.cpp - Strided loop nests of the CPU kernels ------------===//

#include "CpuLoopNest.h"

#include "CpuJoins.h"

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
// Innermost loops. One instantiation per (type, join, mode, aggregation),
// picked once when a kernel is built; the loop nest calls it through a
// function pointer once per innermost run.
//===----------------------------------------------------------------------===//

enum class InnerMode : uint8_t {
  Write,      ///< out[i] = join(a[i], b[i])
  Accumulate, ///< out[i] = agg(out[i], join(a[i], b[i]))
  Reduce,     ///< out stride 0: acc = agg(acc, join(a[i], b[i])) in a register
};


/// Elements per chunk of the accumulating, reducing and gathering loops:
/// their join values go through a stack buffer that stays in L1.
constexpr int64_t kChunk = 512;

/// Below this many elements an exact join (bit-identical either way) runs
/// the scalar loop: the vector kernels' call and tail cost more.
constexpr int64_t kMinVectorElements = 16;

template <typename T, JoinKind J, InnerMode M, AggKind A>
void innerLoop(void *outPtr, const void *aPtr, const void *bPtr, int64_t n,
               int64_t so, int64_t sa, int64_t sb, double scalarValue) {
  T *out = static_cast<T *>(outPtr);
  const T *a = static_cast<const T *>(aPtr);
  const T *b = static_cast<const T *>(bPtr);
  const T scalar = static_cast<T>(scalarValue);

  // Unit-stride and broadcast operands: the vector span kernels (CpuJoins),
  // picked once per instantiation. A broadcast operand is read at *a / *b.
  const bool outOk = M == InnerMode::Reduce ? so == 0 : so == 1;
  SpanOperands ops = SpanOperands::Contiguous;
  bool spans = outOk && (n >= kMinVectorElements || !isExactJoin(J));
  if (sa == 1 && sb == 0)
    ops = SpanOperands::BroadcastB;
  else if (sa == 0 && sb == 1)
    ops = SpanOperands::BroadcastA;
  else if (sa != 1 || sb != 1)
    spans = false;
  if (spans) {
    static const JoinSpanFn<T> kernels[kNumSpanOperands] = {
        joinSpanKernel<T>(J, SpanOperands::Contiguous),
        joinSpanKernel<T>(J, SpanOperands::BroadcastB),
        joinSpanKernel<T>(J, SpanOperands::BroadcastA)};
    const JoinSpanFn<T> join = kernels[static_cast<unsigned>(ops)];
    if constexpr (M == InnerMode::Write) {
      join(a, b, scalar, out, n);
    } else {
      static const AccumulateSpanFn<T> accumulate =
          accumulateSpanKernel<T>(A);
      static const ReduceSpanFn<T> reduce = reduceSpanKernel<T>(A);
      T values[kChunk];
      T acc = M == InnerMode::Reduce ? *out : T(0);
      for (int64_t i = 0; i < n; i += kChunk) {
        int64_t count = std::min(kChunk, n - i);
        join(ops == SpanOperands::BroadcastA ? a : a + i,
             ops == SpanOperands::BroadcastB ? b : b + i, scalar, values,
             count);
        if constexpr (M == InnerMode::Reduce)
          acc = reduce(acc, values, count);
        else
          accumulate(out + i, values, count);
      }
      if constexpr (M == InnerMode::Reduce)
        *out = acc;
    }
    return;
  }

  if constexpr (!isExactJoin(J)) {
    // Strided operands of a join that calls SLEEF in the span kernels:
    // gather them, so that every layout gives the same values (and vector
    // speed for the function itself).
    static const JoinSpanFn<T> join =
        joinSpanKernel<T>(J, SpanOperands::Contiguous);
    T xs[kChunk], ys[kChunk], values[kChunk];
    for (int64_t i0 = 0; i0 < n; i0 += kChunk) {
      int64_t count = std::min(kChunk, n - i0);
      for (int64_t i = 0; i < count; ++i) {
        xs[i] = a[(i0 + i) * sa];
        ys[i] = b[(i0 + i) * sb];
      }
      join(xs, ys, scalar, values, count);
      for (int64_t i = 0; i < count; ++i) {
        T &o = out[(i0 + i) * so];
        if constexpr (M == InnerMode::Write)
          o = values[i];
        else
          o = aggValue<A>(o, values[i]);
      }
    }
    return;
  }

  if constexpr (M == InnerMode::Reduce) {
    T acc = *out;
    for (int64_t i = 0; i < n; ++i)
      acc = aggValue<A>(acc, joinValue<J>(a[i * sa], b[i * sb], scalar));
    *out = acc;
  } else {
    auto step = [&](T &o, T x, T y) {
      if constexpr (M == InnerMode::Write)
        o = joinValue<J>(x, y, scalar);
      else
        o = aggValue<A>(o, joinValue<J>(x, y, scalar));
    };
    // Short runs of exact joins: unit-stride and broadcast cases get their
    // own loops so the compiler can vectorise them; the general case
    // handles the rest.
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
  case ElementType::I32:
    std::fill_n(static_cast<int32_t *>(out), count,
                static_cast<int32_t>(value));
    return;
  case ElementType::I64:
    std::fill_n(static_cast<int64_t *>(out), count,
                static_cast<int64_t>(value));
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
