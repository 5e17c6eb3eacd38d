//===- CpuJoins.cpp - Vectorised joins of the CPU kernels -----------------===//
//
// A first, scalar implementation of the span API (the vector one follows).
//
//===----------------------------------------------------------------------===//

#include "CpuJoins.h"

namespace doppler::runtime::cpu {
namespace {

template <typename T>
void joinSpan(JoinKind join, const T *a, const T *b, bool broadcastB, T bValue,
              T scalar, T *out, int64_t n) {
  const bool unary = joinArity(join) == 1;
  for (int64_t i = 0; i < n; ++i) {
    double y = unary ? 0.0 : broadcastB ? double(bValue) : double(b[i]);
    out[i] = static_cast<T>(applyJoin(join, double(a[i]), y, double(scalar)));
  }
}

} // namespace

void applyJoinSpan(JoinKind join, const float *a, const float *b, float scalar,
                   float *out, int64_t n) {
  joinSpan<float>(join, a, b, false, 0.f, scalar, out, n);
}

void applyJoinSpan(JoinKind join, const double *a, const double *b,
                   double scalar, double *out, int64_t n) {
  joinSpan<double>(join, a, b, false, 0.0, scalar, out, n);
}

void applyJoinSpanBroadcastB(JoinKind join, const float *a, float b,
                             float scalar, float *out, int64_t n) {
  joinSpan<float>(join, a, nullptr, true, b, scalar, out, n);
}

void applyJoinSpanBroadcastB(JoinKind join, const double *a, double b,
                             double scalar, double *out, int64_t n) {
  joinSpan<double>(join, a, nullptr, true, b, scalar, out, n);
}

} // namespace doppler::runtime::cpu
