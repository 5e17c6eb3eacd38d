//===- GemmOneDnn.cpp - oneDNN's GEMM for GemmBench -----------------------===//

#include "GemmLibraries.h"

#include <dnnl.h>

#include <dlfcn.h>

namespace doppler::bench {

bool oneDnnSingleThreaded() {
  // Debian's oneDNN runs on OpenMP, which reads OMP_NUM_THREADS once when
  // it loads (before main). Its omp_set_num_threads is reached through the
  // already loaded runtime so that we do not link a second OpenMP runtime
  // (a compiler's -fopenmp may pick libomp where oneDNN uses libgomp).
  using SetThreads = void (*)(int);
  auto set =
      reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
  if (!set)
    return false;
  set(1);
  return true;
}

bool oneDnnGemm(const GemmCall<float> &call) {
  return dnnl_sgemm(call.transA ? 'T' : 'N', call.transB ? 'T' : 'N', call.m,
                    call.n, call.k, 1.0f, call.a, call.lda, call.b, call.ldb,
                    0.0f, call.c, call.ldc) == dnnl_success;
}

} // namespace doppler::bench
