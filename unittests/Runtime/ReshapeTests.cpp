//===- ReshapeTests.cpp - The reshape task, end to end --------------------===//
//
// A reshape task reads its input's elements in row-major order as a tensor
// of another shape: the builder's checks, a CPU run (the output a copy of
// the input, readers see the new shape), the plan file's field and its
// errors, and the C API.
//
//===----------------------------------------------------------------------===//

#include "ExecutorTestSupport.h"

#include "doppler/runtime/CApi.h"
#include "doppler/runtime/Plan.h"

#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

using namespace doppler;
using namespace doppler::runtime;
using namespace doppler::runtime::test;

namespace {

TEST(Reshape, BuilderChecksCountDeviceAndShape) {
  TaskGraph g;
  ValueId x = unwrap(g.addInput(0, {2, 3, 4}, ElementType::F64));
  Result<ValueId> split = g.addReshape(0, x, {6, 2, 2});
  ASSERT_TRUE(split) << split.message();
  EXPECT_EQ(g.task(*split).kind, TaskKind::Reshape);
  EXPECT_EQ(g.task(*split).shape, (Shape{6, 2, 2}));
  EXPECT_EQ(g.task(*split).type, ElementType::F64);
  EXPECT_EQ(g.describe(*split), "%1 reshape");
  // To rank 0 and back needs one element.
  ValueId one = unwrap(g.addInput(0, {1, 1}));
  EXPECT_TRUE(g.addReshape(0, one, {}));
  EXPECT_TRUE(mentions(g.addReshape(0, x, {5, 5}).status(),
                       "reshape: shape [5, 5] has 25 elements but the input "
                       "%0 ([2, 3, 4]) has 24"));
  EXPECT_TRUE(mentions(g.addReshape(1, x, {24}).status(),
                       "lives on device 0, not on the task's device 1"));
  EXPECT_TRUE(mentions(g.addReshape(0, x, {-24, -1}).status(), "negative"));
  EXPECT_TRUE(mentions(g.addReshape(0, 99, {24}).status(), "does not exist"));
  // A product that would wrap is refused before it is compared.
  EXPECT_TRUE(mentions(g.addReshape(0, x, {int64_t(1) << 62, 8}).status(),
                       "more than the limit of 2^62"));
  ValueId stash = unwrap(g.addEvict(x));
  EXPECT_TRUE(mentions(g.addReshape(0, stash, {24}).status(), "host value"));
}

TEST(Reshape, RunsAsACopyThatReadersSeeInTheNewShape) {
  TaskGraph g;
  ValueId x = unwrap(g.addInput(0, {6}));
  ValueId view = unwrap(g.addReshape(0, x, {2, 3}));
  // Row sums of the [2, 3] view: x0 + x1 + x2 and x3 + x4 + x5.
  ValueId rows = unwrap(
      g.addEinsum(0, "ij->i", JoinKind::Identity, AggKind::Add, {view}));
  ValueId back = unwrap(g.addReshape(0, view, {6}));
  for (ValueId out : {view, rows, back})
    ASSERT_TRUE(g.markOutput(out).ok());

  std::vector<float> data(6);
  std::iota(data.begin(), data.end(), 1.0f);
  CpuBackendOptions options;
  Executor executor(unwrap(createCpuBackend(options)));
  RunResult run = unwrap(runGuarded(executor, g, {{x, data.data()}}));
  const HostTensor &viewOut = run.outputs.at(view);
  EXPECT_EQ(viewOut.shape, (Shape{2, 3}));
  EXPECT_EQ(std::vector<float>(viewOut.f32(), viewOut.f32() + 6), data);
  EXPECT_EQ(run.outputs.at(rows).f32()[0], 6.0f);
  EXPECT_EQ(run.outputs.at(rows).f32()[1], 15.0f);
  EXPECT_EQ(std::vector<float>(run.outputs.at(back).f32(),
                               run.outputs.at(back).f32() + 6),
            data);
}

Plan makeReshapePlan() {
  Plan plan;
  plan.function = "heads";
  int64_t a = plan.addArgument(ElementType::F32, {2, 8});
  ValueId x = unwrap(plan.graph.addInput(0, {2, 8}));
  EXPECT_TRUE(plan.bindArgument(x, a).ok());
  ValueId heads = unwrap(plan.graph.addReshape(0, x, {2, 2, 4}));
  ValueId moved = unwrap(plan.graph.addTransfer(heads, 1));
  ValueId flat = unwrap(plan.graph.addReshape(1, moved, {16}));
  EXPECT_TRUE(plan.addResult(flat).ok());
  return plan;
}

TEST(Reshape, PlanJsonRoundTripKeepsTheShape) {
  Plan plan = makeReshapePlan();
  std::string text = planToJson(plan);
  EXPECT_NE(text.find("\"kind\":\"reshape\",\"shape\":[2,2,4]"),
            std::string::npos)
      << text;
  Result<Plan> loaded = planFromJson(text, "heads.json");
  ASSERT_TRUE(loaded.ok()) << loaded.message();
  EXPECT_EQ(planToJson(*loaded), text);
  EXPECT_EQ(loaded->graph.task(1).kind, TaskKind::Reshape);
  EXPECT_EQ(loaded->graph.task(3).shape, (Shape{16}));

  CpuBackendOptions options;
  options.numDevices = 2;
  Executor executor(unwrap(createCpuBackend(options)));
  HostArguments args = unwrap(makeSeededArguments(loaded->arguments, 5));
  RunResult run =
      unwrap(runGuarded(executor, loaded->graph, bindArguments(*loaded, args)));
  std::vector<HostTensor> out = unwrap(collectResults(*loaded, run));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].bytes, args.buffers[0]);
}

