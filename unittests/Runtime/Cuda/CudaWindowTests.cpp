//===- CudaWindowTests.cpp - Conv and pool on the CUDA backend ------------===//
//
// On any machine: the plans of conv and pool tasks (one WindowStep each)
// interpreted on the host with the kernel's own per-element function
// (CudaWindowMath.h, index math in 32 and 64 bits) against the reference
// loops of Doppler/Support/Window.h, plus the planner's checks. On a GPU
// (skipped otherwise): the same cases run through the CUDA backend against
// the CPU backend, and a conv across two virtual devices.
//
//===----------------------------------------------------------------------===//

#include "CudaPlan.h"

#include "doppler/runtime/CpuBackend.h"
#include "doppler/runtime/CudaBackend.h"
#include "doppler/runtime/Executor.h"

#include "Doppler/Support/Window.h"
#include "WindowTestSupport.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace doppler;
using namespace doppler::runtime;
using namespace doppler::runtime::test;
using namespace doppler::runtime::cuda;

namespace {

const DeviceLimits kH100{132, 2048};

/// A conv (weight non-empty) or a pool.
struct WindowCase {
  std::string name;
  Shape input, weight;
  int64_t groups = 1;
  PoolKind pool = PoolKind::Max;
  WindowGeometry geometry;
};

std::vector<WindowCase> windowCases() {
  return {
      {"conv-1d", {2, 3, 17}, {4, 3, 3}, 1, PoolKind::Max,
       geometry({3}, {2}, {2}, {1}, {2})},
      {"conv-2d-grouped", {2, 8, 10, 7}, {12, 2, 3, 3}, 4, PoolKind::Max,
       geometry({3, 3}, {2, 1}, {1, 2}, {0, 2}, {1, 0})},
      {"conv-2d-depthwise", {1, 5, 12, 19}, {5, 1, 7, 7}, 5, PoolKind::Max,
       geometry({7, 7}, {1, 1}, {1, 1}, {3, 3}, {3, 3})},
      {"conv-3d", {1, 2, 5, 6, 7}, {3, 2, 2, 3, 2}, 1, PoolKind::Max,
       geometry({2, 3, 2}, {1, 2, 1}, {1, 1, 2}, {1, 0, 1}, {0, 2, 1})},
      {"pool-max-2d", {2, 4, 12, 12}, {}, 1, PoolKind::Max,
       geometry({3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1})},
      {"pool-avg-2d", {1, 3, 7, 10}, {}, 1, PoolKind::Avg,
       geometry({2, 3}, {1, 2}, {2, 1}, {0, 2}, {3, 1})},
      {"pool-max-3d-padding-windows", {1, 2, 3, 4, 5}, {}, 1, PoolKind::Max,
       geometry({2, 2, 2}, {1, 2, 1}, {1, 1, 1}, {2, 0, 1}, {2, 1, 0})},
      {"pool-avg-1d", {2, 2, 15}, {}, 1, PoolKind::Avg,
       geometry({4}, {3}, {2}, {2}, {3})},
  };
}

std::vector<double> randomValues(int64_t count, uint32_t seed, bool nans) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-1, 1);
  std::vector<double> values(count);
  for (double &v : values)
    v = dist(rng);
  if (nans)
    for (size_t i = 3; i < values.size(); i += 11)
      values[i] = std::numeric_limits<double>::quiet_NaN();
  return values;
}

Result<KernelPlan> planFor(const WindowCase &c, ElementType type) {
  if (c.weight.empty())
    return planPool(c.pool, c.input, c.geometry, type, kH100);
  return planConvolution(c.input, c.weight, c.groups, c.geometry, type,
                         kH100);
}

std::vector<double> reference(const WindowCase &c,
                              const std::vector<double> &x,
                              const std::vector<double> &w, Shape &outShape) {
  outShape = c.weight.empty()
                 ? *poolResultShape(c.input, c.geometry)
                 : *convolutionResultShape(c.input, c.weight, c.groups,
                                           c.geometry);
  std::vector<double> out(numElements(outShape));
  if (c.weight.empty())
    poolReference(c.pool, x.data(), c.input, c.geometry, out.data(), outShape);
  else
    convolutionReference(x.data(), c.input, w.data(), c.weight, c.groups,
                         c.geometry, out.data(), outShape);
  return out;
}

