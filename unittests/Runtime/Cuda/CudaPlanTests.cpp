//===- CudaPlanTests.cpp - CUDA plans and kernel math, on the host --------===//
//
// Runs on every machine: the plans the CUDA backend builds are interpreted
// on the host with the kernels' own per-element functions
// (CudaKernelMath.h), a thread-by-thread emulation of the reduction groups
// and a reference of cuBLAS's column-major strided-batched GEMM, and
// compared with the double reference einsum. Also checks every plan's
// accesses stay inside their buffers, the launch and splitting decisions,
// and the shared GEMM planner. (Kernel math, errors and options:
// CudaKernelMathTests.cpp.)
//
//===----------------------------------------------------------------------===//

#include "CudaPlanInterpreter.h"

using namespace doppler;
using namespace doppler::runtime;
using namespace doppler::runtime::cuda;
using namespace doppler::runtime::test;
using namespace doppler::runtime::cuda::plan_test;

namespace {

TEST(CudaPlan, FusedChainsMatchTheReference) {
  for (const FusedCase &c : fusedCases()) {
    checkFusedPlan<float>(c);
    checkFusedPlan<double>(c);
    checkFusedPlan<float>(c, /*forceWide=*/true);
  }
}

TEST(CudaPlan, FusedPlanIsOneKernelWithMergedDimensions) {
  // "ij,j->ij" over 64x700: the bias blocks merging (its stride is 0 along
  // i), so two dimensions; a same-layout chain merges into one.
  Result<KernelPlan> plan =
      planFused(*EinsumSpec::parse("ij,j->ij"), "add(in0, in1); gelu(s0)",
                {{64, 700}, {700}}, ElementType::F32, kH100);
  ASSERT_TRUE(plan) << plan.message();
  ASSERT_EQ(plan->steps.size(), 1u);
  const FusedStep &step = std::get<FusedStep>(plan->steps[0]);
  EXPECT_EQ(step.params->rank, 2);
  EXPECT_EQ(step.params->numSteps, 2);
  EXPECT_EQ(step.params->steps[1].join, JoinKind::Gelu);
  EXPECT_EQ(step.params->steps[1].a, kMaxFusedInputs + 0);
  plan = planFused(*EinsumSpec::parse("ijk,ijk->ijk"), "mul(in0, in1)",
                   {{2, 3, 4}, {2, 3, 4}}, ElementType::F64, kH100);
  ASSERT_TRUE(plan) << plan.message();
  EXPECT_EQ(std::get<FusedStep>(plan->steps[0]).params->rank, 1);
  EXPECT_NE(describeStep(plan->steps[0]).find("fused"), std::string::npos);

  // Errors: f16, too many inputs, a bad program.
  plan = planFused(*EinsumSpec::parse("i->i"), "exp(in0)", {{4}},
                   ElementType::F16, kH100);
  ASSERT_FALSE(plan);
  EXPECT_NE(plan.message().find("f16"), std::string::npos);
  std::string spec, program = "add(in0, in1)";
  std::vector<Shape> shapes;
  for (int k = 0; k <= kMaxFusedInputs; ++k) {
    spec += std::string(k ? "," : "") + "i";
    shapes.push_back({4});
    if (k >= 2)
      program += "; add(s" + std::to_string(k - 2) + ", in" +
                 std::to_string(k) + ")";
  }
  plan = planFused(*EinsumSpec::parse(spec + "->i"), program, shapes,
                   ElementType::F32, kH100);
  ASSERT_FALSE(plan);
  EXPECT_NE(plan.message().find("at most"), std::string::npos)
      << plan.message();
  plan = planFused(*EinsumSpec::parse("i->i"), "exp(in1)", {{4}},
                   ElementType::F32, kH100);
  ASSERT_FALSE(plan);
  EXPECT_NE(plan.message().find("invalid join program"), std::string::npos);
}

//===----------------------------------------------------------------------===//
// Einsum plans against the reference
//===----------------------------------------------------------------------===//

TEST(CudaPlan, EveryCaseMatchesTheReferenceInF32AndF64) {
  for (const EinsumCase &c : einsumCases()) {
    checkPlan<float>(c, kH100);
    checkPlan<double>(c, kH100);
  }
}

TEST(CudaPlan, EveryCaseMatchesOnATinyGpuThatSplitsReductions) {
  for (const EinsumCase &c : einsumCases())
    checkPlan<float>(c, kTiny);
}

TEST(CudaPlan, SixtyFourBitIndexMathAgrees) {
  for (const EinsumCase &c : einsumCases())
    checkPlan<float>(c, kTiny, /*forceWide=*/true);
}


TEST(CudaPlan, ReductionsPickGroupsAndSplits) {
  // A long contiguous row sum to a scalar: a block per split, then a pass
  // over the partials.
  std::optional<KernelPlan> plan = checkPlan<float>(
      {"ij->", JoinKind::Identity, AggKind::Add, {{1000, 1000}}}, kH100);
  ASSERT_TRUE(plan);
  ASSERT_EQ(plan->steps.size(), 2u);
  const auto &first = std::get<ReduceStep>(plan->steps[0]);
  EXPECT_EQ(first.group, kBlockSize);
  EXPECT_GT(first.params.splits, 1);
  EXPECT_TRUE(first.params.toPartials);
  EXPECT_FALSE(std::get<ReduceStep>(plan->steps[1]).params.toPartials);
  EXPECT_EQ(plan->tempBytes.size(), 1u);

  // Row sums of many rows: a warp per row, one pass.
  plan = checkPlan<float>(
      {"ij->i", JoinKind::Identity, AggKind::Max, {{4096, 512}}}, kH100);
  ASSERT_TRUE(plan);
  ASSERT_EQ(plan->steps.size(), 1u);
  EXPECT_EQ(std::get<ReduceStep>(plan->steps[0]).group, 32);

  // Column sums: a thread per column, coalesced across columns.
  plan = checkPlan<float>(
      {"ij->j", JoinKind::Identity, AggKind::Add, {{64, 4096}}}, kH100);
  ASSERT_TRUE(plan);
  ASSERT_EQ(plan->steps.size(), 1u);
  EXPECT_EQ(std::get<ReduceStep>(plan->steps[0]).group, 1);

  // Few tall columns: split along the rows.
  plan = checkPlan<float>(
      {"ij->j", JoinKind::Identity, AggKind::Add, {{100000, 2}}}, kH100);
  ASSERT_TRUE(plan);
  EXPECT_GE(plan->steps.size(), 2u);
}

TEST(CudaPlan, PermutationsUseTiledTransposes) {
  auto tiled = [](const KernelPlan &plan) {
    int count = 0;
    for (const Step &step : plan.steps)
      if (const auto *copy = std::get_if<CopyStep>(&step))
        count += copy->tiled;
    return count;
  };
  std::optional<KernelPlan> plan = checkPlan<float>(
      {"ij->ji", JoinKind::Identity, std::nullopt, {{40, 37}}}, kH100);
  ASSERT_TRUE(plan);
  EXPECT_EQ(tiled(*plan), 1);
  // A batched transpose with the batch in the middle, and odd edges.
  plan = checkPlan<double>(
      {"ijk->kji", JoinKind::Identity, std::nullopt, {{20, 3, 33}}}, kH100);
  ASSERT_TRUE(plan);
  EXPECT_EQ(tiled(*plan), 1);
  EXPECT_EQ(std::get<CopyStep>(plan->steps[0]).transpose.batches, 3);
  plan = checkPlan<float>(
      {"bhqd->bqhd", JoinKind::Identity, std::nullopt, {{2, 4, 50, 64}}},
      kH100);
  ASSERT_TRUE(plan);
  EXPECT_EQ(tiled(*plan), 0); // d stays innermost: strided rows, no tiles.
  plan = checkPlan<float>(
      {"ij->ij", JoinKind::Identity, std::nullopt, {{40, 37}}}, kH100);
  ASSERT_TRUE(plan);
  EXPECT_TRUE(std::get<CopyStep>(plan->steps[0]).contiguous);
  // Too narrow for tiles: the plain strided copy.
  plan = checkPlan<float>(
      {"ij->ji", JoinKind::Identity, std::nullopt, {{4, 1000}}}, kH100);
  ASSERT_TRUE(plan);
  EXPECT_EQ(tiled(*plan), 0);
  // A GEMM whose output needs permuting goes through a tiled copy.
  plan = checkPlan<float>({"bij,bjk->ikb",
                           JoinKind::Mul,
                           AggKind::Add,
                           {{40, 40, 36}, {40, 36, 30}}},
                          kH100);
  ASSERT_TRUE(plan);
  EXPECT_EQ(tiled(*plan), 1);
}

TEST(CudaPlan, ChooseReduceShape) {
  ReduceShape shape = chooseReduceShape(1000, 10, true, kH100);
  EXPECT_EQ(shape.group, 1); // Short rows: a thread each.
  EXPECT_EQ(shape.splits, 1);
  EXPECT_EQ(shape.chunk, 10);
  shape = chooseReduceShape(10000, 100, true, kH100);
  EXPECT_EQ(shape.group, 32);
  EXPECT_EQ(shape.splits, 1);
  shape = chooseReduceShape(1, 1 << 24, true, kH100);
  EXPECT_EQ(shape.group, kBlockSize);
  EXPECT_GT(shape.splits, 100);
  EXPECT_GE(shape.chunk * shape.splits, 1 << 24);
  EXPECT_GE(shape.chunk, kBlockSize * 64);
  shape = chooseReduceShape(4, 1 << 20, false, kH100);
  EXPECT_EQ(shape.group, 1);
  EXPECT_GT(shape.splits, 1);
  shape = chooseReduceShape(1, 0, true, kH100);
  EXPECT_EQ(shape.splits, 1);
  EXPECT_EQ(shape.chunk, 1);
}

TEST(CudaPlan, GridsCoverTheWorkWithinAFewWaves) {
  EXPECT_EQ(gridFor(0, kH100).blocks, 0u);
  EXPECT_EQ(gridFor(1, kH100).blocks, 1u);
  EXPECT_EQ(gridFor(256, kH100).blocks, 1u);
  EXPECT_EQ(gridFor(257, kH100).blocks, 2u);
  EXPECT_EQ(gridFor(uint64_t(1) << 40, kH100).blocks, 132u * 8 * 4);
  EXPECT_EQ(gridFor(uint64_t(1) << 40, kTiny).blocks, 4u);
}

TEST(CudaPlan, DeviceBlockSizesAreBoundedClasses) {
  EXPECT_EQ(deviceBlockSize(1), 512u);
  EXPECT_EQ(deviceBlockSize(513), 1024u);
  EXPECT_EQ(deviceBlockSize(4096), 4096u);
  EXPECT_EQ(deviceBlockSize(4097), 4608u);
  EXPECT_EQ(deviceBlockSize(uint64_t(1) << 30), uint64_t(1) << 30);
  for (uint64_t bytes = 1; bytes < (uint64_t(1) << 34); bytes = bytes * 3 + 1) {
    uint64_t size = deviceBlockSize(bytes);
    EXPECT_GE(size, bytes);
    EXPECT_LE(size, std::max<uint64_t>(512, bytes + bytes / 8 + 512));
    EXPECT_EQ(deviceBlockSize(size), size) << "classes are fixed points";
  }
}

} // namespace
