//===- CheckedSizeTest.cpp - Checked element counts and byte sizes --------===//

#include "Doppler/Support/CheckedSize.h"
#include "Doppler/Support/EinsumSpec.h"

#include <gtest/gtest.h>

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

} // namespace