void expectClose(const std::string &what, const std::vector<double> &got,
                 const std::vector<double> &ref, double tolerance) {
  ASSERT_EQ(got.size(), ref.size()) << what;
  for (size_t i = 0; i < ref.size(); ++i) {
    if (std::isnan(ref[i]) || std::isinf(ref[i])) {
      EXPECT_TRUE(std::isnan(ref[i]) ? std::isnan(got[i]) : got[i] == ref[i])
          << what << " output " << i;
      continue;
    }
    EXPECT_LE(std::fabs(got[i] - ref[i]), tolerance * (1 + std::fabs(ref[i])))
        << what << " output " << i << ": " << got[i] << " vs " << ref[i];
  }
}

/// Interprets `plan` (one WindowStep) on the host, every output element
/// through windowElement with `Index`.
template <typename T, typename Index>
std::vector<double> interpret(const KernelPlan &plan, const std::vector<T> &x,
                              const std::vector<T> &w, int64_t outCount) {
  EXPECT_EQ(plan.steps.size(), 1u);
  const auto *step = std::get_if<WindowStep>(&plan.steps.front());
  if (!step)
    return {};
  EXPECT_EQ(step->params.count, outCount);
  EXPECT_EQ(step->out.kind, BufferRef::Kind::Output);
  EXPECT_GT(step->launch.blocks, 0u);
  std::vector<T> out(outCount, T(-12345));
  for (int64_t i = 0; i < outCount; ++i)
    windowElement<T, Index>(step->params, out.data(), x.data(),
                            step->hasWeight ? w.data() : nullptr,
                            static_cast<Index>(i));
  return std::vector<double>(out.begin(), out.end());
}

template <typename T> void checkOnHost(const WindowCase &c, uint32_t seed) {
  constexpr ElementType type =
      std::is_same_v<T, float> ? ElementType::F32 : ElementType::F64;
  std::vector<double> x =
      randomValues(numElements(c.input), seed, c.weight.empty());
  std::vector<double> w = randomValues(numElements(c.weight), seed + 1, false);
  std::vector<T> xt(x.begin(), x.end()), wt(w.begin(), w.end());
  x.assign(xt.begin(), xt.end()); // The reference sees the rounded values.
  w.assign(wt.begin(), wt.end());
  Shape outShape;
  std::vector<double> ref = reference(c, x, w, outShape);
  Result<KernelPlan> plan = planFor(c, type);
  ASSERT_TRUE(plan) << plan.message();
  const double tolerance = std::is_same_v<T, float> ? 2e-5 : 1e-12;
  expectClose(c.name + " (32-bit index)",
              interpret<T, uint32_t>(*plan, xt, wt, numElements(outShape)), ref,
              tolerance);
  expectClose(c.name + " (64-bit index)",
              interpret<T, uint64_t>(*plan, xt, wt, numElements(outShape)), ref,
              tolerance);
}

TEST(CudaWindowPlan, EveryCaseMatchesTheReferenceOnTheHost) {
  uint32_t seed = 5;
  for (const WindowCase &c : windowCases()) {
    checkOnHost<float>(c, seed);
    checkOnHost<double>(c, seed);
    seed += 2;
  }
}

TEST(CudaWindowPlan, PlannerChecksTypesAndShapes) {
  WindowGeometry g = geometry({3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1});
  Result<KernelPlan> f16 =
      planConvolution({1, 4, 8, 8}, {4, 4, 3, 3}, 1, g, ElementType::F16,
                      kH100);
  ASSERT_FALSE(f16);
  EXPECT_EQ(f16.message(),
            "conv on f16 is not supported on the GPU (f32, f64 only)");
  Result<KernelPlan> groups = planConvolution({1, 4, 8, 8}, {4, 4, 3, 3}, 3,
                                              g, ElementType::F32, kH100);
  ASSERT_FALSE(groups);
  EXPECT_EQ(groups.message().rfind("conv: groups 3 must divide", 0), 0u);
  Result<KernelPlan> rank =
      planPool(PoolKind::Avg, {4, 8, 8}, g, ElementType::F32, kH100);
  ASSERT_FALSE(rank);
  EXPECT_EQ(rank.message().rfind("pool: input must have rank 4", 0), 0u);
  // An empty output is no step at all.
  Result<KernelPlan> empty = planPool(PoolKind::Max, {0, 4, 8, 8}, g,
                                      ElementType::F64, kH100);
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->steps.empty());
  Result<KernelPlan> conv = planConvolution({1, 4, 8, 8}, {4, 4, 3, 3}, 1, g,
                                            ElementType::F32, kH100);
  ASSERT_TRUE(conv);
  EXPECT_EQ(describeStep(conv->steps.front()),
            "direct convolution 1x3x3 into 256 elements");
  EXPECT_EQ(conv->scratchBytes(), 0u);
}

