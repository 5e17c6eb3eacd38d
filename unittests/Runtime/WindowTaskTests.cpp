//===- WindowTaskTests.cpp - Conv and pool tasks, end to end --------------===//
//
// The conv and pool tasks: the builders' checks and messages, runs through
// the executor on one and two devices (the input on one device, the conv
// on another) against the reference loops, the plan file's fields (round
// trip, missing and bad fields), and the C API.
//
//===----------------------------------------------------------------------===//

#include "ExecutorTestSupport.h"

#include "doppler/runtime/CApi.h"
#include "doppler/runtime/Plan.h"

#include "Doppler/Support/Window.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

using namespace doppler;
using namespace doppler::runtime;
using namespace doppler::runtime::test;

namespace {

std::string messageOf(const Result<ValueId> &result) {
  return result ? std::string("(ok)") : result.message();
}

WindowGeometry square(int64_t kernel, int64_t stride, int64_t pad,
                      unsigned dims = 2) {
  WindowGeometry g;
  g.kernel.assign(dims, kernel);
  g.strides.assign(dims, stride);
  g.dilations.assign(dims, 1);
  g.padLow.assign(dims, pad);
  g.padHigh.assign(dims, pad);
  return g;
}

TEST(WindowTasks, ConvolutionBuilderInfersTheShapeAndKernel) {
  TaskGraph g;
  ValueId x = unwrap(g.addInput(0, {2, 4, 8, 8}));
  ValueId w = unwrap(g.addInput(0, {6, 2, 3, 3}));
  WindowGeometry geometry = square(3, 2, 1);
  geometry.kernel.clear(); // Taken from the weight.
  ValueId y = unwrap(g.addConvolution(0, x, w, 2, geometry));
  const Task &task = g.task(y);
  EXPECT_EQ(task.kind, TaskKind::Conv);
  EXPECT_EQ(task.shape, (Shape{2, 6, 4, 4}));
  EXPECT_EQ(task.window.kernel, (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(task.groups, 2);
  EXPECT_EQ(task.inputs, (std::vector<ValueId>{x, w}));
  EXPECT_EQ(g.describe(y), "%2 conv 3x3 stride 2x2 groups 2");
  ValueId p = unwrap(g.addPool(0, PoolKind::Avg, y, square(2, 2, 0)));
  EXPECT_EQ(g.task(p).kind, TaskKind::Pool);
  EXPECT_EQ(g.task(p).shape, (Shape{2, 6, 2, 2}));
  EXPECT_EQ(g.describe(p), "%3 pool avg 2x2 stride 2x2");
  EXPECT_EQ(taskKindName(TaskKind::Conv), "conv");
  EXPECT_EQ(taskKindName(TaskKind::Pool), "pool");
}

TEST(WindowTasks, ConvolutionBuilderErrorsNameTheTaskAndField) {
  TaskGraph g;
  ValueId x = unwrap(g.addInput(0, {1, 4, 8, 8}));
  ValueId w = unwrap(g.addInput(0, {6, 2, 3, 3}));
  ValueId w64 = unwrap(g.addInput(0, {6, 2, 3, 3}, ElementType::F64));
  ValueId x16 = unwrap(g.addInput(0, {1, 4, 8, 8}, ElementType::F16));
  ValueId w16 = unwrap(g.addInput(0, {6, 2, 3, 3}, ElementType::F16));
  ValueId w1d = unwrap(g.addInput(0, {6, 2, 3}));
  ValueId other = unwrap(g.addInput(1, {6, 2, 3, 3}));
  WindowGeometry s = square(3, 1, 1);
  EXPECT_EQ(messageOf(g.addConvolution(0, x, w, 3, s)),
            "conv: groups 3 must divide the input channels (4) and the output "
            "channels (6)");
  EXPECT_EQ(messageOf(g.addConvolution(0, x, w, 1, s)),
            "conv: weight [6, 2, 3, 3] must have 4 input channels per group "
            "(input channels 4 / groups 1)");
  EXPECT_EQ(messageOf(g.addConvolution(0, x, w, 0, s)),
            "conv: groups must be in [1, 2^31], got 0");
  EXPECT_EQ(messageOf(g.addConvolution(0, x, w, 2, square(5, 1, 1))),
            "conv: weight [6, 2, 3, 3] does not match the kernel [5, 5]");
  WindowGeometry badStride = s;
  badStride.strides = {1, 0};
  EXPECT_EQ(messageOf(g.addConvolution(0, x, w, 2, badStride)),
            "conv: strides [1, 0]: each must be in [1, 2^31]");
  WindowGeometry shortPad = s;
  shortPad.padHigh = {1};
  EXPECT_EQ(messageOf(g.addConvolution(0, x, w, 2, shortPad)),
            "conv: padding (high) has 1 entries for 2 spatial dims");
  EXPECT_EQ(messageOf(g.addConvolution(0, x, w1d, 2, square(3, 1, 1, 1))),
            "conv: input and weight must have rank 3 (N, C and 1 spatial "
            "dims; F, C/groups and the kernel), got [1, 4, 8, 8] and [6, 2, "
            "3]");
  WindowGeometry noKernel = s;
  noKernel.kernel.clear();
  EXPECT_EQ(messageOf(g.addConvolution(0, x, w1d, 2, noKernel)),
            "conv: the weight [6, 2, 3] must have rank 4 (F, C/groups and one "
            "kernel extent per stride; 2 strides given)");
  EXPECT_EQ(messageOf(g.addConvolution(0, x, w, 2, square(3, 1, 0, 2))),
            "(ok)");
  WindowGeometry tooSmall = square(3, 1, 0);
  tooSmall.dilations = {1, 4};
  EXPECT_EQ(messageOf(g.addConvolution(0, x, w, 2, tooSmall)),
            "conv: spatial dim 1 of extent 8 padded by 0+0 is shorter than "
            "the kernel's reach 9");
  EXPECT_EQ(messageOf(g.addConvolution(0, x, w64, 2, s)),
            "conv: operands have different element types (f32 and f64)");
  EXPECT_EQ(messageOf(g.addConvolution(0, x16, w16, 2, s)),
            "conv: element type f16 is not supported (f32 or f64)");
  EXPECT_EQ(messageOf(g.addConvolution(0, x, other, 2, s)),
            "conv: operand 1 (%6) lives on device 1, not on the task's "
            "device 0 (add a transfer)");
  EXPECT_NE(messageOf(g.addConvolution(0, x, 99, 2, s)).find("does not exist"),
            std::string::npos);
  EXPECT_NE(messageOf(g.addConvolution(-1, x, w, 2, s)).find("negative"),
            std::string::npos);
}

TEST(WindowTasks, PoolBuilderErrorsNameTheTaskAndField) {
  TaskGraph g;
  ValueId x = unwrap(g.addInput(0, {1, 4, 8, 8}));
  ValueId flat = unwrap(g.addInput(0, {4, 8}));
  ValueId half = unwrap(g.addInput(0, {1, 4, 8, 8}, ElementType::F16));
  EXPECT_EQ(messageOf(g.addPool(0, PoolKind::Max, flat, square(2, 2, 0))),
            "pool max: input must have rank 4 (N, C and 2 spatial dims), got "
            "[4, 8]");
  WindowGeometry empty;
  EXPECT_EQ(messageOf(g.addPool(0, PoolKind::Avg, x, empty)),
            "pool avg: a window op takes 1 to 3 spatial dims, got 0");
  WindowGeometry negative = square(2, 2, 0);
  negative.padLow = {0, -1};
  EXPECT_EQ(messageOf(g.addPool(0, PoolKind::Max, x, negative)),
            "pool max: padding (low) [0, -1]: each must be in [0, 2^31]");
  EXPECT_EQ(messageOf(g.addPool(0, PoolKind::Max, x, square(9, 1, 0))),
            "pool max: spatial dim 0 of extent 8 padded by 0+0 is shorter "
            "than the kernel's reach 9");
  EXPECT_EQ(messageOf(g.addPool(0, PoolKind::Max, half, square(2, 2, 0))),
            "pool: element type f16 is not supported (f32 or f64)");
  EXPECT_EQ(messageOf(g.addPool(1, PoolKind::Max, x, square(2, 2, 0))),
            "pool max: operand 0 (%0) lives on device 0, not on the task's "
            "device 1 (add a transfer)");
  EXPECT_EQ(messageOf(g.addPool(0, static_cast<PoolKind>(7), x,
                                square(2, 2, 0))),
            "pool: unknown kind 7");
  ValueId stash = unwrap(g.addEvict(x));
  EXPECT_NE(messageOf(g.addPool(0, PoolKind::Max, stash, square(2, 2, 0)))
                .find("host value"),
            std::string::npos);
}

std::vector<float> randomFloats(int64_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> values(count);
  for (float &v : values)
    v = dist(rng);
  return values;
}

/// The reference in double of float data.
std::vector<double> toDouble(const std::vector<float> &values) {
  return std::vector<double>(values.begin(), values.end());
}

void expectNear(const HostTensor &tensor, const std::vector<double> &ref,
                double tolerance) {
  ASSERT_EQ(numElements(tensor.shape), static_cast<int64_t>(ref.size()));
  for (size_t i = 0; i < ref.size(); ++i)
    ASSERT_NEAR(tensor.f32()[i], ref[i], tolerance * (1 + std::fabs(ref[i])))
        << "element " << i;
}

TEST(WindowTasks, RunsOnTwoDevicesAgainstTheReference) {
  // The input on device 0, the weight on device 1; the conv on device 1,
  // its max pool back on device 0 (two transfers).
  const Shape xShape = {2, 6, 10, 9}, wShape = {8, 3, 3, 3};
  TaskGraph g;
  ValueId x = unwrap(g.addInput(0, xShape));
  ValueId w = unwrap(g.addInput(1, wShape));
  WindowGeometry conv = square(3, 1, 1);
  conv.padHigh = {2, 0};
  ValueId y = unwrap(g.addConvolution(1, unwrap(g.onDevice(x, 1)), w, 2, conv));
  WindowGeometry pool = square(3, 2, 1);
  ValueId p =
      unwrap(g.addPool(0, PoolKind::Max, unwrap(g.onDevice(y, 0)), pool));
  ASSERT_TRUE(g.markOutput(y));
  ASSERT_TRUE(g.markOutput(p));
  EXPECT_EQ(g.task(y).device, 1);
  EXPECT_EQ(g.task(p).device, 0);

  std::vector<float> xData = randomFloats(numElements(xShape), 3);
  std::vector<float> wData = randomFloats(numElements(wShape), 4);
  std::vector<double> yRef(numElements(g.task(y).shape));
  convolutionReference(toDouble(xData).data(), xShape, toDouble(wData).data(),
                       wShape, 2, conv, yRef.data(), g.task(y).shape);
  CpuBackendOptions options;
  options.numDevices = 2;
  options.pinComputeWorkers = false;
  Executor executor(unwrap(createCpuBackend(options)));
  RunResult run = unwrap(
      runGuarded(executor, g, {{x, xData.data()}, {w, wData.data()}}));
  expectNear(run.outputs.at(y), yRef, 1e-5);
  // The pool of the conv's f32 output, exactly.
  const HostTensor &yOut = run.outputs.at(y);
  std::vector<double> yGot(yOut.f32(), yOut.f32() + yRef.size());
  std::vector<double> pRef(numElements(g.task(p).shape));
  poolReference(PoolKind::Max, yGot.data(), g.task(y).shape, pool, pRef.data(),
                g.task(p).shape);
  expectNear(run.outputs.at(p), pRef, 0);
  EXPECT_TRUE(run.tasks[y].ran);
}

TEST(WindowTasks, KernelErrorsSurfaceAtPrepare) {
  // f16 never reaches a kernel (the builders refuse it); a 3-d pool of f64
  // runs.
  TaskGraph g;
  ValueId x = unwrap(g.addInput(0, {1, 1, 3, 3, 3}, ElementType::F64));
  ValueId p = unwrap(g.addPool(0, PoolKind::Avg, x, square(3, 1, 1, 3)));
  ASSERT_TRUE(g.markOutput(p));
  std::vector<double> data(27, 2.0);
  CpuBackendOptions options;
  Executor executor(unwrap(createCpuBackend(options)));
  RunResult run = unwrap(runGuarded(executor, g, {{x, data.data()}}));
  // The centre sees all 27 ones of 2.0; a corner 8 of them.
  const double *out = run.outputs.at(p).f64();
  EXPECT_DOUBLE_EQ(out[13], 2.0);
  EXPECT_DOUBLE_EQ(out[0], 2.0 * 8 / 27);
}

//===----------------------------------------------------------------------===//
// Plans
//===----------------------------------------------------------------------===//

Plan makeWindowPlan() {
  Plan plan;
  plan.function = "cnn";
  int64_t a = plan.addArgument(ElementType::F32, {1, 4, 9, 9});
  int64_t b = plan.addArgument(ElementType::F32, {8, 2, 3, 3});
  ValueId x = unwrap(plan.graph.addInput(0, {1, 4, 9, 9}));
  ValueId w = unwrap(plan.graph.addInput(1, {8, 2, 3, 3}));
  EXPECT_TRUE(plan.bindArgument(x, a).ok());
  EXPECT_TRUE(plan.bindArgument(w, b).ok());
  WindowGeometry conv = square(3, 2, 1);
  conv.dilations = {1, 2};
  conv.padHigh = {0, 2};
  ValueId moved = unwrap(plan.graph.addTransfer(x, 1));
  ValueId y = unwrap(plan.graph.addConvolution(1, moved, w, 2, conv));
  WindowGeometry pool = square(2, 1, 1);
  pool.padLow = {0, 1};
  ValueId p = unwrap(plan.graph.addPool(1, PoolKind::Avg, y, pool));
  EXPECT_TRUE(plan.addResult(p).ok());
  EXPECT_TRUE(plan.addResult(y).ok());
  return plan;
}

TEST(WindowTasks, PlanJsonRoundTripKeepsEveryField) {
  Plan plan = makeWindowPlan();
  std::string text = planToJson(plan);
  EXPECT_NE(text.find("\"dilations\":[1,2],\"groups\":2,\"id\":3,"
                      "\"inputs\":[2,1],\"kind\":\"conv\",\"padding_high\":"
                      "[0,2],\"padding_low\":[1,1]"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\"kernel\":[2,2],\"kind\":\"pool\",\"padding_high\":"
                      "[1,1],\"padding_low\":[0,1],\"pool\":\"avg\""),
            std::string::npos)
      << text;
  Result<Plan> loaded = planFromJson(text, "cnn.json");
  ASSERT_TRUE(loaded.ok()) << loaded.message();
  EXPECT_EQ(planToJson(*loaded), text);
  const Task &conv = loaded->graph.task(3);
  EXPECT_EQ(conv.kind, TaskKind::Conv);
  EXPECT_EQ(conv.groups, 2);
  EXPECT_EQ(conv.window.kernel, (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(conv.window.dilations, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(conv.window.padHigh, (std::vector<int64_t>{0, 2}));
  const Task &pool = loaded->graph.task(4);
  EXPECT_EQ(pool.pool, PoolKind::Avg);
  EXPECT_EQ(pool.window.padLow, (std::vector<int64_t>{0, 1}));

  // Runs from seeded arguments, equal to the reference.
  CpuBackendOptions options;
  options.numDevices = 2;
  options.pinComputeWorkers = false;
  Executor executor(unwrap(createCpuBackend(options)));
  HostArguments args = unwrap(makeSeededArguments(loaded->arguments, 9));
  RunResult run =
      unwrap(runGuarded(executor, loaded->graph, bindArguments(*loaded, args)));
  std::vector<HostTensor> out = unwrap(collectResults(*loaded, run));
  ASSERT_EQ(out.size(), 2u);
  auto asDouble = [](const std::vector<unsigned char> &bytes) {
    const float *f = reinterpret_cast<const float *>(bytes.data());
    return std::vector<double>(f, f + bytes.size() / sizeof(float));
  };
  std::vector<double> yRef(numElements(conv.shape));
  convolutionReference(asDouble(args.buffers[0]).data(), {1, 4, 9, 9},
                       asDouble(args.buffers[1]).data(), {8, 2, 3, 3}, 2,
                       conv.window, yRef.data(), conv.shape);
  expectNear(out[1], yRef, 1e-5);
}

TEST(WindowTasks, PlanErrorsNameTheTaskAndField) {
  const std::string good = planToJson(makeWindowPlan());
  auto edited = [&](const std::string &from, const std::string &to) {
    std::string text = good;
    size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos)
      text.replace(at, from.size(), to);
    Result<Plan> plan = planFromJson(text, "p.json");
    return plan.ok() ? std::string("(ok)") : plan.message();
  };
  EXPECT_EQ(edited("\"groups\":2,", ""),
            "p.json: tasks[3]: missing field 'groups'");
  for (const char *field :
       {"strides", "dilations", "padding_low", "padding_high"}) {
    std::string key = std::string("\"") + field + "\":";
    size_t conv = good.find("\"kind\":\"conv\"");
    size_t at = good.find(key, good.rfind("{", conv));
    size_t end = good.find("]", at) + 1;
    std::string text = good;
    text.erase(at, end - at + 1);
    Result<Plan> plan = planFromJson(text, "p.json");
    EXPECT_EQ(plan.ok() ? "(ok)" : plan.message(),
              std::string("p.json: tasks[3]: missing field '") + field + "'");
  }
  EXPECT_EQ(edited("\"pool\":\"avg\"", "\"pool\":\"sum\""),
            "p.json: tasks[4].pool: unknown pool kind 'sum' (expected max or "
            "avg)");
  EXPECT_EQ(edited("\"kernel\":[2,2],", ""),
            "p.json: tasks[4]: missing field 'kernel'");
  EXPECT_EQ(edited("\"kernel\":[2,2]", "\"kernel\":[2,\"2\"]"),
            "p.json: tasks[4].kernel[1]: expected an integer");
  EXPECT_EQ(edited("\"groups\":2", "\"groups\":3"),
            "p.json: tasks[3]: conv: groups 3 must divide the input channels "
            "(4) and the output channels (8)");
  EXPECT_EQ(edited("\"dilations\":[1,2],\"groups\"",
                   "\"dilations\":[1],\"groups\""),
            "p.json: tasks[3]: conv: dilations has 1 entries for 2 spatial "
            "dims");
  EXPECT_EQ(edited("\"strides\":[2,2],\"type\":\"f32\"}",
                   "\"strides\":[2],\"type\":\"f32\"}"),
            "p.json: tasks[3]: conv: the weight [8, 2, 3, 3] must have rank 3 "
            "(F, C/groups and one kernel extent per stride; 1 strides given)");
  EXPECT_EQ(edited("\"inputs\":[2,1],\"kind\":\"conv\"",
                   "\"inputs\":[2],\"kind\":\"conv\""),
            "p.json: tasks[3]: a conv task takes 2 input(s), 1 given");
  EXPECT_EQ(edited("\"inputs\":[3],\"kernel\"",
                   "\"inputs\":[3,3],\"kernel\""),
            "p.json: tasks[4]: a pool task takes 1 input(s), 2 given");
  EXPECT_EQ(edited("\"padding_low\":[0,1],\"pool\"",
                   "\"padding_low\":[0,-1],\"pool\""),
            "p.json: tasks[4]: pool avg: padding (low) [0, -1]: each must be "
            "in [0, 2^31]");
}

//===----------------------------------------------------------------------===//
// C API
//===----------------------------------------------------------------------===//

TEST(WindowTasks, CApiAddsRunsAndChecksThem) {
  DopplerRtGraph *g = dopplerRtGraphCreate();
  int64_t xShape[3] = {1, 2, 6}, wShape[3] = {2, 1, 3};
  DopplerRtValue x = dopplerRtGraphAddInput(g, 0, DOPPLER_RT_F32, xShape, 3);
  DopplerRtValue w = dopplerRtGraphAddInput(g, 0, DOPPLER_RT_F32, wShape, 3);
  int64_t one[1] = {1}, pad[1] = {1}, two[1] = {2}, zero[1] = {0};
  DopplerRtValue y =
      dopplerRtGraphAddConvolution(g, 0, x, w, 2, one, one, pad, pad, 1);
  ASSERT_GE(y, 0) << dopplerRtGraphError(g);
  DopplerRtValue p =
      dopplerRtGraphAddPool(g, 0, "max", y, two, two, one, zero, zero, 1);
  ASSERT_GE(p, 0) << dopplerRtGraphError(g);
  EXPECT_LT(dopplerRtGraphAddConvolution(g, 0, x, w, 3, one, one, pad, pad, 1),
            0);
  EXPECT_NE(std::string(dopplerRtGraphError(g)).find("groups 3 must divide"),
            std::string::npos);
  EXPECT_LT(
      dopplerRtGraphAddConvolution(g, 0, x, w, 2, nullptr, one, pad, pad, 1),
      0);
  EXPECT_EQ(std::string(dopplerRtGraphError(g)), "conv: invalid strides array");
  EXPECT_LT(dopplerRtGraphAddPool(g, 0, "sum", y, two, two, one, zero, zero, 1),
            0);
  EXPECT_EQ(std::string(dopplerRtGraphError(g)),
            "pool: unknown kind 'sum' (expected max or avg)");
  EXPECT_LT(dopplerRtGraphAddPool(g, 0, nullptr, y, two, two, one, zero, zero,
                                  1),
            0);
  EXPECT_LT(dopplerRtGraphAddPool(g, 0, "avg", y, two, two, one, zero, zero,
                                  -1),
            0);
  ASSERT_EQ(dopplerRtGraphMarkOutput(g, y), 0);
  ASSERT_EQ(dopplerRtGraphMarkOutput(g, p), 0);

  DopplerRtExecutor *e = dopplerRtCpuExecutorCreate(1, 0, 0);
  float xData[12] = {1, 2, 3, 4, 5, 6, -1, 0, 1, 0, -1, 2};
  float wData[6] = {1, 1, 1, 0, 2, 0};
  const void *bound[2] = {xData, wData};
  DopplerRtValue inputs[2] = {x, w};
  DopplerRtRun *run = dopplerRtExecutorRun(e, g, inputs, bound, 2);
  ASSERT_NE(run, nullptr);
  ASSERT_EQ(dopplerRtRunError(run), nullptr) << dopplerRtRunError(run);
  float out[12], pooled[6];
  ASSERT_EQ(dopplerRtRunReadOutput(run, y, out, sizeof(out)), 0);
  ASSERT_EQ(dopplerRtRunReadOutput(run, p, pooled, sizeof(pooled)), 0);
  // Channel 0: a 3-wide box sum, padded by one zero; channel 1: 2x.
  const float expected[12] = {3, 6, 9, 12, 15, 11, -2, 0, 2, 0, -2, 4};
  for (int i = 0; i < 12; ++i)
    EXPECT_EQ(out[i], expected[i]) << i;
  const float expectedPool[6] = {6, 12, 15, 0, 2, 4};
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(pooled[i], expectedPool[i]) << i;
  dopplerRtRunDestroy(run);
  dopplerRtExecutorDestroy(e);
  dopplerRtGraphDestroy(g);
}

} // namespace
