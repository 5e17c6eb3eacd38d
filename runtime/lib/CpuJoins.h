//===- CpuJoins.h - Vectorised joins of the CPU kernels ---------*- C++ -*-===//
//
// Internal to the runtime: the elementwise scalar functions ("joins") of
// einsums over contiguous spans, vectorised with SLEEF where the CPU allows.
// Used by the loop nest (CpuLoopNest.cpp) and the fused elementwise kernels.
//
// Accuracy, against doppler::applyJoin (double) rounded to the element type
// (ULP: of that rounded reference):
//  - identity, add, sub, mul, div, max, min, neg, sqrt, reciprocal, abs,
//    relu, square, scale, shift, eq, ne, lt, le, gt, ge, where: bit-identical to the same formula in the
//    element type (one IEEE operation), NaN and signed zeros included; max
//    and min keep std::max/std::min's argument order (a NaN second operand
//    yields the first, max(-0, +0) = -0).
//  - rsqrt (1 / sqrt(a), two roundings): within 1 ULP.
//  - exp, log, pow, tanh (SLEEF's u10 functions, within 1.0 ULP of the exact
//    result): within 2 ULP for f32, 3 ULP for f64 (the reference's libm
//    errs too).
//  - silu, sigmoid (a / (1 + exp(-a)), 1 / (1 + exp(-a))): within 4 ULP.
//    Where exp(-a) overflows (a < -88.7 for f32, -709.8 for f64) both
//    return 0 of the reference's sign, as the formula in the element type
//    does: silu is then off by less than |a| times the smallest normal.
//  - gelu (0.5 a (1 + tanh(u)), computed as a / (1 + exp(-2u))): within
//    4 ULP plus |a| * epsilon of the type (1 + tanh(u) cancels for negative
//    a, and the reference carries that error itself).
//  - Where the reference is denormal: within the smallest normal (absolute).
// Special values follow the reference: NaN where it is NaN, the same
// infinities, zeros of the same sign. unittests/Runtime/JoinTests.cpp checks
// all of this (measured: 1 ULP for exp/log/pow/tanh, 2 for silu/sigmoid).
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_RUNTIME_LIB_CPUJOINS_H
#define DOPPLER_RUNTIME_LIB_CPUJOINS_H

#include "Doppler/Support/EinsumSpec.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace doppler::runtime::cpu {

/// out[i] = join(a[i], b[i], scalar) for 0 <= i < n. a, b and out are
/// contiguous; b is ignored (may be null) for unary joins; out may alias a
/// or b. Results within the accuracy bound stated in CpuJoins.h.
void applyJoinSpan(JoinKind join, const float *a, const float *b, float scalar,
                   float *out, int64_t n);
void applyJoinSpan(JoinKind join, const double *a, const double *b,
                   double scalar, double *out, int64_t n);
/// Same with b broadcast: out[i] = join(a[i], bScalarValue, scalar) /
/// join(aValue, b[i]).
void applyJoinSpanBroadcastB(JoinKind join, const float *a, float b,
                             float scalar, float *out, int64_t n);
void applyJoinSpanBroadcastB(JoinKind join, const double *a, double b,
                             double scalar, double *out, int64_t n);

namespace detail {

//===----------------------------------------------------------------------===//
// Scalar formulas, specialised per join/aggregation at compile time: the
// strided loops and the fallback for CPUs without AVX2+FMA. They follow
// applyJoin/applyAgg in EinsumSpec.cpp (same formulas, same std::max/std::min
// argument order, so NaN handling matches too).
//===----------------------------------------------------------------------===//

/// std::exp, but past the bounds where the result is exactly 0 or +inf it
/// returns that value directly: glibc reaches it through an error-reporting
/// path (errno) about twice as slow. Same results, NaN included.
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
  else if constexpr (J == JoinKind::Erf)
    return std::erf(a);
  else if constexpr (J == JoinKind::Eq)
    return a == b ? T(1) : T(0);
  else if constexpr (J == JoinKind::Ne)
    return a != b ? T(1) : T(0);
  else if constexpr (J == JoinKind::Lt)
    return a < b ? T(1) : T(0);
  else if constexpr (J == JoinKind::Le)
    return a <= b ? T(1) : T(0);
  else if constexpr (J == JoinKind::Gt)
    return a > b ? T(1) : T(0);
  else if constexpr (J == JoinKind::Ge)
    return a >= b ? T(1) : T(0);
  else if constexpr (J == JoinKind::Where)
    return a != T(0) ? b : T(-0.0);
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

/// Whether the join is one IEEE operation (or none) per element, so that
/// the vector and scalar formulas agree bit for bit; the others call SLEEF
/// in the vector kernels and libm in the scalar ones.
constexpr bool isExactJoin(JoinKind join) {
  switch (join) {
  case JoinKind::Pow:
  case JoinKind::Exp:
  case JoinKind::Log:
  case JoinKind::Silu:
  case JoinKind::Gelu:
  case JoinKind::Tanh:
  case JoinKind::Sigmoid:
  case JoinKind::Erf:
    return false;
  default:
    return true;
  }
}

//===----------------------------------------------------------------------===//
// Span kernels for the loop nest, picked once per kernel. Every pointer is
// contiguous but for the broadcast operand, read once at *a or *b.
//===----------------------------------------------------------------------===//

/// Which operands of a span kernel are broadcast (stride 0).
enum class SpanOperands : uint8_t { Contiguous, BroadcastB, BroadcastA };
constexpr unsigned kNumSpanOperands = 3;

/// out[i] = join(a[i], b[i], scalar), with a or b broadcast as picked.
template <typename T>
using JoinSpanFn = void (*)(const T *a, const T *b, T scalar, T *out,
                            int64_t n);
/// out[i] = agg(out[i], values[i]).
template <typename T>
using AccumulateSpanFn = void (*)(T *out, const T *values, int64_t n);
/// The fold of agg over acc, values[0], ..., values[n-1]. Add and mul sum in
/// a different order than the scalar fold (lanes, then across lanes); max
/// and min return exactly what the scalar fold does (NaN and signed zeros
/// included).
template <typename T>
using ReduceSpanFn = T (*)(T acc, const T *values, int64_t n);

/// The kernels of this CPU: AVX2+FMA vector code where the CPU has it, else
/// the scalar formulas. T is float or double.
template <typename T> JoinSpanFn<T> joinSpanKernel(JoinKind, SpanOperands);
template <typename T> AccumulateSpanFn<T> accumulateSpanKernel(AggKind);
template <typename T> ReduceSpanFn<T> reduceSpanKernel(AggKind);

/// Whether the vector (AVX2+FMA) kernels are in use on this CPU (and not
/// turned off with DOPPLER_CPU_JOINS=scalar in the environment).
bool vectorJoinsAvailable();

} // namespace detail

} // namespace doppler::runtime::cpu

#endif // DOPPLER_RUNTIME_LIB_CPUJOINS_H
