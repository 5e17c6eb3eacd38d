//===- CpuBlas.h - The CPU backend's one call into BLAS ---------*- C++ -*-===//
//
// Row-major C = alpha op(A) op(B) + beta C for float and double, through
// CBLAS. A product with one row or one column (a batch-1 linear layer, a
// convolution with one output pixel, a matrix-vector product) goes to
// ?gemv: OpenBLAS's ?gemm packs both operands whatever their shape, which
// for n = 1 costs a full extra pass over A (measured on this project's
// 2-core VM, OpenBLAS 0.3.21, one thread: 512 x 4608 by a vector, sgemm
// 1.9 ms, sgemv 0.44 ms).
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_RUNTIME_CPUBLAS_H
#define DOPPLER_RUNTIME_CPUBLAS_H

#include <cblas.h>

#include <cstdint>
#include <type_traits>

namespace doppler::runtime {

/// y (stride incy) = alpha op(A) x + beta y, A stored rows x cols. With
/// beta = 0, y is cleared first: y may be scratch holding NaNs, and whether
/// ?gemv's scaling by 0 clears them depends on the OpenBLAS version.
template <typename T>
void blasGemv(CBLAS_TRANSPOSE trans, int64_t rows, int64_t cols, T alpha,
              const T *a, int64_t lda, const T *x, int64_t incx, T beta, T *y,
              int64_t incy) {
  if (beta == T(0)) {
    const int64_t length = trans == CblasNoTrans ? rows : cols;
    for (int64_t i = 0; i < length; ++i)
      y[i * incy] = T(0);
  }
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemv(CblasRowMajor, trans, int(rows), int(cols), alpha, a, int(lda),
                x, int(incx), beta, y, int(incy));
  else
    cblas_dgemv(CblasRowMajor, trans, int(rows), int(cols), alpha, a, int(lda),
                x, int(incx), beta, y, int(incy));
}

/// Row-major C (m x n, ldc) = alpha op(A) op(B) + beta C, where op(A) is
/// m x k (A stored m x k with lda, or k x m when transA) and op(B) is k x n
/// (B stored k x n with ldb, or n x k when transB).
template <typename T>
void blasGemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
              T alpha, const T *a, int64_t lda, const T *b, int64_t ldb,
              T beta, T *c, int64_t ldc) {
  if (n == 1) {
    // C's column (stride ldc) = op(A) times op(B)'s column: stored B is
    // k x 1 (stride ldb) or 1 x k (stride 1).
    if (transA)
      blasGemv<T>(CblasTrans, k, m, alpha, a, lda, b, transB ? 1 : ldb, beta,
                  c, ldc);
    else
      blasGemv<T>(CblasNoTrans, m, k, alpha, a, lda, b, transB ? 1 : ldb,
                  beta, c, ldc);
    return;
  }
  if (m == 1) {
    // C's row = op(A)'s row times op(B), i.e. C^T = op(B)^T op(A)^T: stored
    // A is 1 x k (stride 1) or k x 1 (stride lda).
    const int64_t incx = transA ? lda : 1;
    if (transB)
      blasGemv<T>(CblasNoTrans, n, k, alpha, b, ldb, a, incx, beta, c, 1);
    else
      blasGemv<T>(CblasTrans, k, n, alpha, b, ldb, a, incx, beta, c, 1);
    return;
  }
  const CBLAS_TRANSPOSE ta = transA ? CblasTrans : CblasNoTrans;
  const CBLAS_TRANSPOSE tb = transB ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasRowMajor, ta, tb, int(m), int(n), int(k), alpha, a,
                int(lda), b, int(ldb), beta, c, int(ldc));
  else
    cblas_dgemm(CblasRowMajor, ta, tb, int(m), int(n), int(k), alpha, a,
                int(lda), b, int(ldb), beta, c, int(ldc));
}

} // namespace doppler::runtime

#endif // DOPPLER_RUNTIME_CPUBLAS_H
