//===- CpuBackend.h - Virtual devices on the host CPU -----------*- C++ -*-===//
//
// Each virtual device is a worker thread with its own memory arena. A
// transfer copies between arenas and, when a link bandwidth or latency is
// set, then waits until `latency + bytes / bandwidth` has passed since it
// started, so that where tasks are placed matters on a single machine.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_RUNTIME_CPUBACKEND_H
#define DOPPLER_RUNTIME_CPUBACKEND_H

#include "doppler/runtime/Backend.h"

#include <cstdint>
#include <memory>

namespace doppler::runtime {

/// How a task waits out a duration (delay tasks, throttled transfers).
enum class WaitMode : uint8_t {
  Sleep, ///< Sleep until the deadline; overshoots by the timer slack
         ///< (~50-100 us) but leaves the cores to other devices.
  Spin,  ///< Busy-wait: precise, but burns a core per waiting worker.
  Hybrid ///< Sleep until shortly before the deadline, then spin.
};

struct CpuBackendOptions {
  int numDevices = 1;
  /// Bytes per second of every link between two devices; 0: unthrottled.
  double linkBandwidth = 0;
  /// Seconds every transfer between two devices takes at least.
  double linkLatency = 0;
  WaitMode waitMode = WaitMode::Sleep;
  /// Freed blocks each device keeps for reuse (avoids page faults on large
  /// buffers in repeated runs).
  uint64_t cachedBytesPerDevice = uint64_t(256) << 20;
};

/// Fails on invalid options (no devices, negative bandwidth or latency).
Result<std::unique_ptr<Backend>>
createCpuBackend(const CpuBackendOptions &options = {});

} // namespace doppler::runtime

#endif // DOPPLER_RUNTIME_CPUBACKEND_H
