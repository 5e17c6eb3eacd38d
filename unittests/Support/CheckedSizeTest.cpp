//===- CheckedSizeTest.cpp - Checked sizes and capped file reads ----------===//

#include "Doppler/Support/CheckedSize.h"
#include "Doppler/Support/EinsumSpec.h"
#include "Doppler/Support/ReadFile.h"

#include <cstdio>
#include <fstream>
#include <gtest/gtest.h>
#include <unistd.h>

using namespace doppler;

namespace {

constexpr int64_t k2to62 = int64_t(1) << 62;

TEST(CheckedSize, CountsOrdinaryShapes) {
  EXPECT_EQ(checkedElementCount({}), 1);
  EXPECT_EQ(checkedElementCount({2, 3, 4}), 24);
  EXPECT_EQ(checkedElementCount({0, 5}), 0);
  EXPECT_EQ(checkedByteSize({1024, 1024}, 4), 4 << 20);
  EXPECT_EQ(checkedByteSize(0, 8), 0);
}

TEST(CheckedSize, AcceptsExactlyTheCap) {
  EXPECT_EQ(checkedElementCount({k2to62}), k2to62);
  EXPECT_EQ(checkedElementCount({int64_t(1) << 31, int64_t(1) << 31}), k2to62);
  EXPECT_EQ(checkedByteSize({int64_t(1) << 60}, 4), k2to62);
  EXPECT_EQ(checkedByteSize(kMaxCheckedSize, 1), kMaxCheckedSize);
}

TEST(CheckedSize, RefusesWhatWouldWrap) {
  // The shapes: each wraps to a small, zero or negative int64_t.
  EXPECT_FALSE(checkedElementCount({INT64_MAX, 2}));
  EXPECT_FALSE(checkedElementCount({k2to62, 4}));
  EXPECT_FALSE(checkedElementCount({k2to62 + 1}));
  EXPECT_FALSE(checkedElementCount({int64_t(1) << 32, int64_t(1) << 32}));
  EXPECT_FALSE(checkedByteSize({k2to62}, 4));
  EXPECT_FALSE(checkedByteSize({int64_t(1) << 61}, 4));
  EXPECT_FALSE(checkedByteSize(INT64_MAX, 2));
  // A zero extent does not hide an overflow-free but negative extent.
  EXPECT_FALSE(checkedElementCount({0, -1}));
  EXPECT_FALSE(checkedByteSize(-1, 4));
  EXPECT_FALSE(checkedByteSize(4, -1));
  // Zero elements is an empty tensor, whatever the other extents.
  EXPECT_EQ(checkedElementCount({INT64_MAX, 0, INT64_MAX}), 0);
}

TEST(CheckedSize, ExplainsTheProblem) {
  EXPECT_EQ(checkedSizeProblem({4, 4}, 4), "");
  EXPECT_EQ(checkedSizeProblem({INT64_MAX, 2}, 4),
            "has 1.84e+19 elements, more than the limit of 2^62 (4.61e+18)");
  EXPECT_EQ(checkedSizeProblem({k2to62}, 4),
            "takes 1.84e+19 bytes, more than the limit of 2^62 (4.61e+18)");
  EXPECT_EQ(checkedSizeProblem({3, -2}, 4), "has a negative extent (-2)");
}

TEST(CheckedSize, BoundsTheEinsumIterationSpace) {
  // Each operand has 2^42 elements; the iteration space has 2^63 points.
  EinsumSpec spec = *EinsumSpec::parse("ij,jk->ik");
  int64_t n = int64_t(1) << 21;
  std::string error;
  EXPECT_FALSE(checkEinsumSignature(spec, JoinKind::Mul, std::nullopt,
                                    AggKind::Add, {{n, n}, {n, n}}, &error));
  EXPECT_EQ(error, "spec 'ij,jk->ik' iterates over 9.22e+18 points, more "
                   "than the limit of 2^62 (4.61e+18)");
  EXPECT_TRUE(checkEinsumSignature(spec, JoinKind::Mul, std::nullopt,
                                   AggKind::Add, {{n, n}, {n, 1024}}));
}

TEST(CheckedSize, WorkEstimatesStayPositivePastInt64) {
  // estimateEinsumWork multiplies in doubles: no wrap to a negative count.
  EinsumSpec spec = *EinsumSpec::parse("ij,jk->ik");
  std::optional<IndexSizes> sizes = inferIndexSizes(
      spec, {{int64_t(1) << 31, int64_t(1) << 31},
             {int64_t(1) << 31, int64_t(1) << 31}});
  ASSERT_TRUE(sizes);
  EinsumWork work =
      estimateEinsumWork(spec, *sizes, JoinKind::Mul, true, 4);
  EXPECT_DOUBLE_EQ(work.flops, 2.0 * 0x1p93);
}

/// A file of `bytes` bytes under the test's temporary directory.
std::string makeFile(const std::string &name, size_t bytes) {
  std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream out(path, std::ios::binary);
  out << std::string(bytes, 'x');
  return path;
}

TEST(ReadFile, ReadsUpToTheLimit) {
  std::string path = makeFile("capped-exact.txt", 1000);
  std::string error;
  std::optional<std::string> text = readFileCapped(path, &error, 1000);
  ASSERT_TRUE(text) << error;
  EXPECT_EQ(text->size(), 1000u);
  std::remove(path.c_str());
}

TEST(ReadFile, RefusesALargerFile) {
  std::string path = makeFile("capped-over.txt", 1001);
  std::string error;
  EXPECT_FALSE(readFileCapped(path, &error, 1000));
  EXPECT_EQ(error, "'" + path +
                       "' is larger than 1000 bytes (the input size limit; "
                       "DOPPLER_MAX_INPUT_BYTES raises it)");
  std::remove(path.c_str());
}

TEST(ReadFile, StopsOnAnEndlessFile) {
  std::string error;
  EXPECT_FALSE(readFileCapped("/dev/zero", &error, 1 << 20));
  EXPECT_NE(error.find("is larger than 1048576 bytes"), std::string::npos);
}

TEST(ReadFile, ReportsAMissingFile) {
  std::string error;
  EXPECT_FALSE(readFileCapped("/nonexistent/doppler-input", &error));
  EXPECT_EQ(error, "cannot open '/nonexistent/doppler-input'");
}

TEST(ReadFile, TheLimitComesFromTheEnvironment) {
  ASSERT_EQ(unsetenv("DOPPLER_MAX_INPUT_BYTES"), 0);
  EXPECT_EQ(maxInputFileBytes(), kDefaultMaxInputBytes);
  ASSERT_EQ(setenv("DOPPLER_MAX_INPUT_BYTES", "4096", 1), 0);
  EXPECT_EQ(maxInputFileBytes(), 4096);
  // Not a positive count: the default, not 0 (which would refuse every file).
  ASSERT_EQ(setenv("DOPPLER_MAX_INPUT_BYTES", "0", 1), 0);
  EXPECT_EQ(maxInputFileBytes(), kDefaultMaxInputBytes);
  ASSERT_EQ(setenv("DOPPLER_MAX_INPUT_BYTES", "lots", 1), 0);
  EXPECT_EQ(maxInputFileBytes(), kDefaultMaxInputBytes);
  ASSERT_EQ(unsetenv("DOPPLER_MAX_INPUT_BYTES"), 0);
}

} // namespace
