//===- CudaPlanGemmTests.cpp - CUDA GEMM, slice and fill plans on the host -===//
//
// The shared GEMM planner's choices and the cuBLAS arguments it maps to
// (column-major, strided-batched, permuted operands), small contractions
// that reduce instead, the CPU backend keeping its choices, slices,
// assembles and fills against the CPU kernels, and what CUDA refuses.
// Plans are interpreted on the host (CudaPlanInterpreter.h).
//
//===----------------------------------------------------------------------===//

#include "CudaPlanInterpreter.h"

using namespace doppler;
using namespace doppler::runtime;
using namespace doppler::runtime::cuda;
using namespace doppler::runtime::test;
using namespace doppler::runtime::cuda::plan_test;

namespace {

//===----------------------------------------------------------------------===//
// GEMM planning (shared with the CPU backend) and cuBLAS arguments
//===----------------------------------------------------------------------===//

const GemmStep &onlyGemm(const KernelPlan &plan) {
  EXPECT_EQ(countSteps(plan, 3), 1u);
  for (const Step &step : plan.steps)
    if (const auto *gemm = std::get_if<GemmStep>(&step))
      return *gemm;
  static GemmStep none;
  return none;
}

TEST(CudaPlan, MatmulMapsToColumnMajorCublasArguments) {
  // Row-major C = A B is column-major C^T = B^T A^T: cuBLAS's A is B.
  std::optional<KernelPlan> plan = checkPlan<float>(
      {"ij,jk->ik", JoinKind::Mul, AggKind::Add, {{64, 48}, {48, 40}}}, kH100);
  ASSERT_TRUE(plan);
  EXPECT_TRUE(plan->usesGemm);
  EXPECT_EQ(plan->steps.size(), 1u);
  const GemmStep &g = onlyGemm(*plan);
  EXPECT_FALSE(g.transA);
  EXPECT_FALSE(g.transB);
  EXPECT_EQ(g.m, 40);
  EXPECT_EQ(g.n, 64);
  EXPECT_EQ(g.k, 48);
  EXPECT_EQ(g.lda, 40);
  EXPECT_EQ(g.ldb, 48);
  EXPECT_EQ(g.ldc, 40);
  EXPECT_EQ(g.a.kind, BufferRef::Kind::Input);
  EXPECT_EQ(g.a.index, 1);
  EXPECT_EQ(g.b.index, 0);
  EXPECT_EQ(g.c.kind, BufferRef::Kind::Output);

  // B stored transposed ("kj"): read in place with a transpose flag.
  plan = checkPlan<float>(
      {"ij,kj->ik", JoinKind::Mul, AggKind::Add, {{64, 48}, {40, 48}}}, kH100);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->steps.size(), 1u);
  EXPECT_TRUE(onlyGemm(*plan).transA);
  EXPECT_FALSE(onlyGemm(*plan).transB);
  EXPECT_EQ(onlyGemm(*plan).lda, 48);

  // Transposed output: the roles swap instead of permuting C.
  plan = checkPlan<float>(
      {"ij,jk->ki", JoinKind::Mul, AggKind::Add, {{64, 48}, {48, 40}}}, kH100);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->steps.size(), 1u);
  EXPECT_EQ(onlyGemm(*plan).c.kind, BufferRef::Kind::Output);
}

TEST(CudaPlan, BatchedMatmulUsesStridesOrPermutes) {
  std::optional<KernelPlan> plan = checkPlan<double>(
      {"bij,bjk->bik", JoinKind::Mul, AggKind::Add, {{4, 40, 36}, {4, 36, 30}}},
      kH100);
  ASSERT_TRUE(plan);
  const GemmStep &g = onlyGemm(*plan);
  EXPECT_EQ(g.batch, 4);
  EXPECT_EQ(g.strideA, 36 * 30);
  EXPECT_EQ(g.strideB, 40 * 36);
  EXPECT_EQ(g.strideC, 40 * 30);
  EXPECT_EQ(plan->steps.size(), 1u);

  // Batch index in the middle of A and outermost in C: strided in place.
  plan = checkPlan<float>(
      {"ibj,jbk->bik", JoinKind::Mul, AggKind::Add, {{40, 4, 36}, {36, 4, 30}}},
      kH100);
  ASSERT_TRUE(plan);
  EXPECT_EQ(onlyGemm(*plan).batch, 4);

  // Output with the batch innermost: C goes through scratch and a copy.
  plan = checkPlan<float>(
      {"bij,bjk->ikb", JoinKind::Mul, AggKind::Add, {{4, 40, 36}, {4, 36, 30}}},
      kH100);
  ASSERT_TRUE(plan);
  EXPECT_EQ(onlyGemm(*plan).c.kind, BufferRef::Kind::Temp);
  EXPECT_EQ(countSteps(*plan, 2), 1u); // The copy into the output.

  // An index only A has is summed out first.
  plan = checkPlan<float>(
      {"ijx,jk->ik", JoinKind::Mul, AggKind::Add, {{40, 50, 3}, {50, 36}}},
      kH100);
  ASSERT_TRUE(plan);
  EXPECT_EQ(countSteps(*plan, 1), 1u);
  EXPECT_EQ(onlyGemm(*plan).b.kind, BufferRef::Kind::Temp);
}

