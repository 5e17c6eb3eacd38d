//===- WindowKernelTests.cpp - CPU convolution and pooling kernels --------===//
//
// ConvolutionKernel and PoolKernel (CpuWindow.cpp) against the exact double
// loops of Doppler/Support/Window.h (convolutionReference, poolReference)
// on seeded random data: 1-d, 2-d and 3-d windows, groups 1, grouped,
// depthwise (with a channel multiplier), strides, dilations, asymmetric
// padding, windows wholly in the padding, batch > 1, f32 and f64, and every
// method that can compute each case (the automatic choice, im2col with
// several block sizes, the 1x1 GEMM, the AVX2 depthwise loops, the direct
// loops).
//
// A conv output is compared with |got - ref| <= tol * sum |x| |w| over its
// window (the reference run on |x| and |w|): 1e-5 for f32 (the sums'
// order differs from the reference's), 1e-12 for f64. Max pooling must be
// exact (NaN where the reference has NaN); avg pooling within 1e-6 (f32)
// and 1e-14 (f64) relative.
//
//===----------------------------------------------------------------------===//

#include "doppler/runtime/CpuKernels.h"

#include "Doppler/Support/Window.h"
#include "WindowTestSupport.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace doppler;
using namespace doppler::runtime;
using namespace doppler::runtime::test;
using namespace doppler::runtime::cpu;

namespace {

struct ConvCase {
  std::string name;
  Shape input, weight;
  int64_t groups;
  WindowGeometry geometry;
};

std::vector<ConvCase> convCases() {
  return {
      {"1d-strided-dilated", {2, 3, 17}, {4, 3, 3}, 1,
       geometry({3}, {2}, {2}, {1}, {2})},
      {"1d-depthwise", {1, 4, 40}, {4, 1, 5}, 4,
       geometry({5}, {1}, {1}, {2}, {2})},
      {"2d-asymmetric", {2, 4, 9, 11}, {6, 4, 3, 2}, 1,
       geometry({3, 2}, {1, 2}, {2, 1}, {1, 0}, {2, 1})},
      {"2d-grouped", {1, 6, 8, 8}, {4, 3, 3, 3}, 2,
       geometry({3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1})},
      {"2d-grouped-strided", {2, 8, 10, 7}, {12, 2, 3, 3}, 4,
       geometry({3, 3}, {2, 1}, {1, 2}, {0, 2}, {1, 0})},
      {"2d-depthwise", {2, 5, 12, 19}, {5, 1, 3, 3}, 5,
       geometry({3, 3}, {1, 1}, {1, 1}, {1, 0}, {2, 1})},
      {"2d-depthwise-dilated", {1, 3, 14, 21}, {3, 1, 3, 3}, 3,
       geometry({3, 3}, {1, 1}, {2, 2}, {2, 2}, {2, 2})},
      {"2d-depthwise-multiplier", {1, 3, 10, 10}, {6, 1, 5, 5}, 3,
       geometry({5, 5}, {1, 1}, {1, 1}, {2, 2}, {2, 2})},
      {"2d-depthwise-7x7-wide", {1, 2, 9, 75}, {2, 1, 7, 7}, 2,
       geometry({7, 7}, {1, 1}, {1, 1}, {3, 3}, {3, 3})},
      {"2d-depthwise-strided", {1, 4, 11, 11}, {4, 1, 3, 3}, 4,
       geometry({3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1})},
      // Strided depthwise rows are stored as phases: strides 2 and 3,
      // dilated taps whose offsets cross phases, rows wider than one
      // register block (8 vectors), asymmetric padding, a multiplier.
      {"1d-depthwise-stride-3-dilated", {2, 3, 50}, {3, 1, 5}, 3,
       geometry({5}, {3}, {2}, {4}, {1})},
      {"2d-depthwise-5x5-stride-2-wide", {1, 2, 13, 150}, {4, 1, 5, 5}, 2,
       geometry({5, 5}, {2, 2}, {1, 1}, {2, 1}, {1, 2})},
      {"2d-depthwise-7x7-stride-2", {1, 3, 9, 23}, {3, 1, 7, 7}, 3,
       geometry({7, 7}, {2, 2}, {1, 1}, {3, 3}, {3, 3})},
      {"2d-depthwise-3x3-stride-2-odd-width", {1, 3, 7, 67}, {3, 1, 3, 3}, 3,
       geometry({3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1})},
      {"2d-depthwise-stride-2-unpadded", {1, 2, 6, 40}, {2, 1, 3, 3}, 2,
       geometry({3, 3}, {2, 2}, {1, 1}, {0, 0}, {0, 0})},
      {"3d-depthwise-strided", {1, 2, 5, 6, 17}, {2, 1, 3, 3, 3}, 2,
       geometry({3, 3, 3}, {2, 1, 2}, {1, 1, 1}, {1, 1, 1}, {1, 1, 0})},
      {"2d-pointwise", {2, 8, 5, 7}, {6, 8, 1, 1}, 1,
       geometry({1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0})},
      {"2d-pointwise-grouped", {1, 8, 4, 9}, {6, 4, 1, 1}, 2,
       geometry({1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0})},
      {"2d-1x1-stride-2", {1, 6, 9, 8}, {5, 6, 1, 1}, 1,
       geometry({1, 1}, {2, 2}, {1, 1}, {0, 0}, {0, 0})},
      {"2d-all-padding-windows", {1, 2, 3, 3}, {2, 2, 2, 2}, 1,
       geometry({2, 2}, {1, 2}, {1, 1}, {3, 3}, {2, 4})},
      {"2d-kernel-wider-than-input", {1, 2, 4, 3}, {3, 2, 3, 5}, 1,
       geometry({3, 5}, {1, 1}, {1, 1}, {1, 3}, {1, 3})},
      {"3d", {1, 2, 5, 6, 7}, {3, 2, 2, 3, 2}, 1,
       geometry({2, 3, 2}, {1, 2, 1}, {1, 1, 2}, {1, 0, 1}, {0, 2, 1})},
      {"3d-depthwise", {2, 3, 4, 5, 9}, {3, 1, 3, 3, 3}, 3,
       geometry({3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1})},
      {"3d-grouped", {1, 4, 4, 4, 4}, {4, 2, 1, 3, 3}, 2,
       geometry({1, 3, 3}, {2, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 0})},
  };
}

std::vector<double> randomValues(int64_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-1, 1);
  std::vector<double> values(count);
  for (double &v : values)
    v = dist(rng);
  return values;
}