//===----------------------------------------------------------------------===//
// On a GPU
//===----------------------------------------------------------------------===//

#define REQUIRE_GPU()                                                          \
  do {                                                                         \
    Result<int> gpus = cudaDeviceCount();                                      \
    if (!gpus)                                                                 \
      GTEST_SKIP() << gpus.message();                                          \
  } while (false)

/// Runs `c` in a graph on `backend` (the input on device 0, the window op
/// on device `device`), returning its output in double.
template <typename T>
std::vector<double> runOn(std::unique_ptr<Backend> backend,
                          const WindowCase &c, const std::vector<T> &x,
                          const std::vector<T> &w, int device) {
  constexpr ElementType type =
      std::is_same_v<T, float> ? ElementType::F32 : ElementType::F64;
  TaskGraph graph;
  ValueId xi = *graph.addInput(0, c.input, type);
  ValueId on = *graph.onDevice(xi, device);
  InputBindings bindings = {{xi, x.data()}};
  Result<ValueId> out = Status::failure("no task");
  if (c.weight.empty()) {
    out = graph.addPool(device, c.pool, on, c.geometry);
  } else {
    ValueId wi = *graph.addInput(device, c.weight, type);
    bindings[wi] = w.data();
    out = graph.addConvolution(device, on, wi, c.groups, c.geometry);
  }
  EXPECT_TRUE(out) << out.message();
  if (!out)
    return {};
  EXPECT_TRUE(graph.markOutput(*out));
  Executor executor(std::move(backend));
  Result<RunResult> run = executor.run(graph, bindings);
  EXPECT_TRUE(run) << run.message();
  if (!run)
    return {};
  const HostTensor &tensor = run->outputs.at(*out);
  const T *data = reinterpret_cast<const T *>(tensor.bytes.data());
  return std::vector<double>(data, data + numElements(tensor.shape));
}

template <typename T> void checkOnGpu(const WindowCase &c, uint32_t seed) {
  std::vector<double> x =
      randomValues(numElements(c.input), seed, c.weight.empty());
  std::vector<double> w = randomValues(numElements(c.weight), seed + 1, false);
  std::vector<T> xt(x.begin(), x.end()), wt(w.begin(), w.end());
  CudaBackendOptions gpu;
  gpu.numDevices = 2;
  Result<std::unique_ptr<Backend>> cuda = createCudaBackend(gpu);
  ASSERT_TRUE(cuda) << cuda.message();
  CpuBackendOptions cpu;
  cpu.pinComputeWorkers = false;
  std::vector<double> onGpu = runOn<T>(std::move(*cuda), c, xt, wt, 1);
  std::vector<double> onCpu =
      runOn<T>(std::move(*createCpuBackend(cpu)), c, xt, wt, 0);
  expectClose(c.name + " (GPU vs CPU)", onGpu, onCpu,
              std::is_same_v<T, float> ? 2e-5 : 1e-12);
}

TEST(CudaWindowBackend, EveryCaseMatchesTheCpuBackend) {
  REQUIRE_GPU();
  uint32_t seed = 41;
  for (const WindowCase &c : windowCases()) {
    checkOnGpu<float>(c, seed);
    checkOnGpu<double>(c, seed);
    seed += 2;
  }
}

TEST(CudaWindowBackend, ResNetLayerMatchesTheCpuBackend) {
  REQUIRE_GPU();
  WindowCase stem{"resnet-stem", {2, 3, 64, 64}, {16, 3, 7, 7}, 1,
                  PoolKind::Max, geometry({7, 7}, {2, 2}, {1, 1}, {3, 3},
                                          {3, 3})};
  checkOnGpu<float>(stem, 77);
}

} // namespace
