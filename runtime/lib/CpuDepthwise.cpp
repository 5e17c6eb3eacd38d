//===- CpuDepthwise.cpp - The depthwise convolution method ----------------===//
//
// ConvMethod::Depthwise (CpuKernels.h): one input channel per output
// channel. Each input channel is copied once into a plane whose rows carry
// their zero padding (padded column q holds input column q - padLow; with
// a stride s > 1 along the last dim the row is stored as s phases, phase
// ph holding columns ph, ph + s, ..., so that every tap still reads
// consecutive columns: WindowPlan::columnOffsets); each output row is then
// accumulated in registers, up to kMaxBlockVectors AVX2 vectors at once
// (independent FMA chains), over the list of (kd, kh) rows it reads that
// the plan precomputed (WindowPlan::rowTaps). This is the only code of the
// window kernels compiled for AVX2+FMA (a target pragma, chosen at run
// time with __builtin_cpu_supports), as in CpuJoins.cpp.
//
// ConvNeXt's 7x7 depthwise layer (1x96x56x56) on the 2-core EPYC
// (doppler-bench-window): a callback per valid row cost a fifth of the
// time, 4 accumulator vectors instead of 8 left the FMA units idle on
// latency; precomputed rows and the tap loop unrolled for widths 3, 5, 7
// took it from 2.3 ms to 0.67 ms.
//
//===----------------------------------------------------------------------===//

#include "CpuWindow.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define DOPPLER_CPU_WINDOW_AVX2 1
#include <immintrin.h>
#else
#define DOPPLER_CPU_WINDOW_AVX2 0
#endif

namespace doppler::runtime::cpu {

bool depthwiseAvailable() {
#if DOPPLER_CPU_WINDOW_AVX2
  static const bool available = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }();
  return available;
#else
  return false;
#endif
}

#if DOPPLER_CPU_WINDOW_AVX2
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma"))),             \
                             apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#endif

namespace {

struct F32x8 {
  using T = float;
  static constexpr int64_t kWidth = 8;
  __m256 v;
  static F32x8 zero() { return {_mm256_setzero_ps()}; }
  static F32x8 load(const float *p) { return {_mm256_loadu_ps(p)}; }
  static F32x8 broadcast(const float *p) { return {_mm256_broadcast_ss(p)}; }
  static F32x8 fma(F32x8 a, F32x8 b, F32x8 c) {
    return {_mm256_fmadd_ps(a.v, b.v, c.v)};
  }
  void store(float *p) const { _mm256_storeu_ps(p, v); }
  /// Lanes below `lanes` on.
  static __m256i mask(int64_t lanes) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(lanes)),
                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static F32x8 maskedLoad(const float *p, __m256i m) {
    return {_mm256_maskload_ps(p, m)};
  }
  void maskedStore(float *p, __m256i m) const { _mm256_maskstore_ps(p, m, v); }
};

struct F64x4 {
  using T = double;
  static constexpr int64_t kWidth = 4;
  __m256d v;
  static F64x4 zero() { return {_mm256_setzero_pd()}; }
  static F64x4 load(const double *p) { return {_mm256_loadu_pd(p)}; }
  static F64x4 broadcast(const double *p) {
    return {_mm256_broadcast_sd(p)};
  }
  static F64x4 fma(F64x4 a, F64x4 b, F64x4 c) {
    return {_mm256_fmadd_pd(a.v, b.v, c.v)};
  }
  void store(double *p) const { _mm256_storeu_pd(p, v); }
  static __m256i mask(int64_t lanes) {
    return _mm256_cmpgt_epi64(_mm256_set1_epi64x(lanes),
                              _mm256_setr_epi64x(0, 1, 2, 3));
  }
  static F64x4 maskedLoad(const double *p, __m256i m) {
    return {_mm256_maskload_pd(p, m)};
  }
  void maskedStore(double *p, __m256i m) const {
    _mm256_maskstore_pd(p, m, v);
  }
};

