//===- CudaCheck.cpp - CUDA and cuBLAS errors as Status -------------------===//

#include "CudaCheck.h"

#include <string>

namespace doppler::runtime::cuda {

std::string formatCallFailure(std::string_view call, std::string_view file,
                              int line, std::string_view errorName,
                              std::string_view errorText) {
  size_t slash = file.find_last_of('/');
  if (slash != std::string_view::npos)
    file = file.substr(slash + 1);
  std::string message(call);
  message += " failed at ";
  message += file;
  message += ":" + std::to_string(line) + ": ";
  message += errorName;
  message += ": ";
  message += errorText;
  return message;
}

Status checkCuda(cudaError_t error, std::string_view call,
                 std::string_view file, int line) {
  if (error == cudaSuccess)
    return Status();
  (void)cudaGetLastError(); // Reset non-sticky errors; sticky ones stay.
  return Status::failure(formatCallFailure(
      call, file, line, cudaGetErrorName(error), cudaGetErrorString(error)));
}

Status checkCublas(cublasStatus_t status, std::string_view call,
                   std::string_view file, int line) {
  if (status == CUBLAS_STATUS_SUCCESS)
    return Status();
  return Status::failure(formatCallFailure(call, file, line,
                                           cublasGetStatusName(status),
                                           cublasGetStatusString(status)));
}

} // namespace doppler::runtime::cuda
