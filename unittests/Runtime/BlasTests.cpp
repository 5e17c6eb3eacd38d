//===- BlasTests.cpp - blasGemm against a plain loop ----------------------===//
//
// runtime/lib/CpuBlas.h sends products with one row or one column to ?gemv;
// every transpose combination, with leading dimensions wider than the
// operands, and beta 0 over a C holding NaNs (scratch) or beta 1, must give
// the plain loop's product.
//
//===----------------------------------------------------------------------===//

#include "CpuBlas.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

using namespace doppler::runtime;

namespace {

struct Shape {
  int64_t m, n, k;
};

template <typename T>
void checkGemm(Shape s, bool transA, bool transB, T beta) {
  // Stored shapes, each with 3 spare columns (leading dim > row length).
  const int64_t aRows = transA ? s.k : s.m, aCols = transA ? s.m : s.k;
  const int64_t bRows = transB ? s.n : s.k, bCols = transB ? s.k : s.n;
  const int64_t lda = aCols + 3, ldb = bCols + 3, ldc = s.n + 3;
  std::vector<T> a(aRows * lda), b(bRows * ldb), c(s.m * ldc), expected;
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = T(0.25) * T(int64_t(i * 7 % 13) - 6);
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = T(0.5) * T(int64_t(i * 5 % 11) - 5);
  for (size_t i = 0; i < c.size(); ++i)
    c[i] = beta == T(0) ? std::numeric_limits<T>::quiet_NaN()
                        : T(int64_t(i % 3) - 1);
  expected = c;
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t j = 0; j < s.n; ++j) {
      T sum = 0;
      for (int64_t p = 0; p < s.k; ++p)
        sum += (transA ? a[p * lda + i] : a[i * lda + p]) *
               (transB ? b[j * ldb + p] : b[p * ldb + j]);
      T &out = expected[i * ldc + j];
      out = T(2) * sum + (beta == T(0) ? T(0) : beta * out);
    }
  blasGemm<T>(transA, transB, s.m, s.n, s.k, T(2), a.data(), lda, b.data(),
              ldb, beta, c.data(), ldc);
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t j = 0; j < s.n; ++j)
      ASSERT_NEAR(c[i * ldc + j], expected[i * ldc + j], 1e-4)
          << "m " << s.m << " n " << s.n << " k " << s.k << " transA "
          << transA << " transB " << transB << " beta " << beta << " at ("
          << i << ", " << j << ")";
}

TEST(BlasGemm, MatchesTheLoopForVectorAndMatrixShapes) {
  // n = 1 and m = 1 (the ?gemv paths), both (a dot product), and general
  // shapes (?gemm).
  for (Shape s : {Shape{5, 1, 7}, Shape{1, 6, 4}, Shape{1, 1, 9},
                  Shape{4, 3, 5}, Shape{2, 8, 1}})
    for (bool transA : {false, true})
      for (bool transB : {false, true}) {
        checkGemm<float>(s, transA, transB, 0.0f);
        checkGemm<float>(s, transA, transB, 1.0f);
        checkGemm<double>(s, transA, transB, 0.0);
        checkGemm<double>(s, transA, transB, 1.0);
      }
}

} // namespace
