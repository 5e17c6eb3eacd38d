//===- CudaWindowMath.h - One thread of a conv or pool ----------*- C++ -*-===//
//
// Direct convolution and pooling, one output element per thread (the
// semantics of Doppler/Support/Window.h). Shapes are normalised to 3
// spatial dims (missing leading dims: extent 1, kernel 1, stride 1, no
// padding). A thread decodes its output index, clips each dim's taps to the
// ones whose input lies inside the tensor (so padding costs nothing and a
// pool kernel far larger than its input costs only the taps that reach
// it), and sums (or takes the max) over the group's channels and those
// taps in the reference's order: channel, then kd, kh, kw.
//
// __host__ __device__: the host tests run these very functions over whole
// plans (unittests/Runtime/Cuda/CudaWindowTests.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_RUNTIME_CUDA_CUDAWINDOWMATH_H
#define DOPPLER_RUNTIME_CUDA_CUDAWINDOWMATH_H

#include "CudaKernelMath.h"

#include <cstdint>

namespace doppler::runtime::cuda {

constexpr int kWindowDims = 3;

/// A conv or pool, normalised to 3 spatial dims. The output is [batch,
/// filters, out[0], out[1], out[2]] (a pool: filters = channels).
struct WindowParams {
  int64_t count = 0; ///< Output elements.
  int64_t batch = 0, channels = 0, filters = 0;
  /// Conv: input channels per group and output channels per group (pool:
  /// 1 and 1, each output channel reading its own input channel).
  int64_t perGroupIn = 1, perGroupOut = 1;
  int64_t in[kWindowDims] = {1, 1, 1};
  int64_t kernel[kWindowDims] = {1, 1, 1};
  int64_t stride[kWindowDims] = {1, 1, 1};
  int64_t dilation[kWindowDims] = {1, 1, 1};
  int64_t padLow[kWindowDims] = {0, 0, 0};
  int64_t out[kWindowDims] = {1, 1, 1};
  bool isPool = false;
  bool isMax = false;
  /// Avg pool: the divisor (the kernel volume, padding included).
  double volume = 1;
};

/// The taps [first, end) of a kernel dim whose input o * stride - padLow +
/// k * dilation lies in [0, extent).
DOPPLER_HD void windowTaps(int64_t o, int64_t extent, int64_t kernel,
                           int64_t stride, int64_t dilation, int64_t padLow,
                           int64_t &first, int64_t &end) {
  const int64_t base = o * stride - padLow;
  first = base >= 0 ? 0 : (-base + dilation - 1) / dilation;
  end = extent - base <= 0 ? 0 : (extent - base - 1) / dilation + 1;
  end = end < kernel ? end : kernel;
  first = first < end ? first : end;
}

/// out[i] for output element i (row-major over [batch, filters, out...]).
template <typename T, typename Index>
DOPPLER_HD void windowElement(const WindowParams &p, T *out, const T *input,
                              const T *weight, Index i) {
  Index rest = i;
  int64_t o[kWindowDims];
  for (int j = kWindowDims - 1; j >= 0; --j) {
    o[j] = static_cast<int64_t>(rest % static_cast<Index>(p.out[j]));
    rest /= static_cast<Index>(p.out[j]);
  }
  const int64_t channel = static_cast<int64_t>(rest % static_cast<Index>(p.filters));
  const int64_t n = static_cast<int64_t>(rest / static_cast<Index>(p.filters));
  int64_t first[kWindowDims], end[kWindowDims], base[kWindowDims];
  DOPPLER_UNROLL
  for (int j = 0; j < kWindowDims; ++j) {
    windowTaps(o[j], p.in[j], p.kernel[j], p.stride[j], p.dilation[j],
               p.padLow[j], first[j], end[j]);
    base[j] = o[j] * p.stride[j] - p.padLow[j];
  }
  const int64_t plane = p.in[0] * p.in[1] * p.in[2];
  const int64_t volume = p.kernel[0] * p.kernel[1] * p.kernel[2];
  const int64_t firstChannel = (channel / p.perGroupOut) * p.perGroupIn;
  T acc = p.isMax ? -static_cast<T>(INFINITY) : T(0);
  for (int64_t c = 0; c < p.perGroupIn; ++c) {
    const T *x = input + (n * p.channels + firstChannel + c) * plane;
    const T *w =
        p.isPool ? nullptr : weight + (channel * p.perGroupIn + c) * volume;
    for (int64_t kd = first[0]; kd < end[0]; ++kd) {
      const int64_t id = base[0] + kd * p.dilation[0];
      for (int64_t kh = first[1]; kh < end[1]; ++kh) {
        const int64_t ih = base[1] + kh * p.dilation[1];
        const T *row = x + (id * p.in[1] + ih) * p.in[2] + base[2];
        const T *taps =
            w ? w + (kd * p.kernel[1] + kh) * p.kernel[2] : nullptr;
        for (int64_t kw = first[2]; kw < end[2]; ++kw) {
          const T v = row[kw * p.dilation[2]];
          if (!p.isPool)
            acc += taps[kw] * v;
          else if (p.isMax) // Window.h's rule: NaN wins, as in PyTorch.
            acc = (v > acc || v != v) ? v : acc;
          else
            acc += v;
        }
      }
    }
  }
  if (p.isPool && !p.isMax)
    acc = static_cast<T>(static_cast<double>(acc) / p.volume);
  out[i] = acc;
}

} // namespace doppler::runtime::cuda

#endif // DOPPLER_RUNTIME_CUDA_CUDAWINDOWMATH_H
