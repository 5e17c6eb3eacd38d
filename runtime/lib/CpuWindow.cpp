//===- CpuWindow.cpp - Convolution and pooling on the CPU -----------------===//
//
// ConvolutionKernel and PoolKernel (CpuKernels.h). Every shape is seen as
// 3 spatial dims (missing leading dims have extent 1, kernel 1, stride 1,
// no padding), so one set of loops serves 1-d, 2-d and 3-d windows. Along
// each spatial dim and for each kernel tap, the output positions whose
// input lies inside the tensor form one range, computed once per kernel
// (TapRange): the loops visit valid taps only, without a test per element,
// and padding is never materialised except where a method copies rows.
//
// Methods (ConvMethod):
//  - Gemm: 1x1 stride-1 unpadded kernels are a GEMM per batch element and
//    group on the input as it lies: Y_g [F/G x P] = W_g [F/G x C/G] X_g.
//  - Im2col: blocks of output positions; each block's windows are copied
//    into columns (row r = (c, kd, kh, kw), the weight's own order), then
//    Y_g[:, block] = W_g [F/G x C/G*K] Col [C/G*K x block] (ldc = P).
//  - Depthwise: C/G == 1: AVX2 loops over padded copies of the channels
//    (split into phases along the last dim when strided; CpuDepthwise.cpp).
//  - Direct: per output row, the row accumulated in memory over valid
//    taps (c, kd, kh, then kw over its valid range).
// Pooling is Direct's loop with max (NaN propagates) or a sum divided by
// the kernel volume.
//
//===----------------------------------------------------------------------===//

#include "CpuWindow.h"

#include "CpuBlas.h"

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <optional>
#include <string>
#include <type_traits>

