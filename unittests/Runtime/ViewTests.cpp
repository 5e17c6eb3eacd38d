//===- ViewTests.cpp - Slices and reshapes bound to their input -----------===//
//
// On the CPU backend, a slice that is one contiguous run of its input and a
// reshape alias the input's buffer instead of copying it
// (ExecutorViews.cpp): the same outputs as copies, no bytes of their own,
// and the input kept alive until the last reader of every view of it has
// run, even when other tasks allocate buffers of its size in between.
//
//===----------------------------------------------------------------------===//

#include "ExecutorTestSupport.h"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

using namespace doppler;
using namespace doppler::runtime;
using namespace doppler::runtime::test;

namespace {

std::vector<float> values(const HostTensor &tensor) {
  const int64_t count = numElements(tensor.shape);
  return std::vector<float>(tensor.f32(), tensor.f32() + count);
}

RunResult runWith(const TaskGraph &graph, const InputBindings &inputs,
                  bool views, uint64_t memoryLimit = 0) {
  ExecutorOptions options;
  options.sliceViews = views;
  if (memoryLimit)
    options.memoryLimits = {memoryLimit};
  Executor executor(unwrap(createCpuBackend(CpuBackendOptions())), options);
  return unwrap(runGuarded(executor, graph, inputs));
}

TEST(Views, ContiguousSlicesAndReshapesGiveTheCopiesResults) {
  TaskGraph g;
  ValueId x = unwrap(g.addInput(0, {4, 3}));
  // Rows 1-2: contiguous (a view); column 1: strided (a copy).
  ValueId rows = unwrap(g.addSlice(0, x, {1, 0}, {2, 3}));
  ValueId column = unwrap(g.addSlice(0, x, {0, 1}, {4, 1}));
  ValueId flat = unwrap(g.addReshape(0, rows, {6}));
  // One element in the middle of a row: contiguous, at an offset.
  ValueId one = unwrap(g.addSlice(0, x, {2, 1}, {1, 1}));
  ValueId sums =
      unwrap(g.addEinsum(0, "ij->i", JoinKind::Identity, AggKind::Add, {rows}));
  ValueId total =
      unwrap(g.addEinsum(0, "i->", JoinKind::Identity, AggKind::Add, {flat}));
  for (ValueId out : {rows, column, flat, one, sums, total})
    ASSERT_TRUE(g.markOutput(out).ok());
  std::vector<float> data(12);
  std::iota(data.begin(), data.end(), 1.0f);

  RunResult copied = runWith(g, {{x, data.data()}}, false);
  RunResult viewed = runWith(g, {{x, data.data()}}, true);
  EXPECT_EQ(values(viewed.outputs.at(rows)),
            (std::vector<float>{4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(values(viewed.outputs.at(column)),
            (std::vector<float>{2, 5, 8, 11}));
  EXPECT_EQ(values(viewed.outputs.at(one)), (std::vector<float>{8}));
  EXPECT_EQ(values(viewed.outputs.at(sums)), (std::vector<float>{15, 24}));
  EXPECT_EQ(values(viewed.outputs.at(total)), (std::vector<float>{39}));
  for (ValueId out : {rows, column, flat, one, sums, total})
    EXPECT_EQ(values(viewed.outputs.at(out)), values(copied.outputs.at(out)))
        << g.describe(out);
  // The views hold no bytes of their own: a lower peak.
  EXPECT_LT(viewed.devices[0].peakBytes, copied.devices[0].peakBytes);
}

TEST(Views, TheInputOutlivesEveryReaderOfItsViews) {
  // p is read only by its view v; v's reader c runs after a chain of
  // tasks that allocate buffers of p's size. Freed when v was bound, p's
  // block would be reused by the chain and c would read the chain's
  // values.
  constexpr int64_t n = 64;
  TaskGraph g;
  ValueId x = unwrap(g.addInput(0, {n}));
  ValueId p = unwrap(g.addEinsum(0, "i->i", JoinKind::Neg, std::nullopt, {x}));
  ValueId v = unwrap(g.addSlice(0, p, {0}, {n / 2}));
  ValueId t = x;
  for (int k = 0; k < 6; ++k)
    t = unwrap(g.addEinsum(0, "i->i", JoinKind::Scale, std::nullopt, {t}, 2));
  ValueId half = unwrap(g.addSlice(0, t, {n / 2}, {n / 2}));
  ValueId c = unwrap(g.addEinsum(0, "i,i->i", JoinKind::Add, std::nullopt,
                                 {v, half}));
  ASSERT_TRUE(g.markOutput(c).ok());
  std::vector<float> data(n);
  std::iota(data.begin(), data.end(), 0.0f);
  for (bool views : {false, true}) {
    RunResult run = runWith(g, {{x, data.data()}}, views);
    std::vector<float> got = values(run.outputs.at(c));
    for (int64_t i = 0; i < n / 2; ++i)
      ASSERT_EQ(got[i], -data[i] + 64.0f * data[n / 2 + i])
          << "element " << i << (views ? " with views" : " copied");
  }
}

TEST(Views, NoneUnderAMemoryLimit) {
  // A memory limit accounts every value's own bytes: views are off, and
  // the peak is the copies' peak.
  TaskGraph g;
  ValueId x = unwrap(g.addInput(0, {8, 8}));
  ValueId top = unwrap(g.addSlice(0, x, {0, 0}, {4, 8}));
  ValueId sum =
      unwrap(g.addEinsum(0, "ij->j", JoinKind::Identity, AggKind::Add, {top}));
  ASSERT_TRUE(g.markOutput(sum).ok());
  std::vector<float> data(64, 1.0f);
  RunResult copied = runWith(g, {{x, data.data()}}, false);
  RunResult limited = runWith(g, {{x, data.data()}}, true, 1 << 20);
  EXPECT_EQ(limited.devices[0].peakBytes, copied.devices[0].peakBytes);
  EXPECT_EQ(values(limited.outputs.at(sum)), std::vector<float>(8, 4.0f));
}

} // namespace