/// `values` in the element type T, and back rounded (the reference's
/// input).
template <typename T>
std::vector<T> rounded(std::vector<double> &values) {
  std::vector<T> typed(values.begin(), values.end());
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<double>(typed[i]);
  return typed;
}

std::vector<double> absolute(std::vector<double> values) {
  for (double &v : values)
    v = std::fabs(v);
  return values;
}

/// Runs `c` with `options` in type T and compares with the reference;
/// returns false (after reporting) when `options.method` cannot run it.
template <typename T>
bool checkConvolution(const ConvCase &c, const ConvOptions &options,
                      double tolerance, uint32_t seed) {
  constexpr ElementType type =
      std::is_same_v<T, float> ? ElementType::F32 : ElementType::F64;
  Result<ConvolutionKernel> kernel = ConvolutionKernel::create(
      c.input, c.weight, c.groups, c.geometry, type, options);
  if (!kernel)
    return false;
  std::vector<double> x = randomValues(numElements(c.input), seed);
  std::vector<double> w = randomValues(numElements(c.weight), seed + 1);
  std::vector<T> xt = rounded<T>(x), wt = rounded<T>(w);
  const Shape &outShape = kernel->outputShape();
  std::vector<double> ref(numElements(outShape)), bound(ref.size());
  convolutionReference(x.data(), c.input, w.data(), c.weight, c.groups,
                       c.geometry, ref.data(), outShape);
  std::vector<double> ax = absolute(x), aw = absolute(w);
  convolutionReference(ax.data(), c.input, aw.data(), c.weight, c.groups,
                       c.geometry, bound.data(), outShape);
  // Poisoned: every output must be written.
  std::vector<T> out(ref.size(), std::numeric_limits<T>::quiet_NaN());
  kernel->run(xt.data(), wt.data(), out.data());
  int failures = 0;
  for (size_t i = 0; i < ref.size() && failures < 5; ++i) {
    double error = std::fabs(static_cast<double>(out[i]) - ref[i]);
    if (!(error <= tolerance * bound[i] + 1e-300)) {
      ADD_FAILURE() << c.name << " (" << convMethodName(kernel->method())
                    << ", " << elementTypeName(type) << ") output " << i
                    << ": got " << out[i] << ", expected " << ref[i]
                    << " (bound " << bound[i] << ")";
      ++failures;
    }
  }
  return true;
}

