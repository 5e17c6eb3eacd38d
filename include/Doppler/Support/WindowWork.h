//===- WindowWork.h - The work a window kernel really does ------*- C++ -*-===//
//
// convolutionMultiplyAdds (Window.h) counts every tap of every output
// element, padding included: the FLOPs a convolution defines. The CPU
// runtime's depthwise kernel (runtime/lib/CpuDepthwise.cpp) does less: it
// walks each output row over the kernel rows that fall inside the input
// (the taps in padded rows are skipped), each over the whole kernel width
// (its planes' rows carry their zero padding). On a few output positions
// per channel most taps are padding (a 3x3 kernel with padding 1 on a 1x1
// output reads 3 of its 9 taps), so the cost model and doppler-calibrate
// price depthwise convolutions by the work below.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_SUPPORT_WINDOWWORK_H
#define DOPPLER_SUPPORT_WINDOWWORK_H

#include "Doppler/Support/Window.h"

#include <cstdint>
#include <vector>

namespace doppler {

/// Multiply-adds the depthwise kernel runs for a convolution of
/// `inputShape` ([N, C, I..]) to `resultShape` ([N, F, O..]) with one input
/// channel per group: N * F * prod over the spatial dims but the last of
/// (the kernel offsets inside the input, summed over that dim's outputs) *
/// the last dim's kernel extent * its output extent, in doubles.
inline double depthwiseKernelMultiplyAdds(
    const std::vector<int64_t> &inputShape, const WindowGeometry &geometry,
    const std::vector<int64_t> &resultShape) {
  const unsigned k = geometry.spatialDims();
  double macs = double(resultShape[0]) * double(resultShape[1]);
  for (unsigned j = 0; j + 1 < k; ++j) {
    const int64_t in = inputShape[2 + j];
    double inside = 0;
    for (int64_t o = 0; o < resultShape[2 + j]; ++o)
      for (int64_t t = 0; t < geometry.kernel[j]; ++t) {
        const int64_t at = o * geometry.strides[j] - geometry.padLow[j] +
                           t * geometry.dilations[j];
        inside += at >= 0 && at < in ? 1 : 0;
      }
    macs *= inside;
  }
  return macs * double(geometry.kernel[k - 1]) *
         double(resultShape[2 + k - 1]);
}

} // namespace doppler

#endif // DOPPLER_SUPPORT_WINDOWWORK_H
