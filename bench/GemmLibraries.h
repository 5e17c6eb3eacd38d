//===- GemmLibraries.h - Other GEMM libraries for GemmBench -----*- C++ -*-===//
//
// Row-major C = op(A) * op(B) through BLIS and oneDNN, each behind its own
// translation unit: blis.h declares its own CBLAS, which must not meet
// OpenBLAS's cblas.h (the runtime's) in one file. Each wrapper exists only
// when CMake found the library (DOPPLER_BENCH_HAVE_BLIS,
// DOPPLER_BENCH_HAVE_ONEDNN).
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_BENCH_GEMMLIBRARIES_H
#define DOPPLER_BENCH_GEMMLIBRARIES_H

#include <cstdint>

namespace doppler::bench {

/// One row-major GEMM: C (m x n, ldc) = op(A) * op(B), where op(A) is m x k
/// (A stored k x m when `transA`) and op(B) is k x n.
template <typename T> struct GemmCall {
  bool transA = false, transB = false;
  int64_t m = 0, n = 0, k = 0;
  const T *a = nullptr;
  int64_t lda = 0;
  const T *b = nullptr;
  int64_t ldb = 0;
  T *c = nullptr;
  int64_t ldc = 0;
};

#ifdef DOPPLER_BENCH_HAVE_BLIS
/// Limits BLIS to one thread.
void blisSingleThreaded();
void blisGemm(const GemmCall<float> &call);
void blisGemm(const GemmCall<double> &call);
#endif

#ifdef DOPPLER_BENCH_HAVE_ONEDNN
/// Limits oneDNN's OpenMP runtime to one thread; false when it could not.
bool oneDnnSingleThreaded();
/// dnnl_sgemm (oneDNN has no f64 GEMM). False when oneDNN reports an error.
bool oneDnnGemm(const GemmCall<float> &call);
#endif

} // namespace doppler::bench

#endif // DOPPLER_BENCH_GEMMLIBRARIES_H
