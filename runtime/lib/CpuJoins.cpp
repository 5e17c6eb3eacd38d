//===- CpuJoins.cpp - Vectorised joins of the CPU kernels -----------------===//
//
// Joins over contiguous spans, and the aggregations of the loop nest's
// accumulating and reducing innermost loops.
//
// The vector kernels are AVX2+FMA code compiled in this file only (a target
// pragma around them), calling SLEEF's AVX2 entry points for exp, log, pow
// and tanh; the rest of the runtime stays baseline x86-64. Which kernels run
// is decided once, at first use, with __builtin_cpu_supports. Why not
// SLEEF's own dispatchers (Sleef_expf8_u10 picks avx/fma4/avx2 at run time):
// their __m256 arguments can only be passed by code compiled for AVX, so the
// run-time choice has to be made before them anyway, and calling the avx2
// entry points directly skips their indirection. CPUs without AVX2+FMA (x86
// before 2013-2015, other architectures) run the scalar formulas (libm) as
// before: an SSE2 variant would double the instantiations for half the
// width, on machines this runtime is not deployed to (CI and the benchmark
// hosts have AVX2+FMA).
//
//===----------------------------------------------------------------------===//

#include "CpuJoins.h"

#include <sleef.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <utility>

static_assert(SLEEF_VERSION_MAJOR >= 3, "the u10 functions are SLEEF 3's");

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define DOPPLER_CPU_JOINS_AVX2 1
#include <immintrin.h>
#else
#define DOPPLER_CPU_JOINS_AVX2 0
#endif

#if DOPPLER_CPU_JOINS_AVX2
// SLEEF's AVX2 entry points (libsleef; sleef.h declares them only when the
// whole file is compiled for AVX, which this one must not be). All within
// 1.0 ULP (u10).
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma"))),             \
                             apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#endif
extern "C" {
__m256 Sleef_expf8_u10avx2(__m256);
__m256 Sleef_logf8_u10avx2(__m256);
__m256 Sleef_powf8_u10avx2(__m256, __m256);
__m256 Sleef_tanhf8_u10avx2(__m256);
__m256d Sleef_expd4_u10avx2(__m256d);
__m256d Sleef_logd4_u10avx2(__m256d);
__m256d Sleef_powd4_u10avx2(__m256d, __m256d);
__m256d Sleef_tanhd4_u10avx2(__m256d);
__m256d Sleef_erfd4_u10avx2(__m256d);
}
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif // DOPPLER_CPU_JOINS_AVX2

