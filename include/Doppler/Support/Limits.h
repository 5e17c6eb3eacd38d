//===- Limits.h - Caps on counts a user can type --------------*- C++ -*-===//
//
// The largest counts every layer accepts, in one place so that the tools,
// the passes and the runtime refuse the same inputs with the same number.
// Each is far beyond any real use and small enough that the tables sized by
// it (devices x nodes in the simulator, a thread per device in the CPU
// runtime) cannot exhaust memory on a typo.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_SUPPORT_LIMITS_H
#define DOPPLER_SUPPORT_LIMITS_H

#include <cstdint>

namespace doppler {

/// Devices of a placement, a system, a plan or a runtime backend.
constexpr int64_t kMaxDevices = 4096;

/// Seconds of any wait the runtime emulates, a link latency or a delay task
/// (an hour): longer would not be a cost model but a hang.
constexpr double kMaxEmulatedSeconds = 3600;

/// The sum of a graph's compute and transfer costs, in its cost units: every
/// makespan and placement feature is at most that sum, so below this bound
/// they, and the sums of their squares, stay finite in double (the 1e14 of
/// the reference graphs' exact integers is far below it).
constexpr double kMaxTotalCost = 1e150;

} // namespace doppler

#endif // DOPPLER_SUPPORT_LIMITS_H