namespace doppler::runtime::cpu {

namespace {

/// Largest padded channel plane of the depthwise method, in bytes.
constexpr uint64_t kMaxDepthwisePlaneBytes = uint64_t(16) << 20;
/// Largest table of the depthwise method's (output row, kernel row) pairs.
constexpr double kMaxDepthwiseRowTaps = double(1 << 22);

TapRange tapRange(int64_t extent, int64_t outExtent, int64_t stride,
                  int64_t dilation, int64_t padLow, int64_t tap) {
  TapRange range;
  range.tap = tap;
  range.offset = tap * dilation - padLow;
  const int64_t offset = range.offset;
  range.lo = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  range.hi = extent - offset <= 0 ? 0 : (extent - offset - 1) / stride + 1;
  range.hi = std::min(range.hi, outExtent);
  range.lo = std::min(range.lo, range.hi);
  return range;
}

/// The taps along one dim that reach the input from some output position,
/// in tap order. Only those are enumerated: a pool's kernel may be far
/// larger than its input (2^31 taps), yet this costs at most about the
/// output extent times the taps one position reaches.
std::vector<TapRange> validTaps(int64_t extent, int64_t outExtent,
                                int64_t kernel, int64_t stride,
                                int64_t dilation, int64_t padLow) {
  std::vector<TapRange> taps;
  if (extent == 0 || outExtent == 0)
    return taps;
  // tap * dilation - padLow must lie in [-(O - 1) * stride, extent - 1].
  auto ceilDiv = [](int64_t a, int64_t b) {
    return a <= 0 ? -((-a) / b) : (a + b - 1) / b;
  };
  const int64_t first =
      std::max<int64_t>(0, ceilDiv(padLow - (outExtent - 1) * stride, dilation));
  const int64_t last = std::min(kernel - 1, (extent - 1 + padLow) / dilation);
  auto consider = [&](int64_t tap) {
    TapRange range =
        tapRange(extent, outExtent, stride, dilation, padLow, tap);
    if (range.lo < range.hi)
      taps.push_back(range);
  };
  if (first > last)
    return taps;
  const double perPosition =
      static_cast<double>(extent) / static_cast<double>(dilation) + 1;
  if (static_cast<double>(last - first + 1) <=
      static_cast<double>(outExtent) * perPosition) {
    for (int64_t tap = first; tap <= last; ++tap)
      consider(tap);
    return taps;
  }
  // Few positions reach the input: collect the taps each one reaches.
  std::vector<int64_t> reached;
  for (int64_t o = 0; o < outExtent; ++o) {
    int64_t lo = std::max(first, ceilDiv(padLow - o * stride, dilation));
    int64_t base = extent - 1 + padLow - o * stride;
    if (base < 0)
      break;
    int64_t hi = std::min(last, base / dilation);
    for (int64_t tap = lo; tap <= hi; ++tap)
      reached.push_back(tap);
  }
  std::sort(reached.begin(), reached.end());
  reached.erase(std::unique(reached.begin(), reached.end()), reached.end());
  for (int64_t tap : reached)
    consider(tap);
  return taps;
}

bool fitsBlasInt(int64_t value) { return value >= 0 && value <= INT_MAX; }

/// Per-thread scratch (im2col columns, padded planes), grown on demand and
/// bounded by what the plans ask for.
class WindowScratch {
public:
  ~WindowScratch() { std::free(block_); }
  void *get(uint64_t bytes) {
    if (size_ < bytes) {
      std::free(block_);
      uint64_t rounded = std::max<uint64_t>(64, (bytes + 63) / 64 * 64);
      block_ = std::aligned_alloc(64, rounded);
      size_ = block_ ? rounded : 0;
      if (!block_)
        throw std::bad_alloc();
    }
    return block_;
  }

private:
  void *block_ = nullptr;
  uint64_t size_ = 0;
};

thread_local WindowScratch threadScratch;

} // namespace

void *windowScratch(uint64_t bytes) { return threadScratch.get(bytes); }

std::string_view convMethodName(ConvMethod method) {
  switch (method) {
  case ConvMethod::Auto:
    return "auto";
  case ConvMethod::Gemm:
    return "gemm";
  case ConvMethod::Im2col:
    return "im2col";
  case ConvMethod::Depthwise:
    return "depthwise";
  case ConvMethod::Direct:
    return "direct";
  }
  return "?";
}

namespace {

void normalise(WindowPlan &plan, const Shape &inputShape,
               const WindowGeometry &geometry) {
  unsigned k = geometry.spatialDims();
  unsigned lead = kDims - k;
  for (unsigned j = 0; j < kDims; ++j) {
    bool given = j >= lead;
    plan.in[j] = given ? inputShape[2 + j - lead] : 1;
    plan.kernel[j] = given ? geometry.kernel[j - lead] : 1;
    plan.stride[j] = given ? geometry.strides[j - lead] : 1;
    plan.dilation[j] = given ? geometry.dilations[j - lead] : 1;
    plan.padLow[j] = given ? geometry.padLow[j - lead] : 0;
    plan.out[j] = given ? plan.outShape[2 + j - lead] : 1;
  }
  plan.batch = inputShape[0];
  plan.channels = inputShape[1];
  plan.inPlane = plan.in[0] * plan.in[1] * plan.in[2];
  plan.outPlane = plan.out[0] * plan.out[1] * plan.out[2];
  plan.kernelVolume = plan.kernel[0] * plan.kernel[1] * plan.kernel[2];
  plan.volume = 1;
  for (unsigned j = 0; j < k; ++j)
    plan.volume *= static_cast<double>(geometry.kernel[j]);
  for (unsigned j = 0; j < kDims; ++j)
    plan.taps[j] = validTaps(plan.in[j], plan.out[j], plan.kernel[j],
                             plan.stride[j], plan.dilation[j], plan.padLow[j]);
}

//===----------------------------------------------------------------------===//
// Direct loops (conv fallback, pooling)
//===----------------------------------------------------------------------===//

/// yrow[o] = op(yrow[o], xrow[o * stride + offset]) over each kw's range.
template <typename T, typename Op>
void accumulateRow(const WindowPlan &p, T *yrow, const T *xrow, Op op) {
  const int64_t stride = p.stride[2];
  for (const TapRange &w : p.taps[2]) {
    const T *x = xrow + w.offset;
    if (stride == 1)
      for (int64_t o = w.lo; o < w.hi; ++o)
        op(w.tap, yrow[o], x[o]);
    else
      for (int64_t o = w.lo; o < w.hi; ++o)
        op(w.tap, yrow[o], x[o * stride]);
  }
}

template <typename T>
void convDirect(const WindowPlan &p, const T *input, const T *weight,
                T *output) {
  const int64_t kernelArea = p.kernel[1] * p.kernel[2];
  const int64_t ow = p.out[2];
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t f = 0; f < p.filters; ++f) {
      const int64_t firstChannel = (f / p.perGroupOut) * p.perGroupIn;
      const T *wf = weight + f * p.perGroupIn * p.kernelVolume;
      T *yf = output + (n * p.filters + f) * p.outPlane;
      for (int64_t od = 0; od < p.out[0]; ++od)
        for (int64_t oh = 0; oh < p.out[1]; ++oh) {
          T *yrow = yf + (od * p.out[1] + oh) * ow;
          std::fill(yrow, yrow + ow, T(0));
          for (int64_t c = 0; c < p.perGroupIn; ++c) {
            const T *xc =
                input + (n * p.channels + firstChannel + c) * p.inPlane;
            const T *wc = wf + c * p.kernelVolume;
            forEachValidRow(p, od, oh, [&](int64_t kd, int64_t kh,
                                           int64_t row) {
              const T *wrow = wc + kd * kernelArea + kh * p.kernel[2];
              accumulateRow<T>(p, yrow, xc + row * p.in[2],
                               [wrow](int64_t kw, T &acc, T x) {
                                 acc += wrow[kw] * x;
                               });
            });
          }
        }
    }
}

template <typename T>
void poolDirect(const WindowPlan &p, const T *input, T *output) {
  const int64_t ow = p.out[2];
  const bool isMax = p.pool == PoolKind::Max;
  const T initial = isMax ? -std::numeric_limits<T>::infinity() : T(0);
  for (int64_t nc = 0; nc < p.batch * p.channels; ++nc) {
    const T *xc = input + nc * p.inPlane;
    T *yc = output + nc * p.outPlane;
    for (int64_t od = 0; od < p.out[0]; ++od)
      for (int64_t oh = 0; oh < p.out[1]; ++oh) {
        T *yrow = yc + (od * p.out[1] + oh) * ow;
        std::fill(yrow, yrow + ow, initial);
        forEachValidRow(p, od, oh, [&](int64_t, int64_t, int64_t row) {
          const T *xrow = xc + row * p.in[2];
          if (isMax)
            accumulateRow<T>(p, yrow, xrow, [](int64_t, T &acc, T x) {
              // poolReference's rule: NaN wins, as in PyTorch.
              acc = (x > acc || x != x) ? x : acc;
            });
          else
            accumulateRow<T>(p, yrow, xrow,
                             [](int64_t, T &acc, T x) { acc += x; });
        });
        if (!isMax)
          for (int64_t o = 0; o < ow; ++o)
            yrow[o] = static_cast<T>(static_cast<double>(yrow[o]) / p.volume);
      }
  }
}

//===----------------------------------------------------------------------===//
// GEMM methods
//===----------------------------------------------------------------------===//

/// Row-major C (m x n, ldc) = A (m x k, lda) B (k x n, ldb) + beta C.
template <typename T>
void gemm(int64_t m, int64_t n, int64_t k, const T *a, int64_t lda, const T *b,
          int64_t ldb, T *c, int64_t ldc, T beta = 0) {
  blasGemm<T>(false, false, m, n, k, T(1), a, lda, b, ldb, beta, c, ldc);
}

template <typename T>
void convGemm(const WindowPlan &p, const T *input, const T *weight,
              T *output) {
  // Cleared here (see convIm2col), so the GEMMs add to it.
  std::memset(output, 0,
              static_cast<size_t>(numElements(p.outShape)) * sizeof(T));
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t g = 0; g < p.groups; ++g)
      gemm<T>(p.perGroupOut, p.outPlane, p.perGroupIn,
              weight + g * p.perGroupOut * p.perGroupIn, p.perGroupIn,
              input + (n * p.channels + g * p.perGroupIn) * p.inPlane,
              p.outPlane,
              output + (n * p.filters + g * p.perGroupOut) * p.outPlane,
              p.outPlane, T(1));
}

