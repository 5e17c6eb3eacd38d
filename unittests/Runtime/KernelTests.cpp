//===- KernelTests.cpp - CPU kernels against the reference ----------------===//

#include "TestSupport.h"

#include "doppler/runtime/CpuKernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace doppler;
using namespace doppler::runtime;
using namespace doppler::runtime::test;

namespace {

constexpr double kTolerance = 1e-5;

/// Inputs inside every join's domain: positive bases and denominators for
/// log/sqrt/rsqrt/reciprocal/div/pow, signed values otherwise.
std::vector<float> inputFor(JoinKind join, int operand, size_t count,
                            uint32_t seed) {
  switch (join) {
  case JoinKind::Log:
  case JoinKind::Sqrt:
  case JoinKind::Rsqrt:
  case JoinKind::Reciprocal:
    return randomFloats(count, seed, 0.5, 2.0);
  case JoinKind::Div:
    return operand == 1 ? randomFloats(count, seed, 0.5, 2.0)
                        : randomFloats(count, seed);
  case JoinKind::Pow:
    return operand == 0 ? randomFloats(count, seed, 0.5, 2.0)
                        : randomFloats(count, seed, -2.0, 2.0);
  default:
    return randomFloats(count, seed, -2.0, 2.0);
  }
}

struct EinsumCase {
  std::string spec;
  JoinKind join;
  std::optional<AggKind> aggregation;
  std::vector<Shape> shapes;
  double scalar = 0;
};

/// Runs one einsum through EinsumKernel (f32) and compares with the double
/// reference. Returns whether the GEMM path was used.
bool checkEinsum(const EinsumCase &c, uint32_t seed = 1) {
  SCOPED_TRACE(c.spec + " " + std::string(joinKindName(c.join)) +
               (c.aggregation ? "/" + std::string(aggKindName(*c.aggregation))
                              : std::string()));
  std::optional<EinsumSpec> spec = EinsumSpec::parse(c.spec);
  EXPECT_TRUE(spec);
  if (!spec)
    return false;
  Result<cpu::EinsumKernel> kernel = cpu::EinsumKernel::create(
      *spec, c.join, c.aggregation, c.scalar, c.shapes, ElementType::F32);
  EXPECT_TRUE(kernel) << kernel.message();
  if (!kernel)
    return false;
  std::vector<std::vector<float>> inputs;
  std::vector<std::vector<double>> inputsDouble;
  std::vector<const void *> pointers;
  for (size_t i = 0; i < c.shapes.size(); ++i) {
    inputs.push_back(inputFor(c.join, static_cast<int>(i),
                              numElements(c.shapes[i]), seed + 17 * i));
    inputsDouble.push_back(toDouble(inputs.back()));
  }
  for (const auto &input : inputs)
    pointers.push_back(input.data());
  std::vector<double> expected = referenceEinsum(
      *spec, c.join, c.aggregation, c.scalar, inputsDouble, c.shapes);
  // Poison the output: kernels must write every element.
  std::vector<float> out(expected.size(), std::nanf(""));
  kernel->run(pointers.data(), out.data());
  EXPECT_EQ(numElements(kernel->outputShape()),
            static_cast<int64_t>(expected.size()));
  EXPECT_LE(relativeError(out.data(), expected), kTolerance);
  return kernel->usesGemm();
}

TEST(CpuKernels, EveryUnaryJoinElementwiseAndPermuted) {
  for (unsigned j = 0; j < kNumJoinKinds; ++j) {
    auto join = static_cast<JoinKind>(j);
    if (joinArity(join) != 1)
      continue;
    checkEinsum({"ij->ij", join, std::nullopt, {{7, 13}}, 1.75}, j);
    checkEinsum({"ijk->kij", join, std::nullopt, {{3, 4, 5}}, -0.5}, j);
  }
}

TEST(CpuKernels, EveryBinaryJoinElementwiseAndBroadcast) {
  for (unsigned j = 0; j < kNumJoinKinds; ++j) {
    auto join = static_cast<JoinKind>(j);
    if (joinArity(join) != 2)
      continue;
    checkEinsum({"ij,ij->ij", join, std::nullopt, {{9, 31}, {9, 31}}}, j);
    checkEinsum({"ij,j->ij", join, std::nullopt, {{9, 31}, {31}}}, j);
    checkEinsum({"i,ij->ji", join, std::nullopt, {{6}, {6, 11}}}, j);
    checkEinsum({"i,j->ij", join, std::nullopt, {{5}, {8}}}, j);
    checkEinsum({",ij->ij", join, std::nullopt, {{}, {4, 3}}}, j);
  }
}

TEST(CpuKernels, EveryAggregationOverEveryReductionShape) {
  for (unsigned a = 0; a < kNumAggKinds; ++a) {
    auto agg = static_cast<AggKind>(a);
    // Mul over many values under/overflows; keep its reductions short.
    int64_t n = agg == AggKind::Mul ? 6 : 37;
    checkEinsum({"ij->i", JoinKind::Identity, agg, {{11, n}}}, a);
    checkEinsum({"ij->j", JoinKind::Identity, agg, {{n, 11}}}, a);
    checkEinsum({"ijk->ik", JoinKind::Identity, agg, {{5, n, 7}}}, a);
    checkEinsum({"ijk->", JoinKind::Identity, agg, {{3, 4, 2}}}, a);
    checkEinsum({"ij->i", JoinKind::Exp, agg, {{11, 5}}}, a);
    checkEinsum({"ij,ij->i", JoinKind::Mul, agg, {{11, 5}, {11, 5}}}, a);
    checkEinsum({"ij,jk->ik", JoinKind::Add, agg, {{6, 5}, {5, 4}}}, a);
    checkEinsum({"ij,jk->ik", JoinKind::Max, agg, {{6, 5}, {5, 4}}}, a);
  }
}

TEST(CpuKernels, ExpJoinsPastTheirRangeMatchTheReference) {
  // exp underflows to 0 and overflows to inf; the kernels return those
  // values without libm's slower error path, exactly as std::exp would.
  std::vector<float> x = {-1e30f, -800.f,    -104.5f,  -103.f,       -90.f,
                          -1.f,   0.f,       88.f,     89.5f,        800.f,
                          1e30f,  -INFINITY, INFINITY, std::nanf("")};
  Shape shape = {static_cast<int64_t>(x.size())};
  std::optional<EinsumSpec> spec = EinsumSpec::parse("i->i");
  ASSERT_TRUE(spec);
  for (JoinKind join : {JoinKind::Exp, JoinKind::Silu, JoinKind::Sigmoid}) {
    SCOPED_TRACE(std::string(joinKindName(join)));
    Result<cpu::EinsumKernel> kernel = cpu::EinsumKernel::create(
        *spec, join, std::nullopt, 0, {shape}, ElementType::F32);
    ASSERT_TRUE(kernel) << kernel.message();
    std::vector<float> out(x.size());
    const void *inputs[] = {x.data()};
    kernel->run(inputs, out.data());
    for (size_t i = 0; i < x.size(); ++i) {
      float expected = join == JoinKind::Exp    ? std::exp(x[i])
                       : join == JoinKind::Silu ? x[i] / (1.f + std::exp(-x[i]))
                                                : 1.f / (1.f + std::exp(-x[i]));
      if (std::isnan(expected)) {
        EXPECT_TRUE(std::isnan(out[i])) << x[i];
        continue;
      }
      EXPECT_EQ(out[i], expected) << x[i];
      EXPECT_EQ(std::signbit(out[i]), std::signbit(expected)) << x[i];
    }
  }
}

TEST(CpuKernels, LargePermutationsWalkTiles) {
  // Big enough for the tiled walk, with partial tiles at the edges.
  checkEinsum({"ij->ji", JoinKind::Identity, std::nullopt, {{40, 37}}});
  checkEinsum({"ijk->kji", JoinKind::Neg, std::nullopt, {{20, 3, 33}}});
  checkEinsum({"ij,ji->ij", JoinKind::Sub, std::nullopt, {{40, 50}, {50, 40}}});
  checkEinsum({"bij,bji->bij",
               JoinKind::Mul,
               std::nullopt,
               {{2, 17, 65}, {2, 65, 17}}});
}

TEST(CpuKernels, ScaleAndShiftUseTheScalar) {
  checkEinsum({"ij->ji", JoinKind::Scale, std::nullopt, {{4, 9}}, 3.0});
  checkEinsum({"ij->i", JoinKind::Shift, AggKind::Add, {{4, 9}}, -2.5});
}

TEST(CpuKernels, MatmulUsesGemmInEveryLayout) {
  const int64_t m = 24, k = 40, n = 18;
  EXPECT_TRUE(checkEinsum(
      {"ij,jk->ik", JoinKind::Mul, AggKind::Add, {{m, k}, {k, n}}}));
  EXPECT_TRUE(checkEinsum(
      {"ji,jk->ik", JoinKind::Mul, AggKind::Add, {{k, m}, {k, n}}}));
  EXPECT_TRUE(checkEinsum(
      {"ij,kj->ik", JoinKind::Mul, AggKind::Add, {{m, k}, {n, k}}}));
  EXPECT_TRUE(checkEinsum(
      {"ji,kj->ik", JoinKind::Mul, AggKind::Add, {{k, m}, {n, k}}}));
  // Transposed output: computed as C^T = B^T A^T.
  EXPECT_TRUE(checkEinsum(
      {"ij,jk->ki", JoinKind::Mul, AggKind::Add, {{m, k}, {k, n}}}));
  // Matrix-vector.
  EXPECT_TRUE(
      checkEinsum({"ij,j->i", JoinKind::Mul, AggKind::Add, {{m, k}, {k}}}));
}

TEST(CpuKernels, BatchedMatmulWithPermutations) {
  const int64_t b = 3, m = 12, k = 20, n = 10;
  EXPECT_TRUE(checkEinsum(
      {"bij,bjk->bik", JoinKind::Mul, AggKind::Add, {{b, m, k}, {b, k, n}}}));
  EXPECT_TRUE(checkEinsum(
      {"bij,bkj->bik", JoinKind::Mul, AggKind::Add, {{b, m, k}, {b, n, k}}}));
  // Batch index inside the operands: strided batch views, no copies.
  EXPECT_TRUE(checkEinsum(
      {"ibj,jbk->bik", JoinKind::Mul, AggKind::Add, {{m, b, k}, {k, b, n}}}));
  // Output with the batch index in the middle: C goes through scratch.
  EXPECT_TRUE(checkEinsum(
      {"bij,bjk->ibk", JoinKind::Mul, AggKind::Add, {{b, m, k}, {b, k, n}}}));
  // Two batch and two contracted indices; "jil" cannot merge (j, l) in
  // place, so A is permuted.
  EXPECT_TRUE(checkEinsum({"abijl,bajlk->abik",
                           JoinKind::Mul,
                           AggKind::Add,
                           {{2, 2, m, 4, 5}, {2, 2, 4, 5, n}}}));
  EXPECT_TRUE(checkEinsum(
      {"jil,jlk->ik", JoinKind::Mul, AggKind::Add, {{4, m, 5}, {4, 5, n}}}));
  // Attention-like: heads h, queries q, keys s, head dim d.
  EXPECT_TRUE(checkEinsum(
      {"hqd,hsd->hqs", JoinKind::Mul, AggKind::Add, {{2, 16, 8}, {2, 12, 8}}}));
}

/// Outputs whose outer index is not one strided dimension of a GEMM's C
/// (the LLaMA head projection "sd,dhe->hse"): with every GEMM extent at
/// least GemmLimits::minSplitExtent the outer index becomes a batch loop
/// over strided B and C views; below it, C goes through scratch and a
/// permutation. Both must give the reference's values.
TEST(CpuKernels, HeadProjectionsSplitIntoBatchesOrPermute) {
  // s = 64, d = 48, e = 40 >= 32: batch loop over h.
  EXPECT_TRUE(checkEinsum({"sd,dhe->hse",
                           JoinKind::Mul,
                           AggKind::Add,
                           {{64, 48}, {48, 3, 40}}}));
  // e = 8 < 32: scratch and a permutation of C.
  EXPECT_TRUE(checkEinsum({"sd,dhe->hse",
                           JoinKind::Mul,
                           AggKind::Add,
                           {{64, 48}, {48, 3, 8}}}));
  // The output projection back ("hse,hed->sd") and a split with two outer
  // indices.
  EXPECT_TRUE(checkEinsum({"hse,hed->sd",
                           JoinKind::Mul,
                           AggKind::Add,
                           {{3, 64, 40}, {3, 40, 48}}}));
  EXPECT_TRUE(checkEinsum({"sd,dghe->ghse",
                           JoinKind::Mul,
                           AggKind::Add,
                           {{64, 48}, {48, 2, 3, 40}}}));
}

TEST(CpuKernels, ContractionsWithIndicesOnlyOneInputHas) {
  // x is summed out of A before the GEMM; y out of B.
  EXPECT_TRUE(checkEinsum(
      {"ijx,jk->ik", JoinKind::Mul, AggKind::Add, {{16, 20, 3}, {20, 18}}}));
  EXPECT_TRUE(checkEinsum(
      {"ij,yjk->ik", JoinKind::Mul, AggKind::Add, {{16, 20}, {4, 20, 18}}}));
  // No index shared and contracted: the loop path.
  EXPECT_FALSE(
      checkEinsum({"ix,j->ij", JoinKind::Mul, AggKind::Add, {{8, 5}, {7}}}));
}

TEST(CpuKernels, SmallAndDegenerateContractions) {
  // Below the GEMM threshold and batched dot products use the loop.
  EXPECT_FALSE(checkEinsum(
      {"ij,jk->ik", JoinKind::Mul, AggKind::Add, {{2, 3}, {3, 2}}}));
  EXPECT_FALSE(checkEinsum(
      {"bi,bi->b", JoinKind::Mul, AggKind::Add, {{9, 300}, {9, 300}}}));
  // Extent-1 and zero extents.
  checkEinsum({"ij,jk->ik", JoinKind::Mul, AggKind::Add, {{1, 64}, {64, 32}}});
  checkEinsum({"ij,jk->ik", JoinKind::Mul, AggKind::Add, {{16, 0}, {0, 32}}});
  checkEinsum({"ij,jk->ik", JoinKind::Mul, AggKind::Add, {{0, 16}, {16, 32}}});
  checkEinsum({"ij->i", JoinKind::Identity, AggKind::Max, {{4, 0}}});
}

TEST(CpuKernels, FloatAndDoubleAgree) {
  EinsumSpec spec = *EinsumSpec::parse("ij,jk->ik");
  std::vector<Shape> shapes = {{20, 30}, {30, 25}};
  auto a = randomFloats(600, 3), b = randomFloats(750, 4);
  std::vector<double> a64(a.begin(), a.end()), b64(b.begin(), b.end());
  auto kernel = cpu::EinsumKernel::create(spec, JoinKind::Mul, AggKind::Add, 0,
                                          shapes, ElementType::F64);
  ASSERT_TRUE(kernel) << kernel.message();
  std::vector<double> out(500);
  const void *inputs[] = {a64.data(), b64.data()};
  kernel->run(inputs, out.data());
  std::vector<double> expected =
      referenceEinsum(spec, JoinKind::Mul, AggKind::Add, 0, {a64, b64}, shapes);
  EXPECT_LE(relativeError(out.data(), expected), 1e-12);
}

TEST(CpuKernels, RejectsWhatTheCpuCannotRun) {
  EinsumSpec spec = *EinsumSpec::parse("ij->ij");
  auto half = cpu::EinsumKernel::create(spec, JoinKind::Exp, std::nullopt, 0,
                                        {{2, 2}}, ElementType::F16);
  ASSERT_FALSE(half);
  EXPECT_NE(half.message().find("f16"), std::string::npos);
  auto arity = cpu::EinsumKernel::create(spec, JoinKind::Add, std::nullopt, 0,
                                         {{2, 2}}, ElementType::F32);
  EXPECT_FALSE(arity);
  auto shapes = cpu::EinsumKernel::create(*EinsumSpec::parse("ij,jk->ik"),
                                          JoinKind::Mul, AggKind::Add, 0,
                                          {{2, 3}, {4, 5}}, ElementType::F32);
  EXPECT_FALSE(shapes);
}

TEST(CpuKernels, SliceAndAssembleRoundTrip) {
  Shape shape = {10, 7, 5};
  std::vector<float> input = randomFloats(numElements(shape), 9);
  std::vector<std::vector<int64_t>> extents = {{3, 3, 4}, {2, 5}, {5}};
  std::vector<std::vector<float>> blocks;
  std::vector<const void *> blockPointers;
  for (int64_t o0 : {0, 3, 6})
    for (int64_t o1 : {0, 2}) {
      Shape blockShape = {o0 == 6 ? 4 : 3, o1 == 0 ? 2 : 5, 5};
      std::vector<float> block(numElements(blockShape));
      cpu::slice(input.data(), shape, {o0, o1, 0}, block.data(), blockShape,
                 ElementType::F32);
      // Spot-check one element of the slice.
      EXPECT_EQ(block[1 * blockShape[1] * 5 + 1 * 5 + 2],
                input[(o0 + 1) * 35 + (o1 + 1) * 5 + 2]);
      blocks.push_back(std::move(block));
    }
  for (const auto &block : blocks)
    blockPointers.push_back(block.data());
  std::vector<float> output(input.size(), -1.0f);
  cpu::assemble(blockPointers, extents, output.data(), ElementType::F32);
  EXPECT_EQ(0, std::memcmp(output.data(), input.data(),
                           input.size() * sizeof(float)));
}

TEST(CpuKernels, FillEveryType) {
  std::vector<float> f32(5);
  cpu::fill(f32.data(), ElementType::F32, 5, 2.5);
  EXPECT_EQ(f32[4], 2.5f);
  std::vector<double> f64(3);
  cpu::fill(f64.data(), ElementType::F64, 3, -1.25);
  EXPECT_EQ(f64[2], -1.25);
  std::vector<uint16_t> f16(4);
  cpu::fill(f16.data(), ElementType::F16, 4, 1.5);
  EXPECT_EQ(halfToFloat(f16[3]), 1.5f);
}

TEST(CpuKernels, HalfConversionsRoundTrip) {
  for (float value : {0.0f, -0.0f, 1.0f, -2.0f, 65504.0f, 6.1035156e-05f,
                      5.9604645e-08f, 0.333251953125f})
    EXPECT_EQ(halfToFloat(floatToHalf(value)), value) << value;
  EXPECT_TRUE(std::isinf(halfToFloat(floatToHalf(1e6f))));
  EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(std::nanf("")))));
  // Round to nearest even: 1 + 2^-11 is halfway between 1 and 1 + 2^-10.
  EXPECT_EQ(halfToFloat(floatToHalf(1.0f + 1.0f / 2048)), 1.0f);
}

} // namespace