namespace doppler::runtime::cpu::detail {
namespace {

/// Whether the join reads its second operand.
constexpr bool isBinaryJoin(JoinKind join) {
  switch (join) {
  case JoinKind::Add:
  case JoinKind::Sub:
  case JoinKind::Mul:
  case JoinKind::Div:
  case JoinKind::Max:
  case JoinKind::Min:
  case JoinKind::Pow:
  case JoinKind::Eq:
  case JoinKind::Ne:
  case JoinKind::Lt:
  case JoinKind::Le:
  case JoinKind::Gt:
  case JoinKind::Ge:
  case JoinKind::Where:
    return true;
  default:
    return false;
  }
}

template <typename T> struct KernelTable {
  std::array<std::array<JoinSpanFn<T>, kNumSpanOperands>, kNumJoinKinds>
      join{};
  std::array<AccumulateSpanFn<T>, kNumAggKinds> accumulate{};
  std::array<ReduceSpanFn<T>, kNumAggKinds> reduce{};
};

//===----------------------------------------------------------------------===//
// Scalar kernels (the fallback)
//===----------------------------------------------------------------------===//

template <typename T, JoinKind J, SpanOperands Ops>
void scalarJoinSpan(const T *a, const T *b, T scalar, T *out, int64_t n) {
  if constexpr (Ops == SpanOperands::BroadcastB) {
    const T y = *b;
    for (int64_t i = 0; i < n; ++i)
      out[i] = joinValue<J>(a[i], y, scalar);
  } else if constexpr (Ops == SpanOperands::BroadcastA) {
    const T x = *a;
    for (int64_t i = 0; i < n; ++i)
      out[i] = joinValue<J>(x, b[i], scalar);
  } else {
    // Unary joins never read b (the public API lets it be null).
    const T *y = isBinaryJoin(J) ? b : a;
    for (int64_t i = 0; i < n; ++i)
      out[i] = joinValue<J>(a[i], y[i], scalar);
  }
}

template <typename T, AggKind A>
void scalarAccumulate(T *out, const T *values, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    out[i] = aggValue<A>(out[i], values[i]);
}

template <typename T, AggKind A>
T scalarReduce(T acc, const T *values, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    acc = aggValue<A>(acc, values[i]);
  return acc;
}

template <typename T, size_t... Js>
void fillScalar(KernelTable<T> &table, std::index_sequence<Js...>) {
  ((table.join[Js] = {&scalarJoinSpan<T, static_cast<JoinKind>(Js),
                                      SpanOperands::Contiguous>,
                      &scalarJoinSpan<T, static_cast<JoinKind>(Js),
                                      SpanOperands::BroadcastB>,
                      &scalarJoinSpan<T, static_cast<JoinKind>(Js),
                                      SpanOperands::BroadcastA>}),
   ...);
  table.accumulate = {
      &scalarAccumulate<T, AggKind::Add>, &scalarAccumulate<T, AggKind::Mul>,
      &scalarAccumulate<T, AggKind::Max>, &scalarAccumulate<T, AggKind::Min>};
  table.reduce = {&scalarReduce<T, AggKind::Add>, &scalarReduce<T, AggKind::Mul>,
                  &scalarReduce<T, AggKind::Max>, &scalarReduce<T, AggKind::Min>};
}

//===----------------------------------------------------------------------===//
// AVX2+FMA kernels. Everything up to the matching pop is compiled for
// AVX2+FMA and must only run where vectorJoinsAvailable() says so.
//===----------------------------------------------------------------------===//

#if DOPPLER_CPU_JOINS_AVX2
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma"))),             \
                             apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#endif

/// SLEEF's pow returns inf for results within about 2.5e-6 (relative) of
/// the largest finite value already; lanes that came out infinite (rare:
/// those and real overflows) are redone with libm's pow.
template <class I>
typename I::V fixOverflows(typename I::V r, typename I::V a, typename I::V b) {
  using T = typename I::T;
  constexpr int64_t W = I::kWidth;
  if (!I::anyInfinite(r))
    return r;
  T rs[W], as[W], bs[W];
  I::store(rs, r);
  I::store(as, a);
  I::store(bs, b);
  for (int64_t lane = 0; lane < W; ++lane)
    if (std::isinf(rs[lane]))
      rs[lane] = std::pow(as[lane], bs[lane]);
  return I::load(rs);
}

/// Eight floats. max/min take std::max/std::min's argument order:
/// _mm256_max_ps(x, y) is x > y ? x : y, so std::max(a, b) (a < b ? b : a)
/// is _mm256_max_ps(b, a), NaN and signed zeros included.
struct F32x8 {
  using T = float;
  using V = __m256;
  static constexpr int64_t kWidth = 8;
  static V load(const T *p) { return _mm256_loadu_ps(p); }
  static void store(T *p, V v) { _mm256_storeu_ps(p, v); }
  static V set1(T x) { return _mm256_set1_ps(x); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V sub(V a, V b) { return _mm256_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V div(V a, V b) { return _mm256_div_ps(a, b); }
  static V stdMax(V a, V b) { return _mm256_max_ps(b, a); }
  static V stdMin(V a, V b) { return _mm256_min_ps(b, a); }
  template <int P> static V cmp(V a, V b) { return _mm256_cmp_ps(a, b, P); }
  static V ones(V mask) { return _mm256_and_ps(mask, set1(1.f)); }
  static V blend(V no, V yes, V mask) { return _mm256_blendv_ps(no, yes, mask); }
  static V relu(V a) { return _mm256_max_ps(a, _mm256_setzero_ps()); }
  static V neg(V a) { return _mm256_xor_ps(a, set1(-0.f)); }
  static V abs(V a) { return _mm256_andnot_ps(set1(-0.f), a); }
  static V sqrt(V a) { return _mm256_sqrt_ps(a); }
  static bool anyInfinite(V a) {
    return _mm256_movemask_ps(_mm256_cmp_ps(
        abs(a), set1(std::numeric_limits<T>::infinity()), _CMP_EQ_OQ));
  }
  static V exp(V a) { return Sleef_expf8_u10avx2(a); }
  static V log(V a) { return Sleef_logf8_u10avx2(a); }
  static V pow(V a, V b) {
    return fixOverflows<F32x8>(Sleef_powf8_u10avx2(a, b), a, b);
  }
  static V tanh(V a) { return Sleef_tanhf8_u10avx2(a); }
  /// c[0] v^(n-1) + ... + c[n-1], by Horner's rule with fmas.
  static V horner(const float *c, size_t n, V v) {
    V r = set1(c[0]);
    for (size_t i = 1; i < n; ++i)
      r = _mm256_fmadd_ps(r, v, set1(c[i]));
    return r;
  }
  /// erf in two pieces, both computed on every lane and blended (3.2x
  /// SLEEF's erff u10: 682 against 216 M elements/s on one core; 1.0 ULP
  /// from libm's erf in DopplerJoinTests): |x| < 1, erf = |x| + |x| P(x^2),
  /// P fitted to erf(x)/x - 1 (the fma keeps the dominant |x| exact);
  /// 1 <= |x| < 3.92, erf = 1 - exp(-x^2) Q(1/|x|), Q fitted to
  /// erfc(x) exp(x^2); past 3.92 (and at infinity) 1 in float. NaN stays
  /// NaN (the ordered compare keeps it in the second piece, which
  /// propagates it); the sign is x's.
  static V erf(V x) {
    static constexpr float kSmall[] = {
        -9.812957614e-06f, 1.131099489e-04f, -8.489310276e-04f,
        5.221311934e-03f,  -2.686549723e-02f, 1.128378287e-01f,
        -3.761263788e-01f, 1.283791661e-01f};
    static constexpr float kLarge[] = {
        -3.821574897e-02f, 2.646519840e-01f,  -8.105772734e-01f,
        1.423965693e+00f,  -1.524017572e+00f, 8.994634748e-01f,
        -6.925915927e-02f, -2.851888835e-01f, 3.015908645e-03f,
        5.637192130e-01f,  2.596328886e-05f};
    V a = abs(x);
    V u = mul(a, a);
    V small = _mm256_fmadd_ps(a, horner(kSmall, std::size(kSmall), u), a);
    V q = horner(kLarge, std::size(kLarge), div(set1(1.f), a));
    V large = _mm256_fnmadd_ps(Sleef_expf8_u10avx2(neg(u)), q, set1(1.f));
    V r = _mm256_blendv_ps(large, small, _mm256_cmp_ps(a, set1(1.f), _CMP_LT_OQ));
    r = _mm256_blendv_ps(r, set1(1.f), _mm256_cmp_ps(a, set1(3.92f), _CMP_GE_OQ));
    return _mm256_or_ps(r, _mm256_and_ps(x, set1(-0.f)));
  }
};

/// Four doubles, as F32x8.
struct F64x4 {
  using T = double;
  using V = __m256d;
  static constexpr int64_t kWidth = 4;
  static V load(const T *p) { return _mm256_loadu_pd(p); }
  static void store(T *p, V v) { _mm256_storeu_pd(p, v); }
  static V set1(T x) { return _mm256_set1_pd(x); }
  static V add(V a, V b) { return _mm256_add_pd(a, b); }
  static V sub(V a, V b) { return _mm256_sub_pd(a, b); }
  static V mul(V a, V b) { return _mm256_mul_pd(a, b); }
  static V div(V a, V b) { return _mm256_div_pd(a, b); }
  static V stdMax(V a, V b) { return _mm256_max_pd(b, a); }
  static V stdMin(V a, V b) { return _mm256_min_pd(b, a); }
  template <int P> static V cmp(V a, V b) { return _mm256_cmp_pd(a, b, P); }
  static V ones(V mask) { return _mm256_and_pd(mask, set1(1.0)); }
  static V blend(V no, V yes, V mask) { return _mm256_blendv_pd(no, yes, mask); }
  static V relu(V a) { return _mm256_max_pd(a, _mm256_setzero_pd()); }
  static V neg(V a) { return _mm256_xor_pd(a, set1(-0.0)); }
  static V abs(V a) { return _mm256_andnot_pd(set1(-0.0), a); }
  static V sqrt(V a) { return _mm256_sqrt_pd(a); }
  static bool anyInfinite(V a) {
    return _mm256_movemask_pd(_mm256_cmp_pd(
        abs(a), set1(std::numeric_limits<T>::infinity()), _CMP_EQ_OQ));
  }
  static V exp(V a) { return Sleef_expd4_u10avx2(a); }
  static V log(V a) { return Sleef_logd4_u10avx2(a); }
  static V pow(V a, V b) {
    return fixOverflows<F64x4>(Sleef_powd4_u10avx2(a, b), a, b);
  }
  static V tanh(V a) { return Sleef_tanhd4_u10avx2(a); }
  static V erf(V a) { return Sleef_erfd4_u10avx2(a); }
};

template <class I, JoinKind J>
inline typename I::V joinVector(typename I::V a, typename I::V b,
                                typename I::V scalar) {
  using T = typename I::T;
  using V = typename I::V;
  (void)b, (void)scalar;
  if constexpr (J == JoinKind::Identity)
    return a;
  else if constexpr (J == JoinKind::Add)
    return I::add(a, b);
  else if constexpr (J == JoinKind::Sub)
    return I::sub(a, b);
  else if constexpr (J == JoinKind::Mul)
    return I::mul(a, b);
  else if constexpr (J == JoinKind::Div)
    return I::div(a, b);
  else if constexpr (J == JoinKind::Max)
    return I::stdMax(a, b);
  else if constexpr (J == JoinKind::Min)
    return I::stdMin(a, b);
  else if constexpr (J == JoinKind::Pow)
    return I::pow(a, b);
  else if constexpr (J == JoinKind::Neg)
    return I::neg(a);
  else if constexpr (J == JoinKind::Exp)
    return I::exp(a);
  else if constexpr (J == JoinKind::Log)
    return I::log(a);
  else if constexpr (J == JoinKind::Sqrt)
    return I::sqrt(a);
  else if constexpr (J == JoinKind::Rsqrt)
    return I::div(I::set1(T(1)), I::sqrt(a));
  else if constexpr (J == JoinKind::Reciprocal)
    return I::div(I::set1(T(1)), a);
  else if constexpr (J == JoinKind::Abs)
    return I::abs(a);
  else if constexpr (J == JoinKind::Relu)
    return I::relu(a); // a > 0 ? a : 0, NaN and -0 giving +0.
  else if constexpr (J == JoinKind::Silu)
    return I::div(a, I::add(I::set1(T(1)), I::exp(I::neg(a))));
  else if constexpr (J == JoinKind::Gelu) {
    // 0.5 a (1 + tanh(u)) = a / (1 + exp(-2u)), u = k (a + 0.044715 a^3):
    // one exp instead of a tanh (SLEEF's tanh costs about twice as much),
    // and no cancellation in 1 + tanh(u) for negative a. At a = -inf both
    // give NaN, at +inf both +inf.
    V cube = I::mul(I::mul(a, a), a);
    V inner = I::add(a, I::mul(I::set1(T(0.044715)), cube));
    V minusTwoU = I::mul(I::set1(T(-2 * 0.7978845608028654)), inner);
    return I::div(a, I::add(I::set1(T(1)), I::exp(minusTwoU)));
  } else if constexpr (J == JoinKind::Tanh)
    return I::tanh(a);
  else if constexpr (J == JoinKind::Sigmoid)
    return I::div(I::set1(T(1)), I::add(I::set1(T(1)), I::exp(I::neg(a))));
  else if constexpr (J == JoinKind::Square)
    return I::mul(a, a);
  else if constexpr (J == JoinKind::Scale)
    return I::mul(a, scalar);
  else if constexpr (J == JoinKind::Shift)
    return I::add(a, scalar);
  else if constexpr (J == JoinKind::Erf)
    return I::erf(a);
  // Comparisons: the lane mask and-ed with 1 (ordered predicates: false on
  // NaN; ne unordered: true on NaN), as the scalar formulas.
  else if constexpr (J == JoinKind::Eq)
    return I::ones(I::template cmp<_CMP_EQ_OQ>(a, b));
  else if constexpr (J == JoinKind::Ne)
    return I::ones(I::template cmp<_CMP_NEQ_UQ>(a, b));
  else if constexpr (J == JoinKind::Lt)
    return I::ones(I::template cmp<_CMP_LT_OQ>(a, b));
  else if constexpr (J == JoinKind::Le)
    return I::ones(I::template cmp<_CMP_LE_OQ>(a, b));
  else if constexpr (J == JoinKind::Gt)
    return I::ones(I::template cmp<_CMP_GT_OQ>(a, b));
  else if constexpr (J == JoinKind::Ge)
    return I::ones(I::template cmp<_CMP_GE_OQ>(a, b));
  else if constexpr (J == JoinKind::Where) // a != 0 (NaN too) ? b : -0
    return I::blend(I::set1(T(-0.0)), b,
                    I::template cmp<_CMP_NEQ_UQ>(a, I::set1(T(0))));
  else
    return a;
}

template <class I, JoinKind J, SpanOperands Ops>
void vectorJoinSpan(const typename I::T *a, const typename I::T *b,
                    typename I::T scalar, typename I::T *out, int64_t n) {
  using T = typename I::T;
  using V = typename I::V;
  constexpr int64_t W = I::kWidth;
  constexpr bool broadcastA = Ops == SpanOperands::BroadcastA;
  constexpr bool broadcastB = Ops == SpanOperands::BroadcastB;
  // Unary joins never read b (the public API lets it be null).
  constexpr bool readB = isBinaryJoin(J);
  const V s = I::set1(scalar);
  const V x0 = broadcastA ? I::set1(*a) : V();
  const V y0 = broadcastB && readB ? I::set1(*b) : V();
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    V x = broadcastA ? x0 : I::load(a + i);
    V y = !readB ? x : broadcastB ? y0 : I::load(b + i);
    I::store(out + i, joinVector<I, J>(x, y, s));
  }
  if (i == n)
    return;
  // The tail goes through one full vector so that every element takes the
  // same formula (the padding lanes compute join(0, 0), harmlessly).
  const int64_t rest = n - i;
  T ta[W] = {}, tb[W] = {}, to[W];
  if (!broadcastA)
    std::memcpy(ta, a + i, rest * sizeof(T));
  if (readB && !broadcastB)
    std::memcpy(tb, b + i, rest * sizeof(T));
  V x = broadcastA ? x0 : I::load(ta);
  V y = !readB ? x : broadcastB ? y0 : I::load(tb);
  I::store(to, joinVector<I, J>(x, y, s));
  std::memcpy(out + i, to, rest * sizeof(T));
}

template <class I, AggKind A>
inline typename I::V aggVector(typename I::V acc, typename I::V value) {
  if constexpr (A == AggKind::Add)
    return I::add(acc, value);
  else if constexpr (A == AggKind::Mul)
    return I::mul(acc, value);
  else if constexpr (A == AggKind::Max)
    return I::stdMax(acc, value);
  else
    return I::stdMin(acc, value);
}

template <class I, AggKind A>
void vectorAccumulate(typename I::T *out, const typename I::T *values,
                      int64_t n) {
  constexpr int64_t W = I::kWidth;
  int64_t i = 0;
  for (; i + W <= n; i += W)
    I::store(out + i, aggVector<I, A>(I::load(out + i), I::load(values + i)));
  // One IEEE operation per element: the scalar tail gives the same results.
  for (; i < n; ++i)
    out[i] = aggValue<A>(out[i], values[i]);
}

template <class I, AggKind A>
typename I::T vectorReduce(typename I::T acc, const typename I::T *values,
                           int64_t n) {
  using T = typename I::T;
  using V = typename I::V;
  constexpr int64_t W = I::kWidth;
  if (n < 2 * W)
    return scalarReduce<T, A>(acc, values, n);
  // Lanes start at the identity; -0 for add, so that sums of negative zeros
  // stay -0 as in the scalar fold.
  const T identity = A == AggKind::Add   ? T(-0.0)
                     : A == AggKind::Mul ? T(1)
                     : A == AggKind::Max ? -std::numeric_limits<T>::infinity()
                                         : std::numeric_limits<T>::infinity();
  // Two accumulators hide the latency of the adds.
  V r0 = I::set1(identity), r1 = r0;
  int64_t i = 0;
  for (; i + 2 * W <= n; i += 2 * W) {
    r0 = aggVector<I, A>(r0, I::load(values + i));
    r1 = aggVector<I, A>(r1, I::load(values + i + W));
  }
  r0 = aggVector<I, A>(r0, r1);
  T lanes[W];
  I::store(lanes, r0);
  T total = identity;
  for (int64_t lane = 0; lane < W; ++lane)
    total = aggValue<A>(total, lanes[lane]);
  for (; i < n; ++i)
    total = aggValue<A>(total, values[i]);
  T result = aggValue<A>(acc, total);
  if constexpr (A == AggKind::Max || A == AggKind::Min) {
    // The lanes skip NaN values exactly as the scalar fold does (std::max
    // keeps its first argument then), and a NaN acc stays. Only which zero
    // wins a tie between +0 and -0 depends on the order: the scalar fold
    // keeps the first, so redo it then.
    if (result == T(0))
      return scalarReduce<T, A>(acc, values, n);
  }
  return result;
}

template <class I, size_t... Js>
void fillVector(KernelTable<typename I::T> &table, std::index_sequence<Js...>) {
  ((table.join[Js] = {&vectorJoinSpan<I, static_cast<JoinKind>(Js),
                                      SpanOperands::Contiguous>,
                      &vectorJoinSpan<I, static_cast<JoinKind>(Js),
                                      SpanOperands::BroadcastB>,
                      &vectorJoinSpan<I, static_cast<JoinKind>(Js),
                                      SpanOperands::BroadcastA>}),
   ...);
  table.accumulate = {
      &vectorAccumulate<I, AggKind::Add>, &vectorAccumulate<I, AggKind::Mul>,
      &vectorAccumulate<I, AggKind::Max>, &vectorAccumulate<I, AggKind::Min>};
  table.reduce = {&vectorReduce<I, AggKind::Add>, &vectorReduce<I, AggKind::Mul>,
                  &vectorReduce<I, AggKind::Max>, &vectorReduce<I, AggKind::Min>};
}

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif // DOPPLER_CPU_JOINS_AVX2

template <typename T> const KernelTable<T> &kernelTable() {
  static const KernelTable<T> table = [] {
    KernelTable<T> result;
    auto joins = std::make_index_sequence<kNumJoinKinds>();
#if DOPPLER_CPU_JOINS_AVX2
    if (vectorJoinsAvailable()) {
      if constexpr (std::is_same_v<T, float>)
        fillVector<F32x8>(result, joins);
      else
        fillVector<F64x4>(result, joins);
      return result;
    }
#endif
    fillScalar<T>(result, joins);
    return result;
  }();
  return table;
}

} // namespace

bool vectorJoinsAvailable() {
#if DOPPLER_CPU_JOINS_AVX2
  // __builtin_cpu_supports checks the OS saves the AVX state too.
  // DOPPLER_CPU_JOINS=scalar forces the fallback (to test or compare it).
  static const bool available = [] {
    const char *choice = std::getenv("DOPPLER_CPU_JOINS");
    if (choice && std::strcmp(choice, "scalar") == 0)
      return false;
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }();
  return available;
#else
  return false;
#endif
}

template <typename T>
JoinSpanFn<T> joinSpanKernel(JoinKind join, SpanOperands operands) {
  return kernelTable<T>()
      .join[static_cast<unsigned>(join)][static_cast<unsigned>(operands)];
}

template <typename T> AccumulateSpanFn<T> accumulateSpanKernel(AggKind agg) {
  return kernelTable<T>().accumulate[static_cast<unsigned>(agg)];
}

template <typename T> ReduceSpanFn<T> reduceSpanKernel(AggKind agg) {
  return kernelTable<T>().reduce[static_cast<unsigned>(agg)];
}

template JoinSpanFn<float> joinSpanKernel<float>(JoinKind, SpanOperands);
template JoinSpanFn<double> joinSpanKernel<double>(JoinKind, SpanOperands);
template AccumulateSpanFn<float> accumulateSpanKernel<float>(AggKind);
template AccumulateSpanFn<double> accumulateSpanKernel<double>(AggKind);
template ReduceSpanFn<float> reduceSpanKernel<float>(AggKind);
template ReduceSpanFn<double> reduceSpanKernel<double>(AggKind);

} // namespace doppler::runtime::cpu::detail

namespace doppler::runtime::cpu {

void applyJoinSpan(JoinKind join, const float *a, const float *b, float scalar,
                   float *out, int64_t n) {
  detail::joinSpanKernel<float>(join, detail::SpanOperands::Contiguous)(
      a, b, scalar, out, n);
}

void applyJoinSpan(JoinKind join, const double *a, const double *b,
                   double scalar, double *out, int64_t n) {
  detail::joinSpanKernel<double>(join, detail::SpanOperands::Contiguous)(
      a, b, scalar, out, n);
}

void applyJoinSpanBroadcastB(JoinKind join, const float *a, float b,
                             float scalar, float *out, int64_t n) {
  detail::joinSpanKernel<float>(join, detail::SpanOperands::BroadcastB)(
      a, &b, scalar, out, n);
}

void applyJoinSpanBroadcastB(JoinKind join, const double *a, double b,
                             double scalar, double *out, int64_t n) {
  detail::joinSpanKernel<double>(join, detail::SpanOperands::BroadcastB)(
      a, &b, scalar, out, n);
}

} // namespace doppler::runtime::cpu