/// A piece of one output row inside an im2col block: output row (od, oh),
/// its positions [begin, stop), at column `column` of the block.
struct ColumnSegment {
  int64_t od, oh, begin, stop, column;
};

/// The segments of block [first, first + count) of the output positions.
void blockSegments(const WindowPlan &p, int64_t first, int64_t count,
                   std::vector<ColumnSegment> &segments) {
  segments.clear();
  const int64_t ow = p.out[2];
  int64_t row = first / ow, begin = first - row * ow;
  for (int64_t column = 0; column < count; ++row, begin = 0) {
    const int64_t stop = std::min(ow, begin + (count - column));
    const int64_t od = row / p.out[1];
    segments.push_back({od, row - od * p.out[1], begin, stop, column});
    column += stop - begin;
  }
}

/// out[o] = x[2 * o] for o < n: ResNet's strided layers spend about a
/// tenth of their time here; AVX2 halves it (a clone per target, chosen
/// when the program loads).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define DOPPLER_WINDOW_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define DOPPLER_WINDOW_CLONES
#endif
DOPPLER_WINDOW_CLONES void gatherStride2(float *out, const float *x,
                                         int64_t n) {
  for (int64_t o = 0; o < n; ++o)
    out[o] = x[2 * o];
}
DOPPLER_WINDOW_CLONES void gatherStride2(double *out, const double *x,
                                         int64_t n) {
  for (int64_t o = 0; o < n; ++o)
    out[o] = x[2 * o];
}

