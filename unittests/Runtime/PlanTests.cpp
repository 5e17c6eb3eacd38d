//===- PlanTests.cpp - Plans: JSON round trip, validation, seeding --------===//

#include "doppler/runtime/CApi.h"
#include "doppler/runtime/CpuBackend.h"
#include "doppler/runtime/Plan.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <random>

using namespace doppler;
using namespace doppler::runtime;

namespace {

/// A small plan with every task kind but delay: two arguments (the first
/// read on two devices), slices, fill, assemble, einsums, transfers.
Plan makePlan() {
  Plan plan;
  plan.function = "f";
  plan.predictedMakespan = 1.5e-5;
  int64_t a = plan.addArgument(ElementType::F32, {4, 6});
  int64_t b = plan.addArgument(ElementType::F32, {6, 2});
  TaskGraph &g = plan.graph;
  ValueId a0 = *g.addInput(0, {4, 6});
  ValueId a1 = *g.addInput(1, {4, 6});
  ValueId b1 = *g.addInput(1, {6, 2});
  EXPECT_TRUE(plan.bindArgument(a0, a).ok());
  EXPECT_TRUE(plan.bindArgument(a1, a).ok());
  EXPECT_TRUE(plan.bindArgument(b1, b).ok());
  ValueId top = *g.addSlice(0, a0, {0, 0}, {2, 6});
  ValueId bottom = *g.addSlice(1, a1, {2, 0}, {2, 6});
  ValueId b0 = *g.addTransfer(b1, 0);
  ValueId c0 =
      *g.addEinsum(0, "ij,jk->ik", JoinKind::Mul, AggKind::Add, {top, b0});
  ValueId c1 =
      *g.addEinsum(1, "ij,jk->ik", JoinKind::Mul, AggKind::Add, {bottom, b1});
  ValueId c1on0 = *g.addTransfer(c1, 0);
  ValueId whole = *g.addAssemble(0, {{2, 2}, {2}}, {c0, c1on0});
  ValueId scaled =
      *g.addEinsum(0, "ij->ij", JoinKind::Scale, std::nullopt, {whole}, 0.5);
  ValueId ones = *g.addFill(0, {4, 2}, 1.0);
  ValueId sum =
      *g.addEinsum(0, "ij,ij->ij", JoinKind::Add, std::nullopt, {scaled, ones});
  (void)g.setPriority(sum, 42);
  (void)g.setLabel(sum, "the sum");
  EXPECT_TRUE(plan.addResult(sum).ok());
  EXPECT_TRUE(plan.addResult(c1).ok());
  return plan;
}

std::vector<HostTensor> runPlan(const Plan &plan, uint64_t seed) {
  CpuBackendOptions options;
  options.numDevices = 2;
  Executor executor(std::move(*createCpuBackend(options)));
  HostArguments arguments = makeSeededArguments(plan.arguments, seed).value();
  Result<RunResult> run =
      executor.run(plan.graph, bindArguments(plan, arguments));
  EXPECT_TRUE(run.ok()) << run.message();
  if (!run)
    return {};
  return *collectResults(plan, *run);
}

TEST(Plan, JsonRoundTripIsExactAndRunsTheSame) {
  Plan plan = makePlan();
  ASSERT_TRUE(plan.verify().ok()) << plan.verify().message();
  std::string text = planToJson(plan);
  Result<Plan> loaded = planFromJson(text, "plan.json");
  ASSERT_TRUE(loaded.ok()) << loaded.message();
  EXPECT_EQ(planToJson(*loaded), text);
  EXPECT_EQ(loaded->function, "f");
  ASSERT_TRUE(loaded->predictedMakespan.has_value());
  EXPECT_EQ(*loaded->predictedMakespan, 1.5e-5);
  EXPECT_EQ(loaded->graph.task(loaded->results[0]).priority, 42);
  EXPECT_EQ(loaded->graph.task(loaded->results[0]).label, "the sum");

  std::vector<HostTensor> before = runPlan(plan, 7),
                          after = runPlan(*loaded, 7);
  ASSERT_EQ(before.size(), 2u);
  ASSERT_EQ(after.size(), 2u);
  for (size_t i = 0; i < before.size(); ++i)
    EXPECT_EQ(before[i].bytes, after[i].bytes);
}

TEST(Plan, ComputesWhatTheArgumentsImply) {
  Plan plan = makePlan();
  HostArguments args = makeSeededArguments(plan.arguments, 3).value();
  const float *a = reinterpret_cast<const float *>(args.buffers[0].data());
  const float *b = reinterpret_cast<const float *>(args.buffers[1].data());
  std::vector<HostTensor> out = runPlan(plan, 3);
  ASSERT_EQ(out.size(), 2u);
  for (int i = 0; i < 4; ++i)
    for (int k = 0; k < 2; ++k) {
      double dot = 0;
      for (int j = 0; j < 6; ++j)
        dot += double(a[i * 6 + j]) * double(b[j * 2 + k]);
      EXPECT_NEAR(elementAt(out[0], i * 2 + k), 0.5 * dot + 1.0, 1e-5);
    }
}

TEST(Plan, SeedingMatchesTheInterpreterRecipe) {
  // Arguments in order from one generator; 53 bits -> [-1, 1), rounded.
  std::vector<PlanArgument> arguments = {{ElementType::F64, {3}},
                                         {ElementType::F32, {2, 2}},
                                         {ElementType::F16, {5}}};
  HostArguments args = makeSeededArguments(arguments, 11).value();
  std::mt19937_64 generator(11);
  auto next = [&] {
    return 2.0 * (static_cast<double>(generator() >> 11) * 0x1.0p-53) - 1.0;
  };
  const double *f64 = reinterpret_cast<const double *>(args.buffers[0].data());
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(f64[i], next());
  const float *f32 = reinterpret_cast<const float *>(args.buffers[1].data());
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(f32[i], static_cast<float>(next()));
  const uint16_t *f16 =
      reinterpret_cast<const uint16_t *>(args.buffers[2].data());
  for (int i = 0; i < 5; ++i) {
    double value = next();
    float back = halfToFloat(f16[i]);
    EXPECT_LE(std::fabs(back - value), 0x1.0p-11) << i;
  }
}

TEST(Plan, DoubleToHalfRoundsOnceToNearestEven) {
  EXPECT_EQ(doubleToHalf(1.0), 0x3c00);
  EXPECT_EQ(doubleToHalf(-2.0), 0xc000);
  EXPECT_EQ(doubleToHalf(65504.0), 0x7bff);
  EXPECT_EQ(doubleToHalf(65519.99), 0x7bff);
  EXPECT_EQ(doubleToHalf(65520.0), 0x7c00);
  EXPECT_EQ(doubleToHalf(0x1.0p-24), 0x0001);
  EXPECT_EQ(doubleToHalf(0x1.0p-25), 0x0000);       // tie to even (0)
  EXPECT_EQ(doubleToHalf(0x1.8p-24), 0x0002);       // tie to even (2)
  EXPECT_EQ(doubleToHalf(1.0 + 0x1.0p-11), 0x3c00); // tie to even
  EXPECT_EQ(doubleToHalf(1.0 + 0x1.8p-10), 0x3c02); // tie to even
  // Just above a tie: going through float would round to the tie first and
  // then to even (down); one rounding goes up.
  EXPECT_EQ(doubleToHalf(1.0 + 0x1.0p-11 + 0x1.0p-40), 0x3c01);
  EXPECT_TRUE(std::isnan(halfToFloat(doubleToHalf(std::nan("")))));
}

std::string errorOf(const std::string &text) {
  Result<Plan> plan = planFromJson(text, "p.json");
  EXPECT_FALSE(plan.ok());
  return plan.ok() ? "" : plan.message();
}

TEST(Plan, RejectsBadFilesWithOneLineMessages) {
  std::string good = planToJson(makePlan());
  EXPECT_NE(errorOf(good.substr(0, good.size() / 2)).find("truncated"),
            std::string::npos);
  EXPECT_NE(errorOf("[1, 2]").find("expected a JSON object"),
            std::string::npos);
  EXPECT_NE(errorOf("{\"format\": \"x\"}").find("not a Doppler plan"),
            std::string::npos);

  std::string wrongVersion = good;
  wrongVersion.replace(wrongVersion.find("\"version\": 1"), 12,
                       "\"version\": 9");
  EXPECT_NE(errorOf(wrongVersion).find("unsupported plan version 9"),
            std::string::npos);

  {
    // A dangling input id.
    std::string dangling = good;
    size_t at = dangling.find("\"inputs\":[0]");
    ASSERT_NE(at, std::string::npos);
    dangling.replace(at, 12, "\"inputs\":[99]");
    std::string message = errorOf(dangling);
    EXPECT_NE(message.find("refers to task 99"), std::string::npos) << message;
  }
  {
    std::string badResult = good;
    size_t at = badResult.find("\"results\": [");
    badResult.insert(at + 12, "77, ");
    EXPECT_NE(errorOf(badResult).find("task 77 does not exist"),
              std::string::npos);
  }
  {
    std::string badShape = good;
    size_t at = badShape.find("\"shape\":[2,6]");
    ASSERT_NE(at, std::string::npos);
    badShape.replace(at, 13, "\"shape\":[2,7]");
    EXPECT_NE(errorOf(badShape).find("outside"), std::string::npos)
        << errorOf(badShape);
  }
  for (const std::string &message :
       {errorOf(good.substr(0, good.size() / 2)), errorOf(wrongVersion)})
    EXPECT_EQ(message.find('\n'), std::string::npos);
}

/// An argument evicted on device 0 while it is scaled there, then
/// reloaded onto device 1 once the scale is done, and added to a copy of
/// the scale's result.
Plan makeOffloadPlan() {
  Plan plan;
  plan.function = "offload";
  int64_t a = plan.addArgument(ElementType::F32, {8, 4});
  TaskGraph &g = plan.graph;
  ValueId x = *g.addInput(0, {8, 4});
  EXPECT_TRUE(plan.bindArgument(x, a).ok());
  ValueId stash = *g.addEvict(x);                                      // 1
  ValueId scaled =                                                     // 2
      *g.addEinsum(0, "ij->ij", JoinKind::Scale, std::nullopt, {x}, 3.0);
  ValueId back = *g.addReload(stash, 1, {scaled});                     // 3
  ValueId moved = *g.addTransfer(scaled, 1);                           // 4
  ValueId sum = *g.addEinsum(1, "ij,ij->ij", JoinKind::Add, std::nullopt,
                             {back, moved});
  EXPECT_TRUE(plan.addResult(sum).ok());
  return plan;
}

TEST(Plan, EvictAndReloadRoundTrip) {
  Plan plan = makeOffloadPlan();
  std::string text = planToJson(plan);
  EXPECT_NE(text.find("\"kind\":\"evict\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"after\":[2]"), std::string::npos) << text;
  Result<Plan> loaded = planFromJson(text, "offload.json");
  ASSERT_TRUE(loaded.ok()) << loaded.message();
  EXPECT_EQ(planToJson(*loaded), text);
  EXPECT_TRUE(loaded->graph.task(1).onHost);
  EXPECT_EQ(loaded->graph.task(3).after, (std::vector<ValueId>{2}));
  std::vector<HostTensor> expected = runPlan(plan, 4);
  std::vector<HostTensor> actual = runPlan(*loaded, 4);
  ASSERT_EQ(actual.size(), 1u);
  EXPECT_EQ(actual[0].bytes, expected[0].bytes);
  // sum = x + 3x.
  HostArguments args = makeSeededArguments(plan.arguments, 4).value();
  const float *x = reinterpret_cast<const float *>(args.buffers[0].data());
  for (int i = 0; i < 32; ++i)
    EXPECT_EQ(actual[0].f32()[i], x[i] + x[i] * 3.0f);
}

TEST(Plan, RejectsBadOffloadTasks) {
  std::string good = planToJson(makeOffloadPlan());
  auto edited = [&](const std::string &from, const std::string &to) {
    std::string text = good;
    size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos)
      text.replace(at, from.size(), to);
    return errorOf(text);
  };
  // Unknown and later ids in "after" (a later one would make a cycle).
  EXPECT_EQ(edited("\"after\":[2]", "\"after\":[99]"),
            "p.json: tasks[3]: after 0 refers to task 99, which does not "
            "exist before this task (a task may only wait for earlier tasks)");
  EXPECT_NE(edited("\"after\":[2]", "\"after\":[3]")
                .find("after 0 refers to task 3, which does not exist before"),
            std::string::npos);
  EXPECT_NE(edited("\"after\":[2]", "\"after\":\"2\"").find("after"),
            std::string::npos);
  // A reload of a device value.
  EXPECT_NE(edited("\"inputs\":[1],\"kind\":\"reload\"",
                   "\"inputs\":[0],\"kind\":\"reload\"")
                .find("reload source %0 is not a host value"),
            std::string::npos);
  // A host value read by anything else.
  EXPECT_NE(edited("\"inputs\":[2],\"kind\":\"transfer\"",
                   "\"inputs\":[1],\"kind\":\"transfer\"")
                .find("is a host value"),
            std::string::npos);
  // An evict written on another device than its input's.
  EXPECT_NE(edited("\"device\":0,\"id\":1", "\"device\":1,\"id\":1")
                .find("an evict runs on its input's device 0, not on device 1"),
            std::string::npos);
}

