//===- CpuWindow.h - Convolution and pooling plans (internal) ---*- C++ -*-===//
//
// Internal to the runtime: the plan of a ConvolutionKernel or PoolKernel
// (CpuKernels.h), shared by the portable loops (CpuWindow.cpp) and the
// AVX2 depthwise method (CpuDepthwise.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_RUNTIME_LIB_CPUWINDOW_H
#define DOPPLER_RUNTIME_LIB_CPUWINDOW_H

#include "doppler/runtime/CpuKernels.h"

#include <array>
#include <cstdint>
#include <vector>

namespace doppler::runtime::cpu {

/// Spatial dims every plan is normalised to.
constexpr unsigned kDims = 3;

/// Kernel tap `tap` along one dim: the output positions [lo, hi) whose
/// input o * stride + offset lies in [0, extent) (offset = tap * dilation -
/// padLow).
struct TapRange {
  int64_t tap = 0;
  int64_t lo = 0, hi = 0;
  int64_t offset = 0;
};

/// A row a depthwise output row reads: the offset of a padded input row in
/// the channel's plane and of a kernel row in the filter.
struct DepthwiseTap {
  int64_t input = 0, weight = 0;
};

/// A convolution or pool with its shapes normalised to 3 spatial dims.
struct WindowPlan {
  ElementType type = ElementType::F32;
  bool isPool = false;
  PoolKind pool = PoolKind::Max;
  ConvMethod method = ConvMethod::Direct;
  Shape outShape;
  int64_t batch = 0, channels = 0, filters = 0, groups = 1;
  int64_t perGroupIn = 0, perGroupOut = 0;
  std::array<int64_t, kDims> in{}, kernel{}, stride{}, dilation{}, padLow{},
      out{};
  int64_t inPlane = 0, outPlane = 0, kernelVolume = 0;
  /// Per dim: the taps that reach the input, with their output ranges.
  std::array<std::vector<TapRange>, kDims> taps;
  /// Im2col: per dim and tap, its index in `taps` (-1: never reaches it).
  std::array<std::vector<int64_t>, kDims> tapIndex;
  /// Pool avg: the divisor (the kernel volume, in double).
  double volume = 1;
  /// Im2col: rows of the column matrix (C/G * kernel volume) and output
  /// positions per block.
  int64_t columnRows = 0, blockPositions = 0;
  /// Depthwise: width of a padded row (every column the taps read; with a
  /// stride s > 1 along the last dim, the row is stored as s phases of
  /// phaseWidth columns each, phase ph holding padded columns ph, ph + s,
  /// ...); per output row r (od * O_h + oh), its valid (kd, kh) rows
  /// rowTaps[rowTapStart[r] .. rowTapStart[r + 1]); per tap kw along the
  /// last dim, the offset of the column output 0 reads in such a row
  /// (columnOffsets: kw * dilation with stride 1).
  int64_t paddedWidth = 0, phaseWidth = 0;
  std::vector<int64_t> columnOffsets;
  std::vector<DepthwiseTap> rowTaps;
  std::vector<int64_t> rowTapStart;

  bool outputEmpty() const { return numElements(outShape) == 0; }
};

/// Visits the valid (kd, kh) taps of output row (od, oh): `visit(kd, kh,
/// inputRow)` with the input row's index in the channel plane.
template <typename Visit>
void forEachValidRow(const WindowPlan &p, int64_t od, int64_t oh,
                     Visit visit) {
  for (const TapRange &d : p.taps[0]) {
    if (od < d.lo || od >= d.hi)
      continue;
    int64_t id = od * p.stride[0] + d.offset;
    for (const TapRange &h : p.taps[1]) {
      if (oh < h.lo || oh >= h.hi)
        continue;
      int64_t ih = oh * p.stride[1] + h.offset;
      visit(d.tap, h.tap, id * p.in[1] + ih);
    }
  }
}

/// The calling thread's scratch block of at least `bytes` (grown on
/// demand, kept for the thread's life; throws std::bad_alloc).
void *windowScratch(uint64_t bytes);

/// Whether the depthwise method can run here (AVX2 and FMA).
bool depthwiseAvailable();

/// The depthwise method (p.method == Depthwise): AVX2+FMA loops.
void runDepthwise(const WindowPlan &p, const void *input, const void *weight,
                  void *output);

} // namespace doppler::runtime::cpu

#endif // DOPPLER_RUNTIME_LIB_CPUWINDOW_H