/// Up to this many vectors of one output row are accumulated at once: the
/// FMAs of a tap are then independent chains (an FMA's latency times the
/// two FMA units of a core needs about 8 in flight).
constexpr int kMaxBlockVectors = 8;

/// The (kd, kh) rows one output row reads: `count` taps, each the offset
/// of a padded input row in the channel's plane and of a kernel row in the
/// filter, with the kernel row's width and dilation.
template <typename T> struct RowTaps {
  const T *plane;
  const T *filter;
  const DepthwiseTap *taps;
  int64_t count;
  int64_t width;    ///< Kernel taps per row.
  int64_t dilation; ///< Along the row.
  /// Strided rows: per tap, the offset in a phased row of the column output
  /// 0 reads (WindowPlan::columnOffsets); unit stride: k * dilation.
  const int64_t *columns;
};

/// y[o + v * W + lane] = sum over rows i and taps k of filter[i][k] *
/// plane[i][o + v * W + lane + k * dilation], for NV vectors of W lanes,
/// accumulated in registers; with Tail, the last vector's lanes from `mask`
/// only (masked loads never touch the others). KW > 0: the rows have KW
/// taps (at dilation 1 unless Strided), known here so that the tap loop
/// unrolls. Strided: tap k reads from rows.columns[k] (phased rows).
template <typename V, int NV, bool Tail, int KW, bool Strided>
void depthwiseBlock(const RowTaps<typename V::T> &rows, int64_t o,
                    typename V::T *y, __m256i mask) {
  using T = typename V::T;
  constexpr int64_t W = V::kWidth;
  const int64_t taps = KW > 0 ? KW : rows.width;
  const int64_t dilation = KW > 0 ? 1 : rows.dilation;
  V acc[NV];
#pragma GCC unroll 8
  for (int v = 0; v < NV; ++v)
    acc[v] = V::zero();
  for (int64_t i = 0; i < rows.count; ++i) {
    const T *row = rows.plane + rows.taps[i].input + o;
    const T *w = rows.filter + rows.taps[i].weight;
    for (int64_t k = 0; k < taps; ++k) {
      const T *x = row + (Strided ? rows.columns[k] : k * dilation);
      V wv = V::broadcast(w + k);
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) {
        V xv = (Tail && v == NV - 1) ? V::maskedLoad(x + v * W, mask)
                                     : V::load(x + v * W);
        acc[v] = V::fma(wv, xv, acc[v]);
      }
    }
  }
#pragma GCC unroll 8
  for (int v = 0; v < NV; ++v) {
    if (Tail && v == NV - 1)
      acc[v].maskedStore(y + o + v * W, mask);
    else
      acc[v].store(y + o + v * W);
  }
}

/// The last `rest` (<= NV * W) positions of a row from `o`.
template <typename V, int NV, int KW, bool Strided>
void depthwiseTail(const RowTaps<typename V::T> &rows, int64_t o,
                   typename V::T *y, int64_t rest) {
  constexpr int64_t W = V::kWidth;
  if constexpr (NV > 1) {
    if (rest <= (NV - 1) * W)
      return depthwiseTail<V, NV - 1, KW, Strided>(rows, o, y, rest);
  }
  int64_t lanes = rest - (NV - 1) * W;
  if (lanes == W)
    depthwiseBlock<V, NV, false, KW, Strided>(rows, o, y, V::mask(W));
  else
    depthwiseBlock<V, NV, true, KW, Strided>(rows, o, y, V::mask(lanes));
}

/// One output row of `width` positions: blocks of kMaxBlockVectors vectors,
/// then one block of the rest (its last vector masked).
template <typename V, int KW, bool Strided>
void depthwiseRow(const RowTaps<typename V::T> &rows, int64_t width,
                  typename V::T *yrow) {
  constexpr int64_t block = kMaxBlockVectors * V::kWidth;
  int64_t o = 0;
  for (; o + block <= width; o += block)
    depthwiseBlock<V, kMaxBlockVectors, false, KW, Strided>(
        rows, o, yrow, V::mask(V::kWidth));
  if (o < width)
    depthwiseTail<V, kMaxBlockVectors, KW, Strided>(rows, o, yrow, width - o);
}

