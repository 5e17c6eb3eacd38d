//===- CpuRelax.h - Polite busy-waiting -------------------------*- C++ -*-===//
//
// Internal to the runtime.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_RUNTIME_LIB_CPURELAX_H
#define DOPPLER_RUNTIME_LIB_CPURELAX_H

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace doppler::runtime::detail {

/// One iteration of a spin-wait: tells the core we are spinning, which
/// frees resources for a sibling hyperthread and saves power.
inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

} // namespace doppler::runtime::detail

#endif // DOPPLER_RUNTIME_LIB_CPURELAX_H
