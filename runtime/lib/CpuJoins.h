//===- CpuJoins.h - Vectorised joins of the CPU kernels ---------*- C++ -*-===//
//
// Internal to the runtime: the elementwise scalar functions ("joins") of
// einsums over contiguous spans, vectorised with SLEEF where the CPU allows.
// Used by the loop nest (CpuLoopNest.cpp) and the fused elementwise kernels.
//
// Accuracy, against doppler::applyJoin (double) rounded to the element type:
//  - identity, add, sub, mul, div, max, min, neg, sqrt, reciprocal, abs,
//    relu, square, scale, shift: bit-identical to the same formula in the
//    element type (one IEEE operation), NaN and signed zeros included; max
//    and min keep std::max/std::min's argument order (a NaN second operand
//    yields the first).
//  - rsqrt (1 / sqrt(a), two roundings): within 1 ULP.
//  - exp, log, pow, tanh (SLEEF's u10 functions, within 1.0 ULP of the exact
//    result): within 2 ULP.
//  - silu, sigmoid (a / (1 + exp(-a)), 1 / (1 + exp(-a))): within 4 ULP.
//  - gelu (0.5 a (1 + tanh(u))): within 4 ULP plus |a| * epsilon of the type
//    (1 + tanh(u) cancels for negative a; the reference has the same term).
//  - Where the reference result is denormal, within the smallest normal of
//    the type in absolute terms: the composed formulas may flush it to zero
//    (exp(-a) overflows first), as the scalar formula does.
// Special values follow the reference: NaN where it is NaN, the same
// infinities and zeros.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_RUNTIME_LIB_CPUJOINS_H
#define DOPPLER_RUNTIME_LIB_CPUJOINS_H

#include "Doppler/Support/EinsumSpec.h"

#include <cstdint>

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

} // namespace doppler::runtime::cpu

#endif // DOPPLER_RUNTIME_LIB_CPUJOINS_H
