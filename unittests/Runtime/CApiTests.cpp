//===- CApiTests.cpp - The plain C interface ------------------------------===//

#include "TestSupport.h"

#include "doppler/runtime/CApi.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

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

TEST(CApi, OffloadsWaitsAndRunsInProgramOrder) {
  DopplerRtGraph *g = dopplerRtGraphCreate();
  int64_t shape[1] = {256};
  DopplerRtValue x = dopplerRtGraphAddInput(g, 0, DOPPLER_RT_F32, shape, 1);
  DopplerRtValue stash = dopplerRtGraphAddEvict(g, x);
  ASSERT_GE(stash, 0) << dopplerRtGraphError(g);
  DopplerRtValue doubled =
      dopplerRtGraphAddEinsum(g, 0, "i->i", "scale", nullptr, 2.0, &x, 1);
  DopplerRtValue back = dopplerRtGraphAddReload(g, stash, 0, &doubled, 1);
  ASSERT_GE(back, 0) << dopplerRtGraphError(g);
  DopplerRtValue both[2] = {doubled, back};
  DopplerRtValue sum =
      dopplerRtGraphAddEinsum(g, 0, "i,i->i", "add", nullptr, 0.0, both, 2);
  ASSERT_EQ(dopplerRtGraphMarkOutput(g, sum), 0);
  // Host values are read by reloads only, and are not outputs.
  EXPECT_LT(dopplerRtGraphAddEinsum(g, 0, "i->i", "exp", nullptr, 0.0, &stash,
                                    1),
            0);
  EXPECT_NE(std::string(dopplerRtGraphError(g)).find("host value"),
            std::string::npos);
  EXPECT_EQ(dopplerRtGraphMarkOutput(g, stash), -1);
  EXPECT_LT(dopplerRtGraphAddReload(g, x, 0, nullptr, 0), 0);
  EXPECT_LT(dopplerRtGraphAddReload(g, stash, 0, nullptr, -1), 0);

  DopplerRtExecutor *e = dopplerRtCpuExecutorCreate(1, 0.0, 0.0);
  ASSERT_EQ(dopplerRtExecutorSetMemoryPolicy(e, DOPPLER_RT_MEMORY_WAIT), 0);
  EXPECT_EQ(dopplerRtExecutorSetMemoryPolicy(e, 7), -1);
  ASSERT_EQ(dopplerRtExecutorSetReadyOrder(e, DOPPLER_RT_ORDER_PLANNED), 0);
  EXPECT_EQ(dopplerRtExecutorSetReadyOrder(e, 4), -1);
  ASSERT_EQ(dopplerRtExecutorSetReadyOrder(e, DOPPLER_RT_ORDER_PROGRAM), 0);
  // At most three buffers are live at once (doubled, the reload, the sum).
  ASSERT_EQ(dopplerRtExecutorSetMemoryLimit(e, 0, 3 * 1024), 0);
  std::vector<float> data = randomFloats(256, 3);
  const void *bound[1] = {data.data()};
  DopplerRtRun *run = dopplerRtExecutorRun(e, g, &x, bound, 1);
  ASSERT_EQ(dopplerRtRunError(run), nullptr) << dopplerRtRunError(run);
  std::vector<float> out(256);
  ASSERT_EQ(dopplerRtRunReadOutput(run, sum, out.data(), 1024), 0);
  for (size_t i = 0; i < out.size(); ++i)
    EXPECT_EQ(out[i], data[i] * 2 + data[i]);
  EXPECT_EQ(dopplerRtRunHostPeakBytes(run), 1024u);
  EXPECT_LE(dopplerRtRunPeakBytes(run, 0), 3u * 1024u);
  double doubledEnd = 0, backStart = 0, unused = 0;
  ASSERT_EQ(dopplerRtRunTaskTime(run, doubled, &unused, &doubledEnd), 0);
  ASSERT_EQ(dopplerRtRunTaskTime(run, back, &backStart, &unused), 0);
  EXPECT_GE(backStart, doubledEnd);
  dopplerRtRunDestroy(run);
  dopplerRtExecutorDestroy(e);
  dopplerRtGraphDestroy(g);
}

TEST(CApi, HeaderIsPlainC) { EXPECT_EQ(dopplerRtTestBuildGraphInC(), 1); }

} // namespace