std::vector<ConvOptions> everyMethod() {
  std::vector<ConvOptions> all;
  for (ConvMethod method : {ConvMethod::Auto, ConvMethod::Gemm,
                            ConvMethod::Im2col, ConvMethod::Depthwise,
                            ConvMethod::Direct}) {
    ConvOptions options;
    options.method = method;
    all.push_back(options);
  }
  // Im2col blocks that split output rows (one position's column when the
  // budget is below it) and that hold a few rows.
  for (uint64_t bytes : {uint64_t(1), uint64_t(700), uint64_t(5000)}) {
    ConvOptions options;
    options.method = ConvMethod::Im2col;
    options.im2colBlockBytes = bytes;
    all.push_back(options);
  }
  return all;
}

TEST(WindowKernels, ConvolutionMatchesTheReferenceWithEveryMethod) {
  uint32_t seed = 11;
  for (const ConvCase &c : convCases()) {
    int ran = 0;
    for (const ConvOptions &options : everyMethod()) {
      ran += checkConvolution<float>(c, options, 1e-5, seed);
      ran += checkConvolution<double>(c, options, 1e-12, seed);
    }
    // Auto, im2col (4 block sizes) and direct at least, in both types.
    EXPECT_GE(ran, 12) << c.name;
    seed += 2;
  }
}

TEST(WindowKernels, AutomaticChoiceOfMethod) {
  auto chosen = [](const ConvCase &c) {
    Result<ConvolutionKernel> kernel = ConvolutionKernel::create(
        c.input, c.weight, c.groups, c.geometry, ElementType::F32);
    EXPECT_TRUE(kernel) << kernel.message();
    return kernel ? std::string(convMethodName(kernel->method())) : "";
  };
  std::vector<ConvCase> cases = convCases();
  auto find = [&](const std::string &name) {
    for (const ConvCase &c : cases)
      if (c.name == name)
        return c;
    ADD_FAILURE() << name;
    return cases[0];
  };
  EXPECT_EQ(chosen(find("2d-asymmetric")), "im2col");
  EXPECT_EQ(chosen(find("2d-pointwise")), "gemm");
  EXPECT_EQ(chosen(find("2d-1x1-stride-2")), "im2col");
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    EXPECT_EQ(chosen(find("2d-depthwise")), "depthwise");
    EXPECT_EQ(chosen(find("2d-depthwise-strided")), "depthwise");
    EXPECT_EQ(chosen(find("2d-depthwise-5x5-stride-2-wide")), "depthwise");
  } else {
    EXPECT_EQ(chosen(find("2d-depthwise-strided")), "direct");
  }
}