TEST(Reshape, PlanErrorsNameTheTaskAndField) {
  std::string good = planToJson(makeReshapePlan());
  auto edited = [&](const std::string &from, const std::string &to) {
    std::string text = good;
    size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos)
      text.replace(at, from.size(), to);
    Result<Plan> plan = planFromJson(text, "p.json");
    return plan.ok() ? std::string() : plan.message();
  };
  const std::string reshape = "\"kind\":\"reshape\",\"shape\":[2,2,4]";
  EXPECT_EQ(edited(reshape, "\"kind\":\"reshape\""),
            "p.json: tasks[1]: missing field 'shape'");
  EXPECT_NE(edited(reshape, "\"kind\":\"reshape\",\"shape\":[3,4]")
                .find("p.json: tasks[1]: reshape: shape [3, 4] has 12 "
                      "elements but the input %0 ([2, 8]) has 16"),
            std::string::npos);
  EXPECT_NE(edited(reshape, "\"kind\":\"reshape\",\"shape\":\"16\"")
                .find("tasks[1].shape"),
            std::string::npos);
  EXPECT_NE(edited("\"inputs\":[0],\"kind\":\"reshape\"",
                   "\"inputs\":[],\"kind\":\"reshape\"")
                .find("a reshape task takes 1 input(s), 0 given"),
            std::string::npos);
}

TEST(Reshape, CApiAddsAndChecksIt) {
  DopplerRtGraph *g = dopplerRtGraphCreate();
  int64_t shape[2] = {3, 4}, flat[1] = {12}, wrong[1] = {13};
  DopplerRtValue x = dopplerRtGraphAddInput(g, 0, DOPPLER_RT_F32, shape, 2);
  DopplerRtValue y = dopplerRtGraphAddReshape(g, 0, x, flat, 1);
  ASSERT_GE(y, 0) << dopplerRtGraphError(g);
  EXPECT_LT(dopplerRtGraphAddReshape(g, 0, x, wrong, 1), 0);
  EXPECT_NE(std::string(dopplerRtGraphError(g)).find("13 elements"),
            std::string::npos);
  EXPECT_LT(dopplerRtGraphAddReshape(g, 0, x, nullptr, 1), 0);
  ASSERT_EQ(dopplerRtGraphMarkOutput(g, y), 0);

  DopplerRtExecutor *e = dopplerRtCpuExecutorCreate(1, 0, 0);
  std::vector<float> data(12);
  std::iota(data.begin(), data.end(), 0.5f);
  const void *bound[1] = {data.data()};
  DopplerRtRun *run = dopplerRtExecutorRun(e, g, &x, bound, 1);
  ASSERT_NE(run, nullptr);
  ASSERT_EQ(dopplerRtRunError(run), nullptr) << dopplerRtRunError(run);
  std::vector<float> out(12);
  ASSERT_EQ(dopplerRtRunReadOutput(run, y, out.data(), 12 * sizeof(float)), 0);
  EXPECT_EQ(out, data);
  dopplerRtRunDestroy(run);
  dopplerRtExecutorDestroy(e);
  dopplerRtGraphDestroy(g);
}

} // namespace
