//===- CApiTests.cpp - The plain C interface ------------------------------===//

#include "TestSupport.h"

#include "doppler/runtime/CApi.h"

#include <gtest/gtest.h>

#include <fstream>

using namespace doppler;
using namespace doppler::runtime::test;

// Defined in CApiHeader.c, which is compiled as C.
extern "C" int dopplerRtTestBuildGraphInC(void);

namespace {

TEST(CApi, BuildsRunsAndReadsBackAMatmul) {
  DopplerRtGraph *g = dopplerRtGraphCreate();
  ASSERT_NE(g, nullptr);
  int64_t aShape[2] = {32, 16}, bShape[2] = {16, 24};
  DopplerRtValue ab[2];
  ab[0] = dopplerRtGraphAddInput(g, 0, DOPPLER_RT_F32, aShape, 2);
  ab[1] = dopplerRtGraphAddInput(g, 1, DOPPLER_RT_F32, bShape, 2);
  ASSERT_GE(ab[1], 0) << dopplerRtGraphError(g);
  DopplerRtValue moved = dopplerRtGraphAddTransfer(g, ab[1], 0);
  DopplerRtValue operands[2] = {ab[0], moved};
  DopplerRtValue c = dopplerRtGraphAddEinsum(g, 0, "ij,jk->ik", "mul", "add",
                                             0.0, operands, 2);
  ASSERT_GE(c, 0) << dopplerRtGraphError(g);
  DopplerRtValue scaled =
      dopplerRtGraphAddEinsum(g, 0, "ik->ik", "scale", nullptr, 0.5, &c, 1);
  ASSERT_GE(scaled, 0) << dopplerRtGraphError(g);
  ASSERT_EQ(dopplerRtGraphMarkOutput(g, scaled), 0);
  EXPECT_STREQ(dopplerRtGraphError(g), "");

  DopplerRtExecutor *e = dopplerRtCpuExecutorCreate(2, 1e9, 1e-5);
  ASSERT_NE(e, nullptr);
  std::vector<float> a = randomFloats(32 * 16, 1), b = randomFloats(16 * 24, 2);
  const void *data[2] = {a.data(), b.data()};
  DopplerRtRun *run = dopplerRtExecutorRun(e, g, ab, data, 2);
  ASSERT_NE(run, nullptr);
  ASSERT_EQ(dopplerRtRunError(run), nullptr) << dopplerRtRunError(run);

  std::vector<float> out(32 * 24);
  ASSERT_EQ(dopplerRtRunReadOutput(run, scaled, out.data(),
                                   out.size() * sizeof(float)),
            0);
  EXPECT_EQ(dopplerRtRunReadOutput(run, scaled, out.data(), 4), -1);
  EXPECT_EQ(dopplerRtRunReadOutput(run, c, out.data(), 0), -1);
  std::vector<double> expected = referenceEinsum(
      *EinsumSpec::parse("ij,jk->ik"), JoinKind::Mul, AggKind::Add, 0,
      {toDouble(a), toDouble(b)}, {{32, 16}, {16, 24}});
  for (double &v : expected)
    v *= 0.5;
  EXPECT_LE(relativeError(out.data(), expected), 1e-5);

  double start = -1, end = -1;
  ASSERT_EQ(dopplerRtRunTaskTime(run, c, &start, &end), 0);
  EXPECT_LE(0.0, start);
  EXPECT_LE(start, end);
  EXPECT_LE(end, dopplerRtRunMakespan(run));
  EXPECT_EQ(dopplerRtRunTaskTime(run, ab[0], &start, &end), -1);
  EXPECT_GE(dopplerRtRunPeakBytes(run, 0), 32u * 24u * 4u);

  std::string path = ::testing::TempDir() + "/doppler_capi_trace.json";
  EXPECT_EQ(dopplerRtRunWriteTrace(run, path.c_str()), 0);
  std::ifstream trace(path);
  EXPECT_TRUE(trace.good());

  dopplerRtRunDestroy(run);
  dopplerRtExecutorDestroy(e);
  dopplerRtGraphDestroy(g);
}

TEST(CApi, ReportsErrorsWithoutCrashing) {
  DopplerRtGraph *g = dopplerRtGraphCreate();
  int64_t shape[2] = {4, 4};
  DopplerRtValue x = dopplerRtGraphAddInput(g, 0, DOPPLER_RT_F32, shape, 2);
  EXPECT_LT(dopplerRtGraphAddInput(g, 0, 99, shape, 2), 0);
  EXPECT_NE(std::string(dopplerRtGraphError(g)).find("element type"),
            std::string::npos);
  EXPECT_LT(
      dopplerRtGraphAddEinsum(g, 0, "ij->ij", "frobnicate", nullptr, 0, &x, 1),
      0);
  EXPECT_NE(std::string(dopplerRtGraphError(g)).find("frobnicate"),
            std::string::npos);
  EXPECT_LT(dopplerRtGraphAddEinsum(g, 0, "ij->i", "identity", "avg", 0, &x, 1),
            0);
  EXPECT_LT(dopplerRtGraphAddSlice(g, 0, x, nullptr, nullptr, 2), 0);
  EXPECT_EQ(dopplerRtGraphMarkOutput(g, 1234), -1);
  EXPECT_EQ(dopplerRtGraphAddInput(nullptr, 0, DOPPLER_RT_F32, shape, 2), -1);
  EXPECT_EQ(dopplerRtCpuExecutorCreate(0, 0, 0), nullptr);
  EXPECT_EQ(dopplerRtCpuExecutorCreate(1, -5, 0), nullptr);

  // Assemble through the flat extents array, then a run with a missing
  // binding fails with a message.
  int64_t offsets[2] = {0, 0}, sizes[2] = {2, 4}, lower[2] = {2, 0};
  DopplerRtValue blocks[2] = {
      dopplerRtGraphAddSlice(g, 0, x, offsets, sizes, 2),
      dopplerRtGraphAddSlice(g, 0, x, lower, sizes, 2)};
  int64_t grid[2] = {2, 1}, extents[3] = {2, 2, 4};
  DopplerRtValue whole =
      dopplerRtGraphAddAssemble(g, 0, grid, 2, extents, blocks, 2);
  ASSERT_GE(whole, 0) << dopplerRtGraphError(g);
  DopplerRtExecutor *e = dopplerRtCpuExecutorCreate(1, 0, 0);
  DopplerRtRun *run = dopplerRtExecutorRun(e, g, nullptr, nullptr, 0);
  ASSERT_NE(run, nullptr);
  ASSERT_NE(dopplerRtRunError(run), nullptr);
  EXPECT_NE(std::string(dopplerRtRunError(run)).find("no data bound"),
            std::string::npos);
  EXPECT_EQ(dopplerRtRunMakespan(run), 0.0);
  EXPECT_EQ(dopplerRtRunWriteTrace(run, "/tmp/unused.json"), -1);
  dopplerRtRunDestroy(run);
  EXPECT_EQ(dopplerRtExecutorSetMemoryLimit(e, 3, 10), -1);
  dopplerRtExecutorDestroy(e);
  dopplerRtGraphDestroy(g);
}

TEST(CApi, HeaderIsPlainC) { EXPECT_EQ(dopplerRtTestBuildGraphInC(), 1); }

} // namespace
