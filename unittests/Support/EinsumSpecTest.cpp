//===- EinsumSpecTest.cpp - Spec parsing, shapes and work ----------------===//

#include "Doppler/Support/EinsumSpec.h"

#include <cmath>
#include <gtest/gtest.h>

using namespace doppler;

namespace {

std::string parseError(const char *text) {
  std::string error;
  EXPECT_FALSE(EinsumSpec::parse(text, &error).has_value()) << text;
  return error;
}

TEST(EinsumSpec, ParsesBatchedMatmul) {
  auto spec = EinsumSpec::parse("bij,bjk->bik");
  ASSERT_TRUE(spec);
  ASSERT_EQ(spec->numInputs(), 2u);
  EXPECT_EQ(spec->inputs[0], "bij");
  EXPECT_EQ(spec->inputs[1], "bjk");
  EXPECT_EQ(spec->output, "bik");
  EXPECT_EQ(spec->allIndices(), "bijk");
  EXPECT_EQ(spec->contractedIndices(), "j");
  EXPECT_TRUE(spec->contracts());
  EXPECT_FALSE(spec->isIdentity());
  EXPECT_EQ(spec->str(), "bij,bjk->bik");
}

TEST(EinsumSpec, ScalarsAndIdentity) {
  auto reduce = EinsumSpec::parse("ij->");
  ASSERT_TRUE(reduce);
  EXPECT_EQ(reduce->output, "");
  EXPECT_EQ(reduce->contractedIndices(), "ij");
  auto identity = EinsumSpec::parse("ij->ij");
  ASSERT_TRUE(identity);
  EXPECT_TRUE(identity->isIdentity());
  EXPECT_FALSE(EinsumSpec::parse("ij->ji")->isIdentity());
  auto scalarIn = EinsumSpec::parse(",ij->ij");
  ASSERT_TRUE(scalarIn);
  EXPECT_EQ(scalarIn->inputs[0], "");
}

TEST(EinsumSpec, RejectsMalformedSpecs) {
  EXPECT_NE(parseError("ij,jk").find("no '->'"), std::string::npos);
  EXPECT_NE(parseError("ij->j->i").find("more than one"), std::string::npos);
  EXPECT_NE(parseError("i1->i").find("invalid character '1'"),
            std::string::npos);
  EXPECT_NE(parseError("ii->i").find("index 'i' repeated in input 0"),
            std::string::npos);
  EXPECT_NE(parseError("ij->ii").find("repeated in the output"),
            std::string::npos);
  EXPECT_NE(parseError("ij->k").find("output index 'k' appears in no input"),
            std::string::npos);
  EXPECT_NE(parseError("i j->ij").find("invalid character ' '"),
            std::string::npos);
}

TEST(EinsumShapes, InfersSizesAndOutput) {
  auto spec = EinsumSpec::parse("bij,bjk->bik");
  std::string error;
  auto sizes = inferIndexSizes(*spec, {{4, 8, 16}, {4, 16, 32}}, &error);
  ASSERT_TRUE(sizes) << error;
  EXPECT_EQ(sizes->sizeOf('b'), 4);
  EXPECT_EQ(sizes->sizeOf('j'), 16);
  EXPECT_EQ(sizes->sizeOf('z'), -1);
  EXPECT_EQ(sizes->iterationSpace(), 4 * 8 * 16 * 32);
  EXPECT_EQ(outputShape(*spec, *sizes), (std::vector<int64_t>{4, 8, 32}));
}

TEST(EinsumShapes, ReportsMismatches) {
  auto spec = EinsumSpec::parse("ij,jk->ik");
  std::string error;
  EXPECT_FALSE(inferIndexSizes(*spec, {{2, 3}}, &error));
  EXPECT_NE(error.find("2 input term(s) but 1 operand(s)"), std::string::npos);
  EXPECT_FALSE(inferIndexSizes(*spec, {{2, 3}, {3}}, &error));
  EXPECT_NE(error.find("operand 1 has rank 1"), std::string::npos);
  EXPECT_FALSE(inferIndexSizes(*spec, {{2, 3}, {4, 5}}, &error));
  EXPECT_NE(error.find("index 'j' is bound to both 3 and 4"),
            std::string::npos);
}

TEST(EinsumWork, MatmulCostsTwoMNK) {
  auto spec = EinsumSpec::parse("ij,jk->ik");
  auto sizes = inferIndexSizes(*spec, {{64, 128}, {128, 32}});
  EinsumWork work = estimateEinsumWork(*spec, *sizes, JoinKind::Mul,
                                       /*hasAggregation=*/true, 4);
  EXPECT_DOUBLE_EQ(work.flops, 2.0 * 64 * 128 * 32);
  EXPECT_DOUBLE_EQ(work.bytesRead, 4.0 * (64 * 128 + 128 * 32));
  EXPECT_DOUBLE_EQ(work.bytesWritten, 4.0 * 64 * 32);
}

TEST(EinsumWork, ElementwiseAndReduction) {
  auto relu = EinsumSpec::parse("ij->ij");
  auto sizes = inferIndexSizes(*relu, {{10, 20}});
  EXPECT_DOUBLE_EQ(
      estimateEinsumWork(*relu, *sizes, JoinKind::Relu, false, 2).flops, 200);
  auto sum = EinsumSpec::parse("ij->i");
  auto sumSizes = inferIndexSizes(*sum, {{10, 20}});
  EinsumWork work =
      estimateEinsumWork(*sum, *sumSizes, JoinKind::Identity, true, 4);
  EXPECT_DOUBLE_EQ(work.flops, 200);
  EXPECT_DOUBLE_EQ(work.bytesWritten, 40);
}

TEST(ScalarOps, NamesRoundTrip) {
  for (unsigned i = 0; i < kNumJoinKinds; ++i) {
    auto kind = static_cast<JoinKind>(i);
    EXPECT_EQ(parseJoinKind(joinKindName(kind)), kind);
  }
  for (unsigned i = 0; i < kNumAggKinds; ++i) {
    auto kind = static_cast<AggKind>(i);
    EXPECT_EQ(parseAggKind(aggKindName(kind)), kind);
  }
  EXPECT_FALSE(parseJoinKind("frobnicate"));
  EXPECT_FALSE(parseAggKind("mean"));
}

TEST(ScalarOps, JoinSemantics) {
  EXPECT_EQ(joinArity(JoinKind::Mul), 2u);
  EXPECT_EQ(joinArity(JoinKind::Exp), 1u);
  EXPECT_TRUE(joinTakesScalar(JoinKind::Scale));
  EXPECT_FALSE(joinTakesScalar(JoinKind::Add));
  EXPECT_DOUBLE_EQ(applyJoin(JoinKind::Sub, 5, 3, 0), 2);
  EXPECT_DOUBLE_EQ(applyJoin(JoinKind::Scale, 5, 0, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(applyJoin(JoinKind::Shift, 5, 0, 1e-6), 5 + 1e-6);
  EXPECT_DOUBLE_EQ(applyJoin(JoinKind::Rsqrt, 4, 0, 0), 0.5);
  EXPECT_DOUBLE_EQ(applyJoin(JoinKind::Relu, -3, 0, 0), 0);
  EXPECT_NEAR(applyJoin(JoinKind::Silu, 1, 0, 0), 1 / (1 + std::exp(-1.0)),
              1e-15);
  EXPECT_NEAR(applyJoin(JoinKind::Gelu, 1, 0, 0), 0.8411919906082768, 1e-12);
  EXPECT_DOUBLE_EQ(aggIdentity(AggKind::Max), -INFINITY);
  EXPECT_DOUBLE_EQ(applyAgg(AggKind::Mul, 3, 4), 12);
}

} // namespace