/// out[o] = x[o * stride] for o in [lo, hi).
template <typename T>
void gatherRow(T *out, const T *x, int64_t stride, int64_t lo, int64_t hi) {
  if (stride == 1)
    std::memcpy(out + lo, x + lo, static_cast<size_t>(hi - lo) * sizeof(T));
  else if (stride == 2)
    gatherStride2(out + lo, x + 2 * lo, hi - lo);
  else
    for (int64_t o = lo; o < hi; ++o)
      out[o] = x[o * stride];
}

/// Column row `dst` of the block `segments` for the tap (d, h, w) of
/// channel plane `xc`: the input under each position, 0 in the padding.
template <typename T>
void fillColumnRow(const WindowPlan &p, const T *xc, const TapRange &d,
                   const TapRange &h, const TapRange &w,
                   const std::vector<ColumnSegment> &segments, T *dst) {
  for (const ColumnSegment &s : segments) {
    T *out = dst + s.column - s.begin;
    if (s.od < d.lo || s.od >= d.hi || s.oh < h.lo || s.oh >= h.hi) {
      std::fill(out + s.begin, out + s.stop, T(0));
      continue;
    }
    const int64_t id = s.od * p.stride[0] + d.offset;
    const int64_t ih = s.oh * p.stride[1] + h.offset;
    const T *x = xc + (id * p.in[1] + ih) * p.in[2] + w.offset;
    const int64_t lo = std::clamp(w.lo, s.begin, s.stop);
    const int64_t hi = std::clamp(w.hi, lo, s.stop);
    std::fill(out + s.begin, out + lo, T(0));
    gatherRow(out, x, p.stride[2], lo, hi);
    std::fill(out + hi, out + s.stop, T(0));
  }
}

template <typename T>
void convIm2col(const WindowPlan &p, const T *input, const T *weight,
                T *output) {
  const int64_t block = p.blockPositions;
  T *columns = static_cast<T *>(windowScratch(
      static_cast<uint64_t>(p.columnRows * block) * sizeof(T)));
  thread_local std::vector<ColumnSegment> segments;
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t g = 0; g < p.groups; ++g) {
      const T *xg = input + (n * p.channels + g * p.perGroupIn) * p.inPlane;
      const T *wg = weight + g * p.perGroupOut * p.columnRows;
      T *yg = output + (n * p.filters + g * p.perGroupOut) * p.outPlane;
      // OpenBLAS clears C in a pass of its own when beta is 0, slower than
      // memset on the group's contiguous output (8% of ResNet's stem).
      std::memset(yg, 0,
                  static_cast<size_t>(p.perGroupOut * p.outPlane) * sizeof(T));
      for (int64_t first = 0; first < p.outPlane; first += block) {
        const int64_t count = std::min(block, p.outPlane - first);
        blockSegments(p, first, count, segments);
        T *dst = columns;
        for (int64_t c = 0; c < p.perGroupIn; ++c)
          for (int64_t kd = 0; kd < p.kernel[0]; ++kd)
            for (int64_t kh = 0; kh < p.kernel[1]; ++kh)
              for (int64_t kw = 0; kw < p.kernel[2]; ++kw, dst += count) {
                int64_t d = p.tapIndex[0][kd], h = p.tapIndex[1][kh],
                        w = p.tapIndex[2][kw];
                if (d < 0 || h < 0 || w < 0) // Never reaches the input.
                  std::fill(dst, dst + count, T(0));
                else
                  fillColumnRow(p, xg + c * p.inPlane, p.taps[0][d],
                                p.taps[1][h], p.taps[2][w], segments, dst);
              }
        gemm<T>(p.perGroupOut, count, p.columnRows, wg, p.columnRows, columns,
                count, yg + first, p.outPlane, T(1));
      }
    }
}

} // namespace

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