TEST(CudaPlan, SmallContractionsAndDotProductsReduceInstead) {
  std::optional<KernelPlan> plan = checkPlan<float>(
      {"ij,jk->ik", JoinKind::Mul, AggKind::Add, {{8, 8}, {8, 8}}}, kH100);
  ASSERT_TRUE(plan);
  EXPECT_FALSE(plan->usesGemm);
  plan = checkPlan<float>(
      {"bi,bi->b", JoinKind::Mul, AggKind::Add, {{64, 4096}, {64, 4096}}},
      kH100);
  ASSERT_TRUE(plan);
  EXPECT_FALSE(plan->usesGemm);
}

TEST(ContractionPlan, SharedPlannerKeepsTheCpuChoices) {
  EinsumSpec spec = *EinsumSpec::parse("ji,jk->ik");
  IndexSizes sizes = *inferIndexSizes(spec, {{45, 37}, {45, 29}});
  std::optional<contraction::GemmPlan> plan =
      contraction::planGemm(spec, sizes.indices, sizes.sizes);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->mIndices, "i");
  EXPECT_EQ(plan->nIndices, "k");
  EXPECT_EQ(plan->kIndices, "j");
  EXPECT_TRUE(plan->a.transposed);
  EXPECT_EQ(plan->a.leadingDim, 37);
  EXPECT_FALSE(plan->b.transposed);
  EXPECT_TRUE(plan->outDirect);

  // "jil": j and l are not adjacent in A, so A is permuted.
  spec = *EinsumSpec::parse("jil,jlk->ik");
  sizes = *inferIndexSizes(spec, {{4, 37, 5}, {4, 5, 29}});
  plan = contraction::planGemm(spec, sizes.indices, sizes.sizes);
  ASSERT_TRUE(plan);
  EXPECT_TRUE(plan->a.permute);
  EXPECT_EQ(plan->a.canonical, "ijl");
  EXPECT_FALSE(plan->b.permute);

  // Limits: tiny, dot products, and 32-bit extents.
  spec = *EinsumSpec::parse("ij,jk->ik");
  sizes = *inferIndexSizes(spec, {{4, 4}, {4, 4}});
  EXPECT_FALSE(contraction::planGemm(spec, sizes.indices, sizes.sizes));
  contraction::GemmLimits anything;
  anything.minVolume = 0;
  EXPECT_TRUE(
      contraction::planGemm(spec, sizes.indices, sizes.sizes, anything));
  spec = *EinsumSpec::parse("i,i->");
  sizes = *inferIndexSizes(spec, {{4096}, {4096}});
  EXPECT_FALSE(
      contraction::planGemm(spec, sizes.indices, sizes.sizes, anything));
  anything.allowDotProducts = true;
  EXPECT_TRUE(
      contraction::planGemm(spec, sizes.indices, sizes.sizes, anything));
  spec = *EinsumSpec::parse("ij,jk->ik");
  sizes =
      *inferIndexSizes(spec, {{2, int64_t(1) << 32}, {int64_t(1) << 32, 2}});
  EXPECT_FALSE(contraction::planGemm(spec, sizes.indices, sizes.sizes));
}

//===----------------------------------------------------------------------===//
// Slice, assemble, fill
//===----------------------------------------------------------------------===//

template <typename Word>
std::vector<Word> runCopyPlan(const KernelPlan &plan,
                              std::vector<std::vector<Word>> &inputs,
                              size_t outElements) {
  return interpretPlan<float>(plan, inputs, outElements, false, Word(0x5a5a));
}

