//===- CudaCheck.h - CUDA and cuBLAS errors as Status -----------*- C++ -*-===//
//
// Every CUDA runtime and cuBLAS call of the backend goes through one of
// these macros, which turn a failure into a Status naming the call, the
// source file and line, and the library's error name and text. They return
// from the enclosing function (Status or Result<T>).
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_RUNTIME_CUDA_CUDACHECK_H
#define DOPPLER_RUNTIME_CUDA_CUDACHECK_H

#include "doppler/runtime/Status.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <string>
#include <string_view>

namespace doppler::runtime::cuda {

/// "<call> failed at <file>:<line>: <name>: <text>", with the file's
/// directory dropped.
std::string formatCallFailure(std::string_view call, std::string_view file,
                              int line, std::string_view errorName,
                              std::string_view errorText);

/// Success for cudaSuccess; otherwise the formatted failure. Also clears
/// the thread's last-error state so that a later, unrelated check does not
/// report it again (sticky errors stay, as CUDA keeps them).
Status checkCuda(cudaError_t error, std::string_view call,
                 std::string_view file, int line);
Status checkCublas(cublasStatus_t status, std::string_view call,
                   std::string_view file, int line);

} // namespace doppler::runtime::cuda

#define DOPPLER_CUDA_CHECK(call)                                               \
  ::doppler::runtime::cuda::checkCuda((call), #call, __FILE__, __LINE__)
#define DOPPLER_CUBLAS_CHECK(call)                                             \
  ::doppler::runtime::cuda::checkCublas((call), #call, __FILE__, __LINE__)

/// Returns the failure from the enclosing function.
#define DOPPLER_CUDA_TRY(call)                                                 \
  do {                                                                         \
    ::doppler::runtime::Status dopplerStatus_ = DOPPLER_CUDA_CHECK(call);      \
    if (!dopplerStatus_)                                                       \
      return dopplerStatus_;                                                   \
  } while (false)
#define DOPPLER_CUBLAS_TRY(call)                                               \
  do {                                                                         \
    ::doppler::runtime::Status dopplerStatus_ = DOPPLER_CUBLAS_CHECK(call);    \
    if (!dopplerStatus_)                                                       \
      return dopplerStatus_;                                                   \
  } while (false)

#endif // DOPPLER_RUNTIME_CUDA_CUDACHECK_H