namespace {

template <typename T>
void runConvolution(const WindowPlan &p, const T *input, const T *weight,
                    T *output) {
  switch (p.method) {
  case ConvMethod::Gemm:
    return convGemm(p, input, weight, output);
  case ConvMethod::Im2col:
    return convIm2col(p, input, weight, output);
  case ConvMethod::Depthwise:
    return runDepthwise(p, input, weight, output);
  case ConvMethod::Auto:
  case ConvMethod::Direct:
    return convDirect(p, input, weight, output);
  }
}

/// Why `method` cannot compute the convolution `p`, or "" when it can.
std::string methodProblem(const WindowPlan &p, ConvMethod method) {
  auto blas = [&](int64_t k) {
    return fitsBlasInt(p.perGroupOut) && fitsBlasInt(p.outPlane) &&
           fitsBlasInt(k);
  };
  switch (method) {
  case ConvMethod::Gemm:
    for (unsigned j = 0; j < kDims; ++j)
      if (p.kernel[j] != 1 || p.stride[j] != 1 || p.padLow[j] != 0 ||
          p.out[j] != p.in[j])
        return "needs a 1x1 kernel, stride 1 and no padding";
    return blas(p.perGroupIn) ? "" : "sizes exceed BLAS's 32-bit integers";
  case ConvMethod::Im2col:
    return blas(p.columnRows) ? "" : "sizes exceed BLAS's 32-bit integers";
  case ConvMethod::Depthwise: {
    if (p.perGroupIn != 1)
      return "needs one input channel per group";
    if (!depthwiseAvailable())
      return "needs a CPU with AVX2 and FMA";
    double planeBytes = static_cast<double>(p.in[0] * p.in[1]) *
                        static_cast<double>(p.paddedWidth) *
                        elementSize(p.type);
    if (planeBytes > static_cast<double>(kMaxDepthwisePlaneBytes))
      return "a padded channel would exceed " +
             std::to_string(kMaxDepthwisePlaneBytes >> 20) + " MiB";
    if (static_cast<double>(p.out[0] * p.out[1]) *
            static_cast<double>(p.taps[0].size() * p.taps[1].size()) >
        kMaxDepthwiseRowTaps)
      return "would list too many (output row, kernel row) pairs";
    return "";
  }
  case ConvMethod::Auto:
  case ConvMethod::Direct:
    return "";
  }
  return "";
}

ConvMethod chooseMethod(const WindowPlan &p) {
  // Measured by doppler-bench-window: one input channel per group has too
  // little reuse for a GEMM (K = the kernel volume, M = 1).
  if (p.perGroupIn == 1)
    return methodProblem(p, ConvMethod::Depthwise).empty()
               ? ConvMethod::Depthwise
               : ConvMethod::Direct;
  for (ConvMethod method : {ConvMethod::Gemm, ConvMethod::Im2col})
    if (methodProblem(p, method).empty())
      return method;
  return ConvMethod::Direct;
}

/// The depthwise method's table: for each output row, the padded input
/// rows and kernel rows it reads (forEachValidRow's visits).
void listDepthwiseRows(WindowPlan &p) {
  const int64_t kernelArea = p.kernel[1] * p.kernel[2];
  p.columnOffsets.clear();
  for (int64_t kw = 0; kw < p.kernel[2]; ++kw) {
    const int64_t column = kw * p.dilation[2];
    p.columnOffsets.push_back(column % p.stride[2] * p.phaseWidth +
                              column / p.stride[2]);
  }
  p.rowTapStart.assign(1, 0);
  for (int64_t od = 0; od < p.out[0]; ++od)
    for (int64_t oh = 0; oh < p.out[1]; ++oh) {
      forEachValidRow(p, od, oh, [&](int64_t kd, int64_t kh, int64_t row) {
        p.rowTaps.push_back(
            {row * p.paddedWidth, kd * kernelArea + kh * p.kernel[2]});
      });
      p.rowTapStart.push_back(static_cast<int64_t>(p.rowTaps.size()));
    }
}

Status checkType(ElementType type, const char *what) {
  if (type != ElementType::F32 && type != ElementType::F64)
    return Status::failure(std::string(what) + " on " +
                           std::string(elementTypeName(type)) +
                           " is not supported on the CPU (f32, f64 only)");
  return Status();
}

} // namespace