/// depthwiseRow with the usual kernel widths (3, 5, 7; at dilation 1 when
/// not strided) known at compile time.
template <typename V>
void depthwiseRowAnyWidth(const RowTaps<typename V::T> &rows, int64_t width,
                          typename V::T *yrow) {
  if (rows.columns) {
    if (rows.width == 3)
      return depthwiseRow<V, 3, true>(rows, width, yrow);
    if (rows.width == 5)
      return depthwiseRow<V, 5, true>(rows, width, yrow);
    if (rows.width == 7)
      return depthwiseRow<V, 7, true>(rows, width, yrow);
    return depthwiseRow<V, 0, true>(rows, width, yrow);
  }
  if (rows.dilation == 1 && rows.width == 3)
    return depthwiseRow<V, 3, false>(rows, width, yrow);
  if (rows.dilation == 1 && rows.width == 5)
    return depthwiseRow<V, 5, false>(rows, width, yrow);
  if (rows.dilation == 1 && rows.width == 7)
    return depthwiseRow<V, 7, false>(rows, width, yrow);
  depthwiseRow<V, 0, false>(rows, width, yrow);
}

/// padChannel for f32 at stride 2, the common strided case (MobileNet,
/// EfficientNet): each input row's even and odd columns are split with
/// AVX2 shuffles, 16 at a time, into the two phases (a scalar strided copy
/// took 80% of a 3x3 stride-2 layer on 112x112 planes). Padded column
/// q = c + padLow of input column c lands in phase q % 2 at q / 2.
void padChannelStride2(const WindowPlan &p, const float *xc, float *plane) {
  const int64_t wp = p.paddedWidth, w = p.in[2], pad = p.padLow[2];
  const int64_t half = p.phaseWidth;
  // Even input columns 2k go to phase pad % 2 at k + pad / 2; odd ones to
  // the other phase at k + (pad + 1) / 2.
  const int64_t evenPhase = pad % 2, evenAt = pad / 2, oddAt = (pad + 1) / 2;
  // Columns past the padded row are never read: clip what is copied.
  const int64_t evens = std::clamp<int64_t>(half - evenAt, 0, (w + 1) / 2);
  const int64_t odds = std::clamp<int64_t>(half - oddAt, 0, w / 2);
  for (int64_t row = 0; row < p.in[0] * p.in[1]; ++row) {
    const float *src = xc + row * w;
    float *dst = plane + row * wp;
    std::fill(dst, dst + wp, 0.0f);
    float *even = dst + evenPhase * half + evenAt;
    float *odd = dst + (1 - evenPhase) * half + oddAt;
    const int64_t both = std::min(evens, odds);
    int64_t k = 0;
    for (; k + 8 <= both; k += 8) {
      __m256 a = _mm256_loadu_ps(src + 2 * k);
      __m256 b = _mm256_loadu_ps(src + 2 * k + 8);
      // [a0 a2 b0 b2 | a4 a6 b4 b6], then 64-bit lanes 0, 2, 1, 3.
      __m256 e = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
      __m256 o = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
      _mm256_storeu_ps(even + k, _mm256_castpd_ps(_mm256_permute4x64_pd(
                                     _mm256_castps_pd(e), 0xD8)));
      _mm256_storeu_ps(odd + k, _mm256_castpd_ps(_mm256_permute4x64_pd(
                                    _mm256_castps_pd(o), 0xD8)));
    }
    for (int64_t j = k; j < evens; ++j)
      even[j] = src[2 * j];
    for (int64_t j = k; j < odds; ++j)
      odd[j] = src[2 * j + 1];
  }
}

