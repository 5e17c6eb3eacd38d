//===- RunSupport.h - What doppler-run and doppler-run-plan share -*- C++
//-*-===//
//
// Header-only so that each tool compiles it with its own flags (doppler-run
// is an LLVM tool built without exceptions) and its own backends: the CUDA
// backend is linked, and DOPPLER_WITH_CUDA_BACKEND defined, only where the
// build has it.
//
// createBackend: "cpu" or "cuda" by name, with a clear error when the CUDA
// backend was not built (or, from the backend, when no GPU is there).
// Timing and reports (measure, RunReport) live in Plan.h: they use JSON,
// which must be compiled with exceptions, as the runtime library is.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_RUNTIME_TOOLS_RUNSUPPORT_H
#define DOPPLER_RUNTIME_TOOLS_RUNSUPPORT_H

#include "doppler/runtime/CpuBackend.h"
#include "doppler/runtime/Executor.h"
#include "doppler/runtime/Plan.h"

#if defined(DOPPLER_WITH_CUDA_BACKEND)
#include "doppler/runtime/CudaBackend.h"
#endif

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace doppler::runtime::tools {

struct BackendChoice {
  std::string name = "cpu";
  int devices = 1;
  /// CPU backend link model (bytes/s and seconds; 0 disables either).
  double linkBandwidth = 0;
  double linkLatency = 0;
  /// CPU backend: CpuBackendOptions::largeCopies (auto, copy-worker,
  /// idle-producer, compute-workers; checked by the tool's parser).
  std::string largeCopies = "auto";
};

inline Result<std::unique_ptr<Backend>>
createBackend(const BackendChoice &choice) {
  if (choice.name == "cpu") {
    CpuBackendOptions options;
    options.numDevices = choice.devices;
    options.linkBandwidth = choice.linkBandwidth;
    options.linkLatency = choice.linkLatency;
    options.largeCopies = choice.largeCopies == "copy-worker"
                              ? LargeCopies::CopyWorker
                          : choice.largeCopies == "idle-producer"
                              ? LargeCopies::IdleProducer
                          : choice.largeCopies == "compute-workers"
                              ? LargeCopies::ComputeWorkers
                              : LargeCopies::Auto;
    return createCpuBackend(options);
  }
  if (choice.name == "cuda") {
#if defined(DOPPLER_WITH_CUDA_BACKEND)
    CudaBackendOptions options;
    options.numDevices = choice.devices;
    return createCudaBackend(options);
#else
    return Status::failure(
        "this build has no CUDA backend (nvcc was not found when it was "
        "configured, or DOPPLER_ENABLE_CUDA=OFF); use --backend cpu");
#endif
  }
  return Status::failure("unknown backend '" + choice.name +
                         "' (expected cpu or cuda)");
}

} // namespace doppler::runtime::tools

#endif // DOPPLER_RUNTIME_TOOLS_RUNSUPPORT_H
