//===- WindowTestSupport.h - Window geometries for the kernel tests -*- C++ -*-===//
//
// The geometry of a convolution or pool case, written out per dimension:
// shared by the CPU window kernel tests and the CUDA ones.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_RUNTIME_TESTS_WINDOWTESTSUPPORT_H
#define DOPPLER_RUNTIME_TESTS_WINDOWTESTSUPPORT_H

#include "Doppler/Support/Window.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace doppler::runtime::test {

inline WindowGeometry geometry(std::vector<int64_t> kernel,
                               std::vector<int64_t> strides,
                               std::vector<int64_t> dilations,
                               std::vector<int64_t> low,
                               std::vector<int64_t> high) {
  WindowGeometry g;
  g.kernel = std::move(kernel);
  g.strides = std::move(strides);
  g.dilations = std::move(dilations);
  g.padLow = std::move(low);
  g.padHigh = std::move(high);
  return g;
}

} // namespace doppler::runtime::test

#endif // DOPPLER_RUNTIME_TESTS_WINDOWTESTSUPPORT_H