TEST(WindowKernels, ExplicitMethodsThatDoNotApplyAreRefused) {
  ConvCase c = convCases()[2]; // 2d-asymmetric: 3x2 kernel, 4 channels.
  ConvOptions gemm, depthwise;
  gemm.method = ConvMethod::Gemm;
  depthwise.method = ConvMethod::Depthwise;
  Result<ConvolutionKernel> a = ConvolutionKernel::create(
      c.input, c.weight, c.groups, c.geometry, ElementType::F32, gemm);
  ASSERT_FALSE(a);
  EXPECT_NE(a.message().find("the gemm method needs a 1x1 kernel"),
            std::string::npos)
      << a.message();
  Result<ConvolutionKernel> b = ConvolutionKernel::create(
      c.input, c.weight, c.groups, c.geometry, ElementType::F32, depthwise);
  ASSERT_FALSE(b);
  EXPECT_NE(b.message().find("one input channel per group"),
            std::string::npos);
  Result<ConvolutionKernel> f16 = ConvolutionKernel::create(
      c.input, c.weight, c.groups, c.geometry, ElementType::F16);
  ASSERT_FALSE(f16);
  EXPECT_EQ(f16.message(),
            "conv on f16 is not supported on the CPU (f32, f64 only)");
  Result<ConvolutionKernel> bad = ConvolutionKernel::create(
      c.input, {6, 3, 3, 2}, c.groups, c.geometry, ElementType::F32);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.message().rfind("conv: weight [6, 3, 3, 2] must have 4 input "
                                "channels per group",
                                0),
            0u)
      << bad.message();
}

