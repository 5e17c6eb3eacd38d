//===- GemmBlis.cpp - BLIS's typed GEMM for GemmBench ---------------------===//
//
// The typed API takes row and column strides, so a row-major operand is
// (rs = ld, cs = 1) and a transposed one is the same storage with
// BLIS_TRANSPOSE: no copies on our side.
//
//===----------------------------------------------------------------------===//

#include "GemmLibraries.h"

#include <blis.h>

namespace doppler::bench {

void blisSingleThreaded() { bli_thread_set_num_threads(1); }

static trans_t blisTrans(bool transposed) {
  return transposed ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE;
}

void blisGemm(const GemmCall<float> &call) {
  float one = 1.0f, zero = 0.0f;
  bli_sgemm(blisTrans(call.transA), blisTrans(call.transB), call.m, call.n,
            call.k, &one, const_cast<float *>(call.a), call.lda, 1,
            const_cast<float *>(call.b), call.ldb, 1, &zero, call.c, call.ldc,
            1);
}

void blisGemm(const GemmCall<double> &call) {
  double one = 1.0, zero = 0.0;
  bli_dgemm(blisTrans(call.transA), blisTrans(call.transB), call.m, call.n,
            call.k, &one, const_cast<double *>(call.a), call.lda, 1,
            const_cast<double *>(call.b), call.ldb, 1, &zero, call.c, call.ldc,
            1);
}

} // namespace doppler::bench