TEST(Plan, OutputsFileRoundTrip) {
  std::vector<HostTensor> out = runPlan(makePlan(), 5);
  std::string path = ::testing::TempDir() + "/doppler-outputs.json";
  ASSERT_TRUE(saveOutputs(out, path).ok());
  Result<std::vector<HostTensor>> back = loadOutputs(path);
  ASSERT_TRUE(back.ok()) << back.message();
  ASSERT_EQ(back->size(), out.size());
  for (size_t i = 0; i < out.size(); ++i) {
    EXPECT_EQ((*back)[i].shape, out[i].shape);
    EXPECT_EQ((*back)[i].bytes, out[i].bytes);
  }
}

TEST(Plan, CApiBuildsTheSamePlan) {
  // The calls doppler-lower-to-runtime emits give the plan built in C++.
  DopplerRtGraph *g = dopplerRtGraphCreate();
  int64_t shape[2] = {3, 4};
  ASSERT_EQ(dopplerRtGraphAddArgument(g, DOPPLER_RT_F32, shape, 2), 0);
  DopplerRtValue x = dopplerRtGraphAddInput(g, 1, DOPPLER_RT_F32, shape, 2);
  ASSERT_EQ(dopplerRtGraphBindArgument(g, x, 0), 0) << dopplerRtGraphError(g);
  EXPECT_EQ(dopplerRtGraphBindArgument(g, x, 3), -1);
  EXPECT_STRNE(dopplerRtGraphError(g), "");
  DopplerRtValue y =
      dopplerRtGraphAddEinsum(g, 1, "ij->ji", "exp", nullptr, 0.0, &x, 1);
  DopplerRtValue z = dopplerRtGraphAddTimedTransfer(g, y, 0, 2e-6);
  ASSERT_GE(z, 0) << dopplerRtGraphError(g);
  ASSERT_EQ(dopplerRtGraphAddResult(g, z), 0);
  dopplerRtGraphSetFunction(g, "g", 3e-6);
  std::string path = ::testing::TempDir() + "/doppler-capi-plan.json";
  ASSERT_EQ(dopplerRtGraphWritePlan(g, path.c_str()), 0)
      << dopplerRtGraphError(g);
  Result<Plan> plan = loadPlan(path);
  ASSERT_TRUE(plan.ok()) << plan.message();
  EXPECT_EQ(plan->function, "g");
  EXPECT_EQ(plan->graph.size(), 3);
  EXPECT_EQ(plan->graph.task(2).seconds, 2e-6);
  EXPECT_EQ(plan->inputArgument.at(0), 0);
  testing::internal::CaptureStdout();
  EXPECT_EQ(dopplerRtGraphRunSeeded(g, 2, 0, nullptr), 0);
  std::string printed = testing::internal::GetCapturedStdout();
  EXPECT_EQ(printed.rfind("output 0: f32[4x3] sum ", 0), 0u) << printed;
  dopplerRtGraphDestroy(g);
}

} // namespace