TEST(WindowKernels, EmptyChannelsGiveZeros) {
  // No input channels: every output sums over nothing.
  Result<ConvolutionKernel> kernel = ConvolutionKernel::create(
      {1, 0, 4}, {3, 0, 2}, 1, geometry({2}, {1}, {1}, {1}, {0}),
      ElementType::F32);
  ASSERT_TRUE(kernel) << kernel.message();
  ASSERT_EQ(kernel->outputShape(), (Shape{1, 3, 4}));
  std::vector<float> out(12, 7.0f);
  kernel->run(nullptr, nullptr, out.data());
  EXPECT_EQ(out, std::vector<float>(12, 0.0f));
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

struct PoolCase {
  std::string name;
  Shape input;
  WindowGeometry geometry;
};

std::vector<PoolCase> poolCases() {
  return {
      {"1d", {2, 3, 19}, geometry({3}, {2}, {1}, {1}, {1})},
      {"1d-dilated", {1, 2, 16}, geometry({4}, {3}, {2}, {2}, {3})},
      {"2d-resnet", {2, 4, 12, 12}, geometry({3, 3}, {2, 2}, {1, 1}, {1, 1},
                                              {1, 1})},
      {"2d-asymmetric", {1, 3, 7, 10},
       geometry({2, 3}, {1, 2}, {2, 1}, {0, 2}, {3, 1})},
      {"2d-all-padding-windows", {1, 2, 2, 2},
       geometry({2, 2}, {1, 1}, {1, 1}, {3, 2}, {3, 2})},
      {"2d-global", {2, 3, 5, 6}, geometry({5, 6}, {1, 1}, {1, 1}, {0, 0},
                                           {0, 0})},
      {"3d", {1, 2, 5, 6, 7},
       geometry({2, 3, 2}, {2, 1, 3}, {1, 2, 1}, {1, 1, 0}, {0, 2, 1})},
  };
}

template <typename T>
void checkPool(PoolKind kind, const PoolCase &c, uint32_t seed, bool nans) {
  constexpr ElementType type =
      std::is_same_v<T, float> ? ElementType::F32 : ElementType::F64;
  Result<PoolKernel> kernel = PoolKernel::create(kind, c.input, c.geometry,
                                                 type);
  ASSERT_TRUE(kernel) << c.name << ": " << kernel.message();
  std::vector<double> x = randomValues(numElements(c.input), seed);
  if (nans) // A few NaNs (and infinities): max must propagate NaN.
    for (size_t i = 0; i < x.size(); i += 7)
      x[i] = i % 3 ? std::numeric_limits<double>::quiet_NaN()
                   : -std::numeric_limits<double>::infinity();
  std::vector<T> xt = rounded<T>(x);
  const Shape &outShape = kernel->outputShape();
  std::vector<double> ref(numElements(outShape));
  poolReference(kind, x.data(), c.input, c.geometry, ref.data(), outShape);
  std::vector<T> out(ref.size(), T(12345));
  kernel->run(xt.data(), out.data());
  const double tolerance = std::is_same_v<T, float> ? 1e-6 : 1e-14;
  for (size_t i = 0; i < ref.size(); ++i) {
    double got = static_cast<double>(out[i]);
    if (std::isnan(ref[i])) {
      EXPECT_TRUE(std::isnan(got)) << c.name << " output " << i;
    } else if (kind == PoolKind::Max || std::isinf(ref[i])) {
      EXPECT_EQ(got, ref[i]) << c.name << " output " << i;
    } else {
      EXPECT_LE(std::fabs(got - ref[i]), tolerance * (1 + std::fabs(ref[i])))
          << c.name << " output " << i;
    }
  }
}

TEST(WindowKernels, PoolingMatchesTheReference) {
  uint32_t seed = 101;
  for (const PoolCase &c : poolCases())
    for (PoolKind kind : {PoolKind::Max, PoolKind::Avg})
      for (bool nans : {false, true}) {
        checkPool<float>(kind, c, seed, nans);
        checkPool<double>(kind, c, seed, nans);
        ++seed;
      }
}

TEST(WindowKernels, MaxPoolOfPaddingOnlyWindowsIsMinusInfinity) {
  // Padding 3 before a 2-wide kernel: the first windows see no input.
  Result<PoolKernel> kernel =
      PoolKernel::create(PoolKind::Max, {1, 1, 2},
                         geometry({2}, {1}, {1}, {3}, {0}), ElementType::F32);
  ASSERT_TRUE(kernel);
  ASSERT_EQ(kernel->outputShape(), (Shape{1, 1, 4}));
  float x[2] = {5, -2};
  float out[4];
  kernel->run(x, out);
  EXPECT_EQ(out[0], -std::numeric_limits<float>::infinity());
  EXPECT_EQ(out[1], -std::numeric_limits<float>::infinity());
  EXPECT_EQ(out[2], 5.0f);
  EXPECT_EQ(out[3], 5.0f);
}

TEST(WindowKernels, ResultsPastTheSizeCapAreRefused) {
  // Padding alone makes a 2^96-element result out of one element
  // (poolResultShape checked only the input until this test).
  const int64_t big = int64_t(1) << 31;
  WindowGeometry g = geometry({1, 1, 1}, {1, 1, 1}, {1, 1, 1},
                              {big, big, big}, {big, big, big});
  Result<PoolKernel> pool =
      PoolKernel::create(PoolKind::Max, {1, 1, 1, 1, 1}, g, ElementType::F32);
  ASSERT_FALSE(pool);
  EXPECT_EQ(pool.message().rfind("pool: result [1, 1, 4294967297, "
                                 "4294967297, 4294967297] has a negative "
                                 "extent or more than",
                                 0),
            0u)
      << pool.message();
}

TEST(WindowKernels, HugeKernelsCostOnlyTheTapsThatReachTheInput) {
  // A 2^31-tap window slid by 2^31 over 4 elements: two outputs, the first
  // reaching x0, the second x1..x3. Enumerating every tap would take
  // seconds (the reference would); the kernel lists the few that matter.
  const int64_t big = int64_t(1) << 31;
  WindowGeometry g = geometry({big}, {big}, {1}, {big - 1}, {big});
  auto start = std::chrono::steady_clock::now();
  Result<PoolKernel> max =
      PoolKernel::create(PoolKind::Max, {1, 1, 4}, g, ElementType::F64);
  Result<PoolKernel> avg =
      PoolKernel::create(PoolKind::Avg, {1, 1, 4}, g, ElementType::F64);
  ASSERT_TRUE(max) << max.message();
  ASSERT_TRUE(avg) << avg.message();
  ASSERT_EQ(max->outputShape(), (Shape{1, 1, 2}));
  double x[4] = {1.5, -3, 8, 2};
  double out[2];
  max->run(x, out);
  EXPECT_EQ(out[0], 1.5);
  EXPECT_EQ(out[1], 8.0);
  avg->run(x, out);
  EXPECT_EQ(out[0], 1.5 / double(big));
  EXPECT_EQ(out[1], 7.0 / double(big));
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                          start)
                .count(),
            1.0);
}

} // namespace
