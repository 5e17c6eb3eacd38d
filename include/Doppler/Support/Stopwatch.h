//===- Stopwatch.h - Seconds since a point in time ---------------*- C++ -*-===//
//
// The one helper the placement library, the learning code and the tools
// time their budgets and reports with.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_SUPPORT_STOPWATCH_H
#define DOPPLER_SUPPORT_STOPWATCH_H

#include <chrono>

namespace doppler {

/// Seconds of the steady clock since `begin`.
inline double secondsSince(std::chrono::steady_clock::time_point begin) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin)
      .count();
}

} // namespace doppler

#endif // DOPPLER_SUPPORT_STOPWATCH_H
