//===- GatherTests.cpp - The gather task, end to end ----------------------===//
//
// Integer element types and the gather task: the builder's checks, the CPU
// kernel (axis 0 and a middle axis, i32 and i64 indices), an out-of-range
// index as an error naming the task, the plan file and the C API.
//
//===----------------------------------------------------------------------===//

#include "ExecutorTestSupport.h"

#include "doppler/runtime/CApi.h"
#include "doppler/runtime/CpuKernels.h"
#include "doppler/runtime/Plan.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <string>
#include <vector>

using namespace doppler;
using namespace doppler::runtime;
using namespace doppler::runtime::test;

namespace {

TEST(Gather, IntegerTypesHaveNamesAndSizes) {
  EXPECT_EQ(elementSize(ElementType::I32), 4u);
  EXPECT_EQ(elementSize(ElementType::I64), 8u);
  EXPECT_EQ(parseElementType("i64"), ElementType::I64);
  EXPECT_EQ(elementTypeName(ElementType::I32), "i32");
}

TEST(Gather, BuilderChecksAxisIndicesAndShape) {
  TaskGraph g;
  ValueId table = unwrap(g.addInput(0, {10, 4}));
  ValueId ids = unwrap(g.addInput(0, {2, 3}, ElementType::I64));
  ValueId rows = unwrap(g.addGather(0, table, ids, 0));
  EXPECT_EQ(g.task(rows).shape, (Shape{2, 3, 4}));
  EXPECT_EQ(g.task(rows).type, ElementType::F32);
  EXPECT_EQ(g.describe(rows), "%2 gather axis 0");
  ValueId cols = unwrap(g.addGather(0, table, ids, 1));
  EXPECT_EQ(g.task(cols).shape, (Shape{10, 2, 3}));
  EXPECT_TRUE(mentions(g.addGather(0, table, ids, 2).status(),
                       "axis 2 is outside [0, 2)"));
  ValueId half = unwrap(g.addInput(0, {2}, ElementType::F16));
  EXPECT_TRUE(mentions(g.addGather(0, table, half, 0).status(),
                       "must be i32, i64, f32 or f64"));
  // Float indices (integers carried as floats) are checked where they run.
  EXPECT_EQ(g.task(unwrap(g.addGather(0, table, table, 0))).shape,
            (Shape{10, 4, 4}));
  // A conversion einsum takes integers: identity, same term, to a float.
  EXPECT_EQ(g.task(unwrap(g.addEinsum(0, "ij->ij", JoinKind::Identity,
                                      std::nullopt, {ids}, 0,
                                      ElementType::F64)))
                .type,
            ElementType::F64);
  EXPECT_TRUE(mentions(g.addEinsum(0, "ij->ji", JoinKind::Identity,
                                   std::nullopt, {ids}, 0, ElementType::F64)
                           .status(),
                       "only the identity join over one input with the "
                       "output's term converts"));
  EXPECT_TRUE(mentions(
      g.addEinsum(0, "ij->ij", JoinKind::Identity, std::nullopt, {ids})
          .status(),
      "einsums take floating-point tensors only"));
}

TEST(Gather, FloatIndicesMustBeIntegersAndConversionsExact) {
  std::vector<float> table = {0, 1, 2, 3, 4, 5};
  std::vector<double> good = {2, 0}, half = {0, 1.5}, nan = {NAN, 0};
  std::vector<float> out(4);
  ASSERT_TRUE(cpu::gather(table.data(), {3, 2}, good.data(), ElementType::F64,
                          2, 0, out.data(), ElementType::F32));
  EXPECT_EQ(out, (std::vector<float>{4, 5, 0, 1}));
  EXPECT_TRUE(mentions(cpu::gather(table.data(), {3, 2}, half.data(),
                                   ElementType::F64, 2, 0, out.data(),
                                   ElementType::F32),
                       "index 1.5 at position 1 of the indices is not an "
                       "integer in [0, 3)"));
  EXPECT_TRUE(mentions(cpu::gather(table.data(), {3, 2}, nan.data(),
                                   ElementType::F64, 2, 0, out.data(),
                                   ElementType::F32),
                       "index nan at position 0"));
  std::vector<int64_t> ints = {3, -7, (int64_t{1} << 24) + 1};
  std::vector<double> wide(3);
  ASSERT_TRUE(cpu::convertElements(ints.data(), ElementType::I64, wide.data(),
                                   ElementType::F64, 3));
  EXPECT_EQ(wide, (std::vector<double>{3, -7, 16777217}));
  std::vector<float> narrow(3);
  EXPECT_TRUE(mentions(cpu::convertElements(ints.data(), ElementType::I64,
                                            narrow.data(), ElementType::F32,
                                            3),
                       "the integer 16777217 at position 2 has no exact f32 "
                       "value"));
}

TEST(Gather, CpuKernelCopiesRowsAlongAnyAxis) {
  std::vector<float> table(2 * 5 * 3);
  std::iota(table.begin(), table.end(), 0.0f);
  std::vector<int32_t> ids = {4, 0, 4};
  std::vector<float> out(2 * 3 * 3);
  ASSERT_TRUE(cpu::gather(table.data(), {2, 5, 3}, ids.data(),
                          ElementType::I32, 3, 1, out.data(),
                          ElementType::F32));
  for (int p = 0; p < 2; ++p)
    for (int i = 0; i < 3; ++i)
      for (int q = 0; q < 3; ++q)
        EXPECT_EQ(out[(p * 3 + i) * 3 + q], table[(p * 5 + ids[i]) * 3 + q]);
  std::vector<int64_t> bad = {1, -1};
  Status status = cpu::gather(table.data(), {2, 5, 3}, bad.data(),
                              ElementType::I64, 2, 1, out.data(),
                              ElementType::F32);
  EXPECT_TRUE(mentions(status, "index -1 at position 1 of the indices is "
                               "outside [0, 5)"));
}

TEST(Gather, RunsAnEmbeddingAndNamesTheTaskOfABadIndex) {
  TaskGraph g;
  ValueId table = unwrap(g.addInput(0, {4, 2}));
  ValueId ids = unwrap(g.addInput(0, {3}, ElementType::I64));
  ValueId moved = unwrap(g.addTransfer(ids, 1));
  ValueId tableMoved = unwrap(g.addTransfer(table, 1));
  ValueId rows = unwrap(g.addGather(1, tableMoved, moved, 0));
  ASSERT_TRUE(g.markOutput(rows).ok());
  std::vector<float> data = {0, 1, 10, 11, 20, 21, 30, 31};
  std::vector<int64_t> good = {3, 0, 2};
  CpuBackendOptions options;
  options.numDevices = 2;
  Executor executor(unwrap(createCpuBackend(options)));
  RunResult run = unwrap(
      runGuarded(executor, g, {{table, data.data()}, {ids, good.data()}}));
  const HostTensor &out = run.outputs.at(rows);
  EXPECT_EQ(out.shape, (Shape{3, 2}));
  EXPECT_EQ(std::vector<float>(out.f32(), out.f32() + 6),
            (std::vector<float>{30, 31, 0, 1, 20, 21}));
  std::vector<int64_t> bad = {3, 4, 0};
  Result<RunResult> failed =
      runGuarded(executor, g, {{table, data.data()}, {ids, bad.data()}});
  ASSERT_FALSE(failed);
  EXPECT_TRUE(mentions(failed.status(), "gather axis 0"))
      << failed.message();
  EXPECT_TRUE(mentions(failed.status(), "index 4 at position 1"))
      << failed.message();
}

TEST(Gather, PlanJsonAndSeededIndicesInRange) {
  Plan plan;
  plan.function = "embed";
  int64_t a = plan.addArgument(ElementType::F32, {7, 3});
  int64_t b = plan.addArgument(ElementType::I32, {16});
  ValueId table = unwrap(plan.graph.addInput(0, {7, 3}));
  ValueId ids = unwrap(plan.graph.addInput(0, {16}, ElementType::I32));
  ASSERT_TRUE(plan.bindArgument(table, a).ok());
  ASSERT_TRUE(plan.bindArgument(ids, b).ok());
  ValueId rows = unwrap(plan.graph.addGather(0, table, ids, 0));
  ASSERT_TRUE(plan.addResult(rows).ok());
  std::string text = planToJson(plan);
  EXPECT_NE(text.find("\"axis\":0"), std::string::npos) << text;
  EXPECT_NE(text.find("\"i32\""), std::string::npos) << text;
  Plan loaded = unwrap(planFromJson(text, "embed.json"));
  EXPECT_EQ(loaded.graph.task(rows).kind, TaskKind::Gather);
  EXPECT_EQ(seededIndexBound(loaded.graph), 7);
  HostArguments args = unwrap(makeSeededArguments(loaded, 3));
  const auto *seeded =
      reinterpret_cast<const int32_t *>(args.buffers[1].data());
  for (int i = 0; i < 16; ++i) {
    EXPECT_GE(seeded[i], 0);
    EXPECT_LT(seeded[i], 7);
  }
  std::string broken = text;
  broken.replace(broken.find("\"axis\":0"), 8, "\"axis\":5");
  EXPECT_FALSE(planFromJson(broken, "embed.json"));
}

TEST(Gather, CApiBuildsAGather) {
  DopplerRtGraph *graph = dopplerRtGraphCreate();
  int64_t tableShape[2] = {5, 2}, idsShape[1] = {3};
  DopplerRtValue table =
      dopplerRtGraphAddInput(graph, 0, DOPPLER_RT_F32, tableShape, 2);
  DopplerRtValue ids =
      dopplerRtGraphAddInput(graph, 0, DOPPLER_RT_I64, idsShape, 1);
  EXPECT_GE(dopplerRtGraphAddGather(graph, 0, table, ids, 0), 0);
  EXPECT_LT(dopplerRtGraphAddGather(graph, 0, table, ids, 3), 0);
  dopplerRtGraphDestroy(graph);
}

} // namespace
