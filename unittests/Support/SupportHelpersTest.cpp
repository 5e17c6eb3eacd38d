//===- SupportHelpersTest.cpp - Signature check, number formats ---------===//

#include "Doppler/Support/EinsumSpec.h"
#include "Doppler/Support/ErrorString.h"
#include "Doppler/Support/NumberFormat.h"
#include "Doppler/Support/ParseNumber.h"

#include <cmath>
#include <gtest/gtest.h>

using namespace doppler;

namespace {

std::string signatureError(const char *text, JoinKind join,
                           std::optional<double> scalar,
                           std::optional<AggKind> aggregation,
                           const std::vector<std::vector<int64_t>> &shapes) {
  std::optional<EinsumSpec> spec = EinsumSpec::parse(text);
  EXPECT_TRUE(spec);
  std::string error;
  EXPECT_FALSE(
      checkEinsumSignature(*spec, join, scalar, aggregation, shapes, &error));
  return error;
}

TEST(EinsumSignature, AcceptsAMatmul) {
  EinsumSpec spec = *EinsumSpec::parse("ij,jk->ik");
  std::optional<EinsumSignature> signature = checkEinsumSignature(
      spec, JoinKind::Mul, std::nullopt, AggKind::Add, {{2, 3}, {3, 5}});
  ASSERT_TRUE(signature);
  EXPECT_EQ(signature->outputShape, (std::vector<int64_t>{2, 5}));
  EXPECT_EQ(signature->sizes.sizeOf('j'), 3);
}

TEST(EinsumSignature, FirstMismatchInOrder) {
  EXPECT_EQ(signatureError("ij->ij", JoinKind::Identity, std::nullopt,
                           std::nullopt, {{2, 3}, {2, 3}}),
            "spec 'ij->ij' has 1 input term(s) but 2 operand(s) were given");
  EXPECT_EQ(signatureError("ij,ij->ij", JoinKind::Exp, std::nullopt,
                           std::nullopt, {{2, 3}, {2, 3}}),
            "join 'exp' takes 1 input(s) but the op has 2");
  EXPECT_EQ(signatureError("ij->ij", JoinKind::Scale, std::nullopt,
                           std::nullopt, {{2, 3}}),
            "join 'scale' needs a scalar, e.g. join(scale, 5.0e-01)");
  EXPECT_EQ(
      signatureError("ij->ij", JoinKind::Exp, 2.0, std::nullopt, {{2, 3}}),
      "join 'exp' takes no scalar");
  EXPECT_EQ(signatureError("ij->ij", JoinKind::Shift, INFINITY, std::nullopt,
                           {{2, 3}}),
            "scalar must be finite");
  EXPECT_EQ(signatureError("ij->i", JoinKind::Identity, std::nullopt,
                           std::nullopt, {{2, 3}}),
            "spec 'ij->i' contracts index(es) 'j' but no aggregation is "
            "given (e.g. agg(add))");
  EXPECT_EQ(signatureError("ij->ij", JoinKind::Identity, std::nullopt,
                           AggKind::Max, {{2, 3}}),
            "has aggregation 'max' but spec 'ij->ij' contracts no index");
}

TEST(ErrorString, OnlyWhenAsked) {
  setError(nullptr, "ignored");
  std::string error;
  setError(&error, "kept");
  EXPECT_EQ(error, "kept");
}

TEST(NumberFormat, ThreeWays) {
  EXPECT_EQ(formatShortest(0.1), "0.1");
  EXPECT_EQ(formatShortest(-1), "-1");
  EXPECT_EQ(formatSignificant(1.0 / 3), "0.333333333");
  EXPECT_EQ(formatSignificant(1.0 / 3, 3), "0.333");
  EXPECT_EQ(formatSignificant(-NAN), "nan");
  EXPECT_EQ(formatIntegral(68719476736.0), "68719476736");
  EXPECT_EQ(formatIntegral(0.5), "0.5");
  EXPECT_EQ(formatIntegral(0.1), "0.10000000000000001");
}

} // namespace

namespace {

TEST(ParseNumber, WholeTextOnly) {
  EXPECT_EQ(parseInt64("42"), 42);
  EXPECT_EQ(parseInt64("-7"), -7);
  EXPECT_FALSE(parseInt64(""));
  EXPECT_FALSE(parseInt64("4x"));
  EXPECT_FALSE(parseInt64("99999999999999999999"));
  EXPECT_EQ(parseFiniteDouble("0.25"), 0.25);
  EXPECT_FALSE(parseFiniteDouble("inf"));
  EXPECT_FALSE(parseFiniteDouble("1e999"));
  EXPECT_FALSE(parseFiniteDouble("1.5s"));
}

} // namespace
