//===- WindowTest.cpp - Sliding-window geometry and reference loops -------===//

#include "Doppler/Support/Window.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace doppler;

namespace {

WindowGeometry geometry1d(int64_t kernel, int64_t stride, int64_t dilation,
                          int64_t low, int64_t high) {
  return WindowGeometry{{kernel}, {stride}, {dilation}, {low}, {high}};
}

TEST(WindowTest, OutputExtentsFollowTheFormula) {
  WindowGeometry g = geometry1d(3, 2, 2, 2, 1);
  // (9 + 2 + 1 - 2 * 2 - 1) / 2 + 1 = 4.
  EXPECT_EQ(g.outputExtent(0, 9), 4);
  // Reach 5 on a padded extent of 4: empty.
  EXPECT_EQ(g.outputExtent(0, 1), std::nullopt);
  std::string error;
  EXPECT_FALSE(g.outputSpatial({1}, &error));
  EXPECT_NE(error.find("shorter than the kernel's reach 5"), std::string::npos);
}

TEST(WindowTest, ValidateNamesTheField) {
  std::string error;
  WindowGeometry g = geometry1d(3, 1, 1, 0, 0);
  EXPECT_TRUE(g.validate(&error));
  g.strides = {0};
  EXPECT_FALSE(g.validate(&error));
  EXPECT_NE(error.find("strides"), std::string::npos);
  g = geometry1d(3, 1, 1, 0, 0);
  g.padHigh = {0, 0};
  EXPECT_FALSE(g.validate(&error));
  EXPECT_NE(error.find("padding (high) has 2 entries for 1 spatial dims"),
            std::string::npos);
  g = WindowGeometry{};
  EXPECT_FALSE(g.validate(&error));
}

TEST(WindowTest, ConvolutionShapesAndErrors) {
  WindowGeometry g{{3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}};
  EXPECT_EQ(convolutionResultShape({2, 6, 8, 8}, {4, 3, 3, 3}, 2, g),
            (std::vector<int64_t>{2, 4, 8, 8}));
  std::string error;
  EXPECT_FALSE(convolutionResultShape({2, 6, 8, 8}, {4, 6, 3, 3}, 2, g, &error));
  EXPECT_NE(error.find("3 input channels per group"), std::string::npos);
  EXPECT_FALSE(convolutionResultShape({2, 6, 8, 8}, {4, 6, 3, 2}, 1, g, &error));
  EXPECT_NE(error.find("does not match the kernel"), std::string::npos);
  EXPECT_FALSE(convolutionResultShape({2, 6, 8}, {4, 6, 3}, 1, g, &error));
  EXPECT_NE(error.find("rank 4"), std::string::npos);
  EXPECT_FALSE(convolutionResultShape({int64_t(1) << 40, 1 << 30, 8, 8},
                                      {4, 1 << 30, 3, 3}, 1, g, &error));
  EXPECT_NE(error.find("bytes"), std::string::npos);
  // N F O^2 (C/G) K^2 multiply-adds.
  EXPECT_EQ(convolutionMultiplyAdds({2, 6, 8, 8}, {4, 3, 3, 3}, 2,
                                    {2, 4, 8, 8}),
            2.0 * 4 * 64 * 3 * 9);
}

TEST(WindowTest, Convolution1dWithStrideDilationAndPadding) {
  // x = 1..6, w = [1, 10], stride 2, dilation 2, padding 1 low, 2 high:
  // padded [0, 1, 2, 3, 4, 5, 6, 0, 0]; outputs at 0, 2, 4, 6 read
  // (p[o], p[o + 2]): 0 + 10*2, 2 + 10*4, 4 + 10*6, 6 + 10*0.
  WindowGeometry g = geometry1d(2, 2, 2, 1, 2);
  std::vector<int64_t> in = {1, 1, 6}, w = {1, 1, 2};
  auto out = convolutionResultShape(in, w, 1, g);
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, (std::vector<int64_t>{1, 1, 4}));
  std::vector<double> x = {1, 2, 3, 4, 5, 6}, k = {1, 10}, y(4);
  convolutionReference(x.data(), in, k.data(), w, 1, g, y.data(), *out);
  EXPECT_EQ(y, (std::vector<double>{20, 42, 64, 6}));
}

TEST(WindowTest, GroupedConvolutionReadsItsGroupOnly) {
  // 2 groups: channel 0 -> outputs 0, 1; channel 1 -> outputs 2, 3.
  WindowGeometry g = geometry1d(1, 1, 1, 0, 0);
  std::vector<int64_t> in = {1, 2, 2}, w = {4, 1, 1}, out = {1, 4, 2};
  std::vector<double> x = {1, 2, 100, 200}, k = {1, 2, 3, 4}, y(8);
  convolutionReference(x.data(), in, k.data(), w, 2, g, y.data(), out);
  EXPECT_EQ(y, (std::vector<double>{1, 2, 2, 4, 300, 600, 400, 800}));
}

TEST(WindowTest, Convolution2dSumsChannelsAndTaps) {
  // All-ones 3x3 kernel over 2 channels of ones, padding 1: the number of
  // taps inside the input, times 2 channels.
  WindowGeometry g{{3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}};
  std::vector<int64_t> in = {1, 2, 3, 3}, w = {1, 2, 3, 3}, out = {1, 1, 3, 3};
  std::vector<double> x(18, 1.0), k(18, 1.0), y(9);
  convolutionReference(x.data(), in, k.data(), w, 1, g, y.data(), out);
  EXPECT_EQ(y, (std::vector<double>{8, 12, 8, 12, 18, 12, 8, 12, 8}));
}

TEST(WindowTest, PoolingPadsWithTheRightValue) {
  WindowGeometry g = geometry1d(3, 2, 1, 1, 1);
  std::vector<int64_t> in = {1, 1, 5}, out = {1, 1, 3};
  std::vector<double> x = {-1, -2, -3, -4, -5}, y(3);
  poolReference(PoolKind::Max, x.data(), in, g, y.data(), out);
  // Max padding is minus infinity, so a window of negatives keeps them.
  EXPECT_EQ(y, (std::vector<double>{-1, -2, -4}));
  poolReference(PoolKind::Avg, x.data(), in, g, y.data(), out);
  // Average divides by the kernel's volume, padding (zeros) included.
  EXPECT_DOUBLE_EQ(y[0], -3.0 / 3);
  EXPECT_DOUBLE_EQ(y[1], -9.0 / 3);
  EXPECT_DOUBLE_EQ(y[2], -9.0 / 3);
  x[3] = std::numeric_limits<double>::quiet_NaN();
  poolReference(PoolKind::Max, x.data(), in, g, y.data(), out);
  EXPECT_EQ(y[0], -1);
  EXPECT_TRUE(std::isnan(y[1]) && std::isnan(y[2]));
}

TEST(WindowTest, PoolKindNames) {
  for (PoolKind kind : {PoolKind::Max, PoolKind::Avg})
    EXPECT_EQ(parsePoolKind(poolKindName(kind)), kind);
  EXPECT_EQ(parsePoolKind("min"), std::nullopt);
}

} // namespace