Result<ConvolutionKernel>
ConvolutionKernel::create(const Shape &inputShape, const Shape &weightShape,
                          int64_t groups, const WindowGeometry &geometry,
                          ElementType type, const ConvOptions &options) {
  if (Status status = checkType(type, "conv"); !status)
    return status;
  std::string error;
  std::optional<std::vector<int64_t>> shape = convolutionResultShape(
      inputShape, weightShape, groups, geometry, &error);
  if (!shape)
    return Status::failure("conv: " + error);
  auto plan = std::make_shared<WindowPlan>();
  plan->type = type;
  plan->outShape = std::move(*shape);
  normalise(*plan, inputShape, geometry);
  plan->filters = weightShape[0];
  plan->groups = groups;
  plan->perGroupIn = weightShape[1];
  plan->perGroupOut = plan->filters / groups;
  plan->columnRows = plan->perGroupIn * plan->kernelVolume;
  // A padded row holds every column the taps read, as `stride` phases
  // (CpuWindow.h): tap kw of output o reads column o * s + kw * dilation,
  // i.e. column o + kw * dilation / s of phase kw * dilation % s.
  plan->phaseWidth = plan->out[2] + (plan->kernel[2] - 1) *
                                        plan->dilation[2] / plan->stride[2];
  plan->paddedWidth = plan->stride[2] * plan->phaseWidth;
  const int64_t columnBytes =
      std::max<int64_t>(1, plan->columnRows) * elementSize(type);
  plan->blockPositions = std::clamp<int64_t>(
      static_cast<int64_t>(std::min<uint64_t>(options.im2colBlockBytes,
                                              uint64_t(1) << 40)) /
          columnBytes,
      1,
      std::max<int64_t>(1, plan->outPlane));
  for (unsigned j = 0; j < kDims; ++j) {
    plan->tapIndex[j].assign(plan->kernel[j], -1);
    for (size_t i = 0; i < plan->taps[j].size(); ++i)
      plan->tapIndex[j][plan->taps[j][i].tap] = static_cast<int64_t>(i);
  }
  ConvMethod method = options.method;
  if (method == ConvMethod::Auto) {
    method = chooseMethod(*plan);
  } else if (std::string problem = methodProblem(*plan, method);
             !problem.empty()) {
    return Status::failure("conv: the " + std::string(convMethodName(method)) +
                           " method " + problem);
  }
  plan->method = method;
  if (method == ConvMethod::Depthwise)
    listDepthwiseRows(*plan);
  return ConvolutionKernel(std::move(plan));
}

void ConvolutionKernel::run(const void *input, const void *weight,
                            void *output) const {
  const WindowPlan &p = *plan_;
  if (p.outputEmpty())
    return;
  if (p.columnRows == 0) { // No input channels: sums over nothing.
    fill(output, p.type, numElements(p.outShape), 0.0);
    return;
  }
  if (p.type == ElementType::F64)
    runConvolution(p, static_cast<const double *>(input),
                   static_cast<const double *>(weight),
                   static_cast<double *>(output));
  else
    runConvolution(p, static_cast<const float *>(input),
                   static_cast<const float *>(weight),
                   static_cast<float *>(output));
}

const Shape &ConvolutionKernel::outputShape() const { return plan_->outShape; }
ConvMethod ConvolutionKernel::method() const { return plan_->method; }

Result<PoolKernel> PoolKernel::create(PoolKind kind, const Shape &inputShape,
                                      const WindowGeometry &geometry,
                                      ElementType type) {
  if (Status status = checkType(type, "pool"); !status)
    return status;
  std::string error;
  std::optional<std::vector<int64_t>> shape =
      poolResultShape(inputShape, geometry, &error);
  if (!shape)
    return Status::failure("pool: " + error);
  auto plan = std::make_shared<WindowPlan>();
  plan->type = type;
  plan->isPool = true;
  plan->pool = kind;
  plan->outShape = std::move(*shape);
  normalise(*plan, inputShape, geometry);
  return PoolKernel(std::move(plan));
}

void PoolKernel::run(const void *input, void *output) const {
  const WindowPlan &p = *plan_;
  if (p.outputEmpty())
    return;
  if (p.type == ElementType::F64)
    poolDirect(p, static_cast<const double *>(input),
               static_cast<double *>(output));
  else
    poolDirect(p, static_cast<const float *>(input),
               static_cast<float *>(output));
}

const Shape &PoolKernel::outputShape() const { return plan_->outShape; }

} // namespace doppler::runtime::cpu