/// Copies channel plane `xc` into `plane`, each row widened to
/// p.paddedWidth with its zero padding (padded column q holds input column
/// q - padLow); strided: as p.stride[2] phases of p.phaseWidth columns.
template <typename T>
void padChannel(const WindowPlan &p, const T *xc, T *plane) {
  const int64_t wp = p.paddedWidth, w = p.in[2], pad = p.padLow[2];
  if constexpr (std::is_same_v<T, float>) {
    if (p.stride[2] == 2)
      return padChannelStride2(p, xc, plane);
  }
  if (const int64_t s = p.stride[2]; s > 1) {
    for (int64_t row = 0; row < p.in[0] * p.in[1]; ++row) {
      const T *src = xc + row * w;
      T *dst = plane + row * wp;
      for (int64_t phase = 0; phase < s; ++phase, dst += p.phaseWidth) {
        // Phase columns j read input column j * s + phase - pad: inside
        // the row for j in [lo, hi).
        const int64_t first = phase - pad;
        const int64_t lo = std::clamp<int64_t>(
            first >= 0 ? 0 : (-first + s - 1) / s, 0, p.phaseWidth);
        const int64_t hi = std::clamp<int64_t>(
            w - first <= 0 ? 0 : (w - first - 1) / s + 1, lo, p.phaseWidth);
        std::fill(dst, dst + lo, T(0));
        const T *in = src + first;
        for (int64_t j = lo; j < hi; ++j)
          dst[j] = in[j * s];
        std::fill(dst + hi, dst + p.phaseWidth, T(0));
      }
    }
    return;
  }
  const int64_t lo = std::min(wp, pad), hi = std::min(wp, pad + w);
  for (int64_t row = 0; row < p.in[0] * p.in[1]; ++row) {
    T *dst = plane + row * wp;
    std::fill(dst, dst + lo, T(0));
    if (hi > lo)
      std::memcpy(dst + lo, xc + row * w + (lo - pad),
                  static_cast<size_t>(hi - lo) * sizeof(T));
    std::fill(dst + hi, dst + wp, T(0));
  }
}

template <typename V>
void convDepthwise(const WindowPlan &p, const typename V::T *input,
                   const typename V::T *weight, typename V::T *output) {
  using T = typename V::T;
  T *plane = static_cast<T *>(windowScratch(
      static_cast<uint64_t>(p.in[0] * p.in[1] * p.paddedWidth) * sizeof(T)));
  const int64_t outRows = p.out[0] * p.out[1];
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t c = 0; c < p.channels; ++c) {
      padChannel(p, input + (n * p.channels + c) * p.inPlane, plane);
      for (int64_t f = c * p.perGroupOut; f < (c + 1) * p.perGroupOut; ++f) {
        T *yf = output + (n * p.filters + f) * p.outPlane;
        RowTaps<T> rows{plane,        weight + f * p.kernelVolume,
                        nullptr,      0,
                        p.kernel[2],  p.dilation[2],
                        p.stride[2] > 1 ? p.columnOffsets.data() : nullptr};
        for (int64_t r = 0; r < outRows; ++r) {
          rows.taps = p.rowTaps.data() + p.rowTapStart[r];
          rows.count = p.rowTapStart[r + 1] - p.rowTapStart[r];
          depthwiseRowAnyWidth<V>(rows, p.out[2], yf + r * p.out[2]);
        }
      }
    }
}

} // namespace

void runDepthwise(const WindowPlan &p, const void *input, const void *weight,
                  void *output) {
  if (p.type == ElementType::F64)
    convDepthwise<F64x4>(p, static_cast<const double *>(input),
                         static_cast<const double *>(weight),
                         static_cast<double *>(output));
  else
    convDepthwise<F32x8>(p, static_cast<const float *>(input),
                         static_cast<const float *>(weight),
                         static_cast<float *>(output));
}

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#else
void runDepthwise(const WindowPlan &, const void *, const void *, void *) {}
#endif // DOPPLER_CPU_WINDOW_AVX2

} // namespace doppler::runtime::cpu