TEST(CudaPlan, SliceAndAssembleMatchTheCpuKernels) {
  for (ElementType type : {ElementType::F16, ElementType::F32}) {
    Shape shape = {10, 7, 5};
    std::vector<uint32_t> input32(numElements(shape));
    for (size_t i = 0; i < input32.size(); ++i)
      input32[i] = static_cast<uint32_t>(i * 2654435761u);
    std::vector<std::vector<int64_t>> extents = {{3, 3, 4}, {2, 5}, {5}};
    std::vector<std::vector<uint32_t>> blocks;
    for (int64_t o0 : {0, 3, 6})
      for (int64_t o1 : {0, 2}) {
        Shape blockShape = {o0 == 6 ? 4 : 3, o1 == 0 ? 2 : 5, 5};
        Result<KernelPlan> plan =
            planSlice(shape, {o0, o1, 0}, blockShape, type, kH100);
        ASSERT_TRUE(plan) << plan.message();
        size_t elements = numElements(blockShape);
        std::vector<uint32_t> expected(elements);
        cpu::slice(input32.data(), shape, {o0, o1, 0}, expected.data(),
                   blockShape, type);
        std::vector<std::vector<uint32_t>> inputs = {input32};
        std::vector<uint32_t> block;
        if (type == ElementType::F16) {
          // Half elements: run on uint16 words of the same bytes.
          std::vector<std::vector<uint16_t>> halves = {std::vector<uint16_t>(
              reinterpret_cast<uint16_t *>(input32.data()),
              reinterpret_cast<uint16_t *>(input32.data()) + input32.size())};
          std::vector<uint16_t> out = runCopyPlan(*plan, halves, elements);
          EXPECT_EQ(0, std::memcmp(out.data(), expected.data(),
                                   elements * sizeof(uint16_t)));
          block.assign(expected.begin(), expected.end());
        } else {
          block = runCopyPlan(*plan, inputs, elements);
          EXPECT_EQ(block, expected);
        }
        blocks.push_back(block);
      }
    if (type != ElementType::F32)
      continue;
    Result<KernelPlan> plan = planAssemble(extents, type, kH100);
    ASSERT_TRUE(plan);
    EXPECT_EQ(plan->steps.size(), blocks.size());
    std::vector<uint32_t> out = runCopyPlan(*plan, blocks, input32.size());
    EXPECT_EQ(out, input32);
  }
}

TEST(CudaPlan, FillPatternsPerType) {
  KernelPlan plan = planFill(5, ElementType::F32, 2.5, kH100);
  ASSERT_EQ(plan.steps.size(), 1u);
  float f = 2.5f;
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  EXPECT_EQ(std::get<FillStep>(plan.steps[0]).pattern, bits);
  plan = planFill(3, ElementType::F16, 1.5, kH100);
  EXPECT_EQ(std::get<FillStep>(plan.steps[0]).pattern, floatToHalf(1.5f));
  EXPECT_EQ(std::get<FillStep>(plan.steps[0]).elementBytes, 2u);
  plan = planFill(3, ElementType::F64, -1.25, kH100);
  double d = -1.25;
  uint64_t bits64;
  std::memcpy(&bits64, &d, 8);
  EXPECT_EQ(std::get<FillStep>(plan.steps[0]).pattern, bits64);
  EXPECT_TRUE(planFill(0, ElementType::F32, 1, kH100).steps.empty());
}

TEST(CudaPlan, RejectsWhatCudaCannotRun) {
  EinsumSpec spec = *EinsumSpec::parse("ij->ij");
  Result<KernelPlan> half = planEinsum(spec, JoinKind::Exp, std::nullopt, 0,
                                       {{2, 2}}, ElementType::F16, kH100);
  ASSERT_FALSE(half);
  EXPECT_NE(half.message().find("f16"), std::string::npos);
  Result<KernelPlan> arity = planEinsum(spec, JoinKind::Add, std::nullopt, 0,
                                        {{2, 2}}, ElementType::F32, kH100);
  EXPECT_FALSE(arity);
  Result<KernelPlan> noAgg =
      planEinsum(*EinsumSpec::parse("ij->i"), JoinKind::Identity, std::nullopt,
                 0, {{2, 2}}, ElementType::F32, kH100);
  EXPECT_FALSE(noAgg);
  // More unmergeable dimensions than the kernels take.
  Result<KernelPlan> deep = planEinsum(
      *EinsumSpec::parse("abcdefghijkl->lkjihgfedcba"), JoinKind::Neg,
      std::nullopt, 0, {Shape(12, 2)}, ElementType::F32, kH100);
  ASSERT_FALSE(deep);
  EXPECT_NE(deep.message().find("at most"), std::string::npos);
}

} // namespace
