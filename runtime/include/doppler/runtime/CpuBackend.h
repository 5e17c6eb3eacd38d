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

/// Which thread copies a transfer of more than
/// CpuBackendOptions::inlineCopyBytes (Backend::largeCopyPath).
enum class LargeCopies : uint8_t {
  /// IdleProducer when the devices leave no core to a copy worker (at least
  /// as many devices as CPUs the process may use), else CopyWorker.
  Auto,
  /// LargeCopyPath's three, always.
  CopyWorker,
  IdleProducer,
  ComputeWorkers,
};

struct CpuBackendOptions {
  int numDevices = 1;
  /// Bytes per second of every link between two devices; 0: unthrottled.
  double linkBandwidth = 0;
  /// Seconds every transfer between two devices takes at least.
  double linkLatency = 0;
  WaitMode waitMode = WaitMode::Sleep;
  /// Freed blocks each device keeps for reuse (avoids page faults on large
  /// buffers in repeated runs: first touching fresh pages costs several
  /// times a streaming pass over them). 0: automatic, a quarter of the
  /// host's memory shared by the devices, at least 256 MiB each.
  uint64_t cachedBytesPerDevice = 0;
  /// With two devices or more, binds device d's compute worker to the
  /// (d mod n)-th of the n CPUs the process may use (Linux; elsewhere a
  /// no-op). Unbound workers that sleep and wake for every task are often
  /// woken on a core that is still busy, and the kernel may leave them there
  /// for milliseconds: two devices on two idle cores then run one after the
  /// other. Copy workers stay unbound.
  bool pinComputeWorkers = true;
  /// Transfers of at most this many bytes run on the worker that made them
  /// ready (Backend::inlineCopyBytes), saving the copy worker's wake-up;
  /// 0: none (the others go where largeCopies says). Off while the links are
  /// emulated (linkBandwidth or linkLatency set): a throttled copy would
  /// hold the producer's worker for the link's time.
  uint64_t inlineCopyBytes = 64 * 1024;
  /// Who copies the larger transfers; ComputeWorkers (and Auto) fall back
  /// to the copy workers while the links are emulated, as inline copies do.
  LargeCopies largeCopies = LargeCopies::Auto;
};

/// Fails on invalid options (no devices, negative bandwidth or latency).
Result<std::unique_ptr<Backend>>
createCpuBackend(const CpuBackendOptions &options = {});

} // namespace doppler::runtime

#endif // DOPPLER_RUNTIME_CPUBACKEND_H
