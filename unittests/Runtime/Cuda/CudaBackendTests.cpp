//===- CudaBackendTests.cpp - The CUDA backend on a GPU -------------------===//
//
// Every test here needs a GPU and is skipped with the reason ("no CUDA
// device: ...") where there is none. The CudaBench tests also need
// DOPPLER_CUDA_BENCH=1: they print throughput and overlap measurements and
// write Chrome traces (to $DOPPLER_CUDA_TRACE_DIR, default /tmp).
//
//===----------------------------------------------------------------------===//

#include "CudaTestCases.h"

#include "doppler/runtime/CpuBackend.h"
#include "doppler/runtime/CpuKernels.h"
#include "doppler/runtime/CudaBackend.h"
#include "doppler/runtime/Executor.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace doppler;
using namespace doppler::runtime;
using namespace doppler::runtime::test;

namespace {

#define REQUIRE_GPU()                                                          \
  do {                                                                         \
    Result<int> gpus = cudaDeviceCount();                                      \
    if (!gpus)                                                                 \
      GTEST_SKIP() << gpus.message();                                          \
  } while (false)

#define REQUIRE_BENCH()                                                        \
  do {                                                                         \
    REQUIRE_GPU();                                                             \
    if (!std::getenv("DOPPLER_CUDA_BENCH"))                                    \
      GTEST_SKIP() << "set DOPPLER_CUDA_BENCH=1 to measure";                   \
  } while (false)

std::unique_ptr<Backend> makeBackend(CudaBackendOptions options = {}) {
  Result<std::unique_ptr<Backend>> backend = createCudaBackend(options);
  EXPECT_TRUE(backend) << backend.message();
  return backend ? std::move(*backend) : nullptr;
}

template <typename T> std::vector<T> cast(const std::vector<double> &values) {
  return std::vector<T>(values.begin(), values.end());
}

/// Runs one einsum on virtual device 0 and compares with the reference.
template <typename T>
void checkEinsumOnGpu(Executor &executor, const EinsumCase &c) {
  SCOPED_TRACE(c.name());
  ElementType type =
      std::is_same_v<T, double> ? ElementType::F64 : ElementType::F32;
  EinsumSpec spec = *EinsumSpec::parse(c.spec);
  TaskGraph graph;
  std::vector<ValueId> ids;
  std::vector<std::vector<double>> inputs;
  std::vector<std::vector<T>> typed;
  InputBindings bindings;
  for (size_t i = 0; i < c.shapes.size(); ++i) {
    ids.push_back(*graph.addInput(0, c.shapes[i], type));
    inputs.push_back(inputFor(c.join, static_cast<int>(i),
                              numElements(c.shapes[i]), 3 + 11 * i));
    typed.push_back(cast<T>(inputs.back()));
  }
  for (size_t i = 0; i < ids.size(); ++i)
    bindings[ids[i]] = typed[i].data();
  Result<ValueId> out =
      graph.addEinsum(0, c.spec, c.join, c.aggregation, ids, c.scalar);
  ASSERT_TRUE(out) << out.message();
  ASSERT_TRUE(graph.markOutput(*out));
  Result<RunResult> run = executor.run(graph, bindings);
  ASSERT_TRUE(run) << run.message();
  std::vector<double> expected =
      referenceEinsum(spec, c.join, c.aggregation, c.scalar, inputs, c.shapes);
  const HostTensor &tensor = run->outputs.at(*out);
  ASSERT_EQ(tensor.bytes.size(), expected.size() * sizeof(T));
  const T *actual = reinterpret_cast<const T *>(tensor.bytes.data());
  double tolerance = std::is_same_v<T, double> ? 1e-12 : 2e-5;
  EXPECT_LE(relativeError(actual, expected), tolerance);
}

TEST(CudaBackend, EveryEinsumMatchesTheReferenceInF32AndF64) {
  REQUIRE_GPU();
  Executor executor(makeBackend());
  for (const EinsumCase &c : einsumCases()) {
    checkEinsumOnGpu<float>(executor, c);
    checkEinsumOnGpu<double>(executor, c);
  }
}

TEST(CudaBackend, DeferredCompletionMatchesTheReference) {
  REQUIRE_GPU();
  CudaBackendOptions options;
  options.completion = CudaBackendOptions::Completion::Deferred;
  Executor executor(makeBackend(options));
  for (const EinsumCase &c : einsumCases())
    checkEinsumOnGpu<float>(executor, c);
}

/// Runs every fused case on the GPU (one task, virtual device 0) and as
/// part of a two-device graph, and compares with JoinProgram::evaluate
/// within tol * max(1, |reference|), as the CPU kernel's tests do.
template <typename T> void checkFusedOnGpu(Executor &executor, int devices) {
  ElementType type =
      std::is_same_v<T, double> ? ElementType::F64 : ElementType::F32;
  for (const FusedCase &c : fusedCases()) {
    SCOPED_TRACE(c.name());
    TaskGraph graph;
    std::vector<ValueId> ids, operands;
    std::vector<std::vector<double>> inputs = fusedInputs(c, 9);
    std::vector<std::vector<T>> typed;
    InputBindings bindings;
    for (size_t i = 0; i < c.shapes.size(); ++i) {
      // With two devices every other input lives on device 1 and moves.
      int home = devices > 1 ? static_cast<int>(i % 2) : 0;
      ids.push_back(*graph.addInput(home, c.shapes[i], type));
      operands.push_back(*graph.onDevice(ids.back(), 0));
      typed.push_back(cast<T>(inputs[i]));
    }
    for (size_t i = 0; i < ids.size(); ++i)
      bindings[ids[i]] = typed[i].data();
    Result<ValueId> out = graph.addFused(0, c.spec, c.program, operands);
    ASSERT_TRUE(out) << out.message();
    ASSERT_TRUE(graph.markOutput(*out));
    Result<RunResult> run = executor.run(graph, bindings);
    ASSERT_TRUE(run) << run.message();
    std::vector<double> expected = referenceFused(c, inputs);
    const HostTensor &tensor = run->outputs.at(*out);
    ASSERT_EQ(tensor.bytes.size(), expected.size() * sizeof(T));
    EXPECT_EQ(fusedMismatches(reinterpret_cast<const T *>(tensor.bytes.data()),
                              expected,
                              std::is_same_v<T, double> ? 1e-12 : 1e-6),
              0);
  }
}

TEST(CudaBackend, FusedChainsMatchTheReference) {
  REQUIRE_GPU();
  Executor executor(makeBackend());
  checkFusedOnGpu<float>(executor, 1);
  checkFusedOnGpu<double>(executor, 1);
  CudaBackendOptions options;
  options.numDevices = 2;
  Executor two(makeBackend(options));
  checkFusedOnGpu<float>(two, 2);
}

/// A small MLP with a softmax, its rows split over `devices` devices:
/// slices, transfers, GEMMs, joins, reductions and an assemble.
struct MlpGraph {
  TaskGraph graph;
  ValueId x, w1, w2, probabilities;
  std::vector<float> xData, w1Data, w2Data;

  explicit MlpGraph(int devices, int64_t rows = 256) {
    const int64_t in = 512, hidden = 384, out = 128;
    xData = randomFloats(rows * in, 1);
    w1Data = randomFloats(in * hidden, 2, -0.1, 0.1);
    w2Data = randomFloats(hidden * out, 3, -0.1, 0.1);
    x = *graph.addInput(0, {rows, in});
    w1 = *graph.addInput(devices > 1 ? 1 : 0, {in, hidden});
    w2 = *graph.addInput(0, {hidden, out});
    std::vector<ValueId> blocks;
    std::vector<int64_t> extents;
    int64_t step = rows / devices;
    for (int d = 0; d < devices; ++d) {
      int64_t size = d + 1 == devices ? rows - step * d : step;
      ValueId part = *graph.addSlice(0, x, {step * d, 0}, {size, in});
      ValueId local = *graph.onDevice(part, d);
      ValueId h = *graph.addEinsum(d, "ij,jk->ik", JoinKind::Mul, AggKind::Add,
                                   {local, *graph.onDevice(w1, d)});
      h = *graph.addEinsum(d, "ij->ij", JoinKind::Relu, std::nullopt, {h});
      ValueId y = *graph.addEinsum(d, "ij,jk->ik", JoinKind::Mul, AggKind::Add,
                                   {h, *graph.onDevice(w2, d)});
      blocks.push_back(*graph.onDevice(y, 0));
      extents.push_back(size);
    }
    ValueId y = *graph.addAssemble(0, {extents, {out}}, blocks);
    ValueId max =
        *graph.addEinsum(0, "ij->i", JoinKind::Identity, AggKind::Max, {y});
    ValueId shifted =
        *graph.addEinsum(0, "ij,i->ij", JoinKind::Sub, std::nullopt, {y, max});
    ValueId e =
        *graph.addEinsum(0, "ij->ij", JoinKind::Exp, std::nullopt, {shifted});
    ValueId sum =
        *graph.addEinsum(0, "ij->i", JoinKind::Identity, AggKind::Add, {e});
    probabilities =
        *graph.addEinsum(0, "ij,i->ij", JoinKind::Div, std::nullopt, {e, sum});
    (void)graph.markOutput(probabilities);
  }

  InputBindings bindings() const {
    return {{x, xData.data()}, {w1, w1Data.data()}, {w2, w2Data.data()}};
  }
};

std::vector<float> outputOf(const RunResult &run, ValueId id) {
  const HostTensor &tensor = run.outputs.at(id);
  return std::vector<float>(tensor.f32(),
                            tensor.f32() + tensor.bytes.size() / 4);
}

TEST(CudaBackend, MatchesTheCpuBackendOnADecomposedMlp) {
  REQUIRE_GPU();
  for (int devices : {1, 2, 4}) {
    SCOPED_TRACE(devices);
    MlpGraph mlp(devices);
    CpuBackendOptions cpu;
    cpu.numDevices = devices;
    Executor cpuExecutor(std::move(*createCpuBackend(cpu)));
    Result<RunResult> expected = cpuExecutor.run(mlp.graph, mlp.bindings());
    ASSERT_TRUE(expected) << expected.message();
    std::vector<double> reference =
        toDouble(outputOf(*expected, mlp.probabilities));

    for (auto completion : {CudaBackendOptions::Completion::Synchronize,
                            CudaBackendOptions::Completion::Deferred}) {
      CudaBackendOptions options;
      options.numDevices = devices; // Round-robin over the GPUs.
      options.completion = completion;
      Executor executor(makeBackend(options));
      for (int repeat = 0; repeat < 3; ++repeat) { // Reused memory.
        Result<RunResult> run = executor.run(mlp.graph, mlp.bindings());
        ASSERT_TRUE(run) << run.message();
        std::vector<float> actual = outputOf(*run, mlp.probabilities);
        EXPECT_LE(relativeError(actual.data(), reference), 1e-5);
      }
    }
  }
}

TEST(CudaBackend, VirtualDevicesShareOneGpu) {
  REQUIRE_GPU();
  CudaBackendOptions options;
  options.physicalDevices = {0, 0, 0, 0};
  Executor executor(makeBackend(options));
  EXPECT_EQ(executor.numDevices(), 4);
  // A value hops over every device and comes back negated twice.
  TaskGraph graph;
  Shape shape = {1000, 37};
  std::vector<float> data = randomFloats(numElements(shape), 5);
  ValueId value = *graph.addInput(0, shape);
  ValueId input = value;
  for (int d = 1; d <= 4; ++d) {
    value = *graph.addTransfer(value, d % 4);
    if (d % 2)
      value = *graph.addEinsum(d % 4, "ij->ij", JoinKind::Neg, std::nullopt,
                               {value});
  }
  ASSERT_TRUE(graph.markOutput(value));
  Result<RunResult> run = executor.run(graph, {{input, data.data()}});
  ASSERT_TRUE(run) << run.message();
  EXPECT_EQ(0, std::memcmp(run->outputs.at(value).bytes.data(), data.data(),
                           data.size() * sizeof(float)));
  EXPECT_GT(run->devices[1].copyTasks, 0);
}

// Issue 17: host values live in pinned memory; evict and reload copy on the
// copy worker's stream and complete before returning, in either completion
// mode. Written without a GPU at hand: not yet run on one.
TEST(CudaBackend, EvictAndReloadRoundTripThroughPinnedHostMemory) {
  REQUIRE_GPU();
  for (auto completion : {CudaBackendOptions::Completion::Synchronize,
                          CudaBackendOptions::Completion::Deferred}) {
    CudaBackendOptions options;
    options.physicalDevices = {0, 0};
    options.completion = completion;
    ExecutorOptions executorOptions;
    executorOptions.memoryPolicy = MemoryPolicy::Wait;
    Executor executor(makeBackend(options), executorOptions);
    TaskGraph graph;
    Shape shape = {300, 41};
    std::vector<double> data(numElements(shape));
    for (size_t i = 0; i < data.size(); ++i)
      data[i] = 0.5 * static_cast<double>(i) - 7.25;
    ValueId input = *graph.addInput(0, shape, ElementType::F64);
    ValueId negated = *graph.addEinsum(0, "ij->ij", JoinKind::Neg,
                                       std::nullopt, {input});
    ValueId stash = *graph.addEvict(negated);
    ValueId late = *graph.addEinsum(0, "ij->ij", JoinKind::Neg, std::nullopt,
                                    {negated});
    ValueId back = *graph.addReload(stash, 1, {late});
    ValueId twice = *graph.addEinsum(1, "ij->ij", JoinKind::Neg, std::nullopt,
                                     {back});
    ASSERT_TRUE(graph.markOutput(twice));
    ASSERT_TRUE(graph.markOutput(late));
    Result<RunResult> run = executor.run(graph, {{input, data.data()}});
    ASSERT_TRUE(run) << run.message();
    EXPECT_EQ(0, std::memcmp(run->outputs.at(twice).bytes.data(), data.data(),
                             data.size() * sizeof(double)));
    EXPECT_EQ(0, std::memcmp(run->outputs.at(late).bytes.data(), data.data(),
                             data.size() * sizeof(double)));
    EXPECT_EQ(run->hostPeakBytes, data.size() * sizeof(double));
    EXPECT_GE(run->tasks[back].start, run->tasks[late].end);
  }
}

TEST(CudaBackend, PeerCopiesBetweenGpus) {
  REQUIRE_GPU();
  if (*cudaDeviceCount() < 2)
    GTEST_SKIP() << "needs two GPUs";
  CudaBackendOptions options;
  options.physicalDevices = {0, 1};
  Executor executor(makeBackend(options));
  TaskGraph graph;
  std::vector<float> data = randomFloats(1 << 20, 6);
  ValueId input = *graph.addInput(0, {1 << 20});
  ValueId there = *graph.addTransfer(input, 1);
  ValueId back = *graph.addTransfer(there, 0);
  ASSERT_TRUE(graph.markOutput(back));
  ASSERT_TRUE(graph.markOutput(there));
  Result<RunResult> run = executor.run(graph, {{input, data.data()}});
  ASSERT_TRUE(run) << run.message();
  for (ValueId id : {there, back})
    EXPECT_EQ(0, std::memcmp(run->outputs.at(id).bytes.data(), data.data(),
                             data.size() * sizeof(float)));
}

TEST(CudaBackend, SliceAssembleFillAndHalfStorage) {
  REQUIRE_GPU();
  CudaBackendOptions options;
  options.physicalDevices = {0, 0};
  Executor executor(makeBackend(options));
  for (ElementType type :
       {ElementType::F16, ElementType::F32, ElementType::F64}) {
    SCOPED_TRACE(std::string(elementTypeName(type)));
    Shape shape = {10, 7, 5};
    std::vector<unsigned char> data(byteSize(shape, type));
    for (size_t i = 0; i < data.size(); ++i)
      data[i] = static_cast<unsigned char>(i * 131 + 7);
    TaskGraph graph;
    ValueId input = *graph.addInput(0, shape, type);
    std::vector<ValueId> blocks;
    std::vector<std::vector<int64_t>> extents = {{3, 3, 4}, {2, 5}, {5}};
    for (int64_t o0 : {0, 3, 6})
      for (int64_t o1 : {0, 2}) {
        Shape blockShape = {o0 == 6 ? 4 : 3, o1 == 0 ? 2 : 5, 5};
        ValueId block = *graph.addSlice(0, input, {o0, o1, 0}, blockShape);
        blocks.push_back(*graph.addTransfer(block, 1));
      }
    ValueId assembled = *graph.addAssemble(1, extents, blocks);
    ValueId filled = *graph.addFill(1, {3, 17}, 1.5, type);
    ValueId zeros = *graph.addFill(0, {1000}, 0.0, type);
    ASSERT_TRUE(graph.markOutput(assembled));
    ASSERT_TRUE(graph.markOutput(filled));
    ASSERT_TRUE(graph.markOutput(zeros));
    Result<RunResult> run = executor.run(graph, {{input, data.data()}});
    ASSERT_TRUE(run) << run.message();
    EXPECT_EQ(run->outputs.at(assembled).bytes, data);
    std::vector<unsigned char> expected(byteSize({3, 17}, type));
    cpu::fill(expected.data(), type, 3 * 17, 1.5);
    EXPECT_EQ(run->outputs.at(filled).bytes, expected);
    EXPECT_EQ(run->outputs.at(zeros).bytes,
              std::vector<unsigned char>(byteSize({1000}, type), 0));
  }
}

TEST(CudaBackend, DelayTasksBusyTheDevice) {
  REQUIRE_GPU();
  Executor executor(makeBackend());
  TaskGraph graph;
  ValueId delay = *graph.addDelay(0, 0.005);
  (void)delay;
  Result<RunResult> run = executor.run(graph, {});
  ASSERT_TRUE(run) << run.message();
  EXPECT_GE(run->makespan, 0.005);
}

TEST(CudaBackend, ErrorsAreMessages) {
  REQUIRE_GPU();
  CudaBackendOptions options;
  options.physicalDevices = {0, 99};
  Result<std::unique_ptr<Backend>> bad = createCudaBackend(options);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.message().find("GPU 99"), std::string::npos) << bad.message();

  std::unique_ptr<Backend> backend = makeBackend();
  ASSERT_TRUE(backend);
  Result<DeviceBuffer> huge = backend->allocate(0, uint64_t(1) << 52);
  ASSERT_FALSE(huge);
  EXPECT_NE(huge.message().find("cudaMalloc"), std::string::npos)
      << huge.message();
  std::printf("(expected) %s\n", huge.message().c_str());
  // The backend still works afterwards.
  Result<DeviceBuffer> small = backend->allocate(0, 1024);
  ASSERT_TRUE(small) << small.message();
  std::vector<char> bytes(1024, 7), back(1024, 0);
  EXPECT_TRUE(backend->upload(0, *small, bytes.data()));
  EXPECT_TRUE(backend->download(0, *small, back.data()));
  EXPECT_EQ(bytes, back);
  backend->deallocate(0, *small);
}

TEST(CudaBackend, LargeUploadsAndDownloadsStreamThroughStaging) {
  REQUIRE_GPU();
  CudaBackendOptions options;
  options.stagingBytes = 1 << 16; // Many chunks.
  std::unique_ptr<Backend> backend = makeBackend(options);
  ASSERT_TRUE(backend);
  uint64_t bytes = (uint64_t(5) << 20) + 12345;
  Result<DeviceBuffer> buffer = backend->allocate(0, bytes);
  ASSERT_TRUE(buffer) << buffer.message();
  std::vector<unsigned char> data(bytes), back(bytes);
  for (uint64_t i = 0; i < bytes; ++i)
    data[i] = static_cast<unsigned char>(i * 2654435761u >> 13);
  ASSERT_TRUE(backend->upload(0, *buffer, data.data()));
  ASSERT_TRUE(backend->download(0, *buffer, back.data()));
  EXPECT_EQ(data, back);
  backend->deallocate(0, *buffer);
}

//===----------------------------------------------------------------------===//
// Measurements (DOPPLER_CUDA_BENCH=1)
//===----------------------------------------------------------------------===//

std::string tracePath(const std::string &name) {
  const char *dir = std::getenv("DOPPLER_CUDA_TRACE_DIR");
  return std::string(dir ? dir : "/tmp") + "/" + name;
}

/// X_{l+1} = X_l W_l for `layers` square layers of size n; with `blocks`
/// > 1 each product is split into row blocks spread round-robin over
/// `devices` virtual devices and assembled on device 0.
struct MatmulChain {
  TaskGraph graph;
  std::vector<ValueId> inputs;
  std::vector<std::vector<float>> data;
  ValueId result;

  MatmulChain(int64_t n, int layers, int blocks, int devices) {
    inputs.push_back(*graph.addInput(0, {n, n}));
    data.push_back(randomFloats(n * n, 1, -0.05, 0.05));
    ValueId x = inputs[0];
    for (int l = 0; l < layers; ++l) {
      ValueId w = *graph.addInput(0, {n, n});
      inputs.push_back(w);
      data.push_back(randomFloats(n * n, 2 + l, -0.05, 0.05));
      if (blocks == 1) {
        x = *graph.addEinsum(0, "ij,jk->ik", JoinKind::Mul, AggKind::Add,
                             {x, w});
        continue;
      }
      std::vector<ValueId> parts;
      std::vector<int64_t> extents;
      for (int b = 0; b < blocks; ++b) {
        int d = b % devices;
        int64_t rows = n / blocks;
        ValueId part = *graph.addSlice(0, x, {rows * b, 0}, {rows, n});
        ValueId y =
            *graph.addEinsum(d, "ij,jk->ik", JoinKind::Mul, AggKind::Add,
                             {*graph.onDevice(part, d), *graph.onDevice(w, d)});
        parts.push_back(*graph.onDevice(y, 0));
        extents.push_back(rows);
      }
      x = *graph.addAssemble(0, {extents, {n}}, parts);
    }
    result = x;
    (void)graph.markOutput(result);
  }

  InputBindings bindings() const {
    InputBindings b;
    for (size_t i = 0; i < inputs.size(); ++i)
      b[inputs[i]] = data[i].data();
    return b;
  }
};

/// Median makespan of `runs` runs after one warm-up.
double medianMakespan(Executor &executor, MatmulChain &chain, int runs,
                      RunResult *last) {
  std::vector<double> times;
  for (int r = 0; r <= runs; ++r) {
    Result<RunResult> run = executor.run(chain.graph, chain.bindings());
    EXPECT_TRUE(run) << run.message();
    if (!run)
      return 0;
    if (r > 0)
      times.push_back(run->makespan);
    if (last)
      *last = std::move(*run);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

bool cudaOk(cudaError_t error) {
  EXPECT_EQ(error, cudaSuccess) << cudaGetErrorString(error);
  return error == cudaSuccess;
}
bool cublasOk(cublasStatus_t status) {
  EXPECT_EQ(status, CUBLAS_STATUS_SUCCESS) << cublasGetStatusString(status);
  return status == CUBLAS_STATUS_SUCCESS;
}

/// The same chain as back-to-back cublasSgemm calls on one stream, timed
/// with events (0 on failure).
double directCublasSeconds(int64_t n, int layers, int runs) {
  float *buffers[3] = {nullptr, nullptr, nullptr};
  size_t bytes = static_cast<size_t>(n * n) * sizeof(float);
  cublasHandle_t handle = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  std::vector<double> times;
  auto measure = [&]() {
    for (float *&buffer : buffers)
      if (!cudaOk(cudaMalloc(&buffer, bytes)) ||
          !cudaOk(cudaMemset(buffer, 0, bytes)))
        return false;
    if (!cublasOk(cublasCreate(&handle)) || !cudaOk(cudaEventCreate(&start)) ||
        !cudaOk(cudaEventCreate(&stop)))
      return false;
    const float alpha = 1, beta = 0;
    for (int r = 0; r <= runs; ++r) {
      if (!cudaOk(cudaEventRecord(start)))
        return false;
      for (int l = 0; l < layers; ++l)
        if (!cublasOk(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n,
                                  &alpha, buffers[1], n, buffers[l % 2 ? 2 : 0],
                                  n, &beta, buffers[l % 2 ? 0 : 2], n)))
          return false;
      float ms = 0;
      if (!cudaOk(cudaEventRecord(stop)) ||
          !cudaOk(cudaEventSynchronize(stop)) ||
          !cudaOk(cudaEventElapsedTime(&ms, start, stop)))
        return false;
      if (r > 0)
        times.push_back(ms * 1e-3);
    }
    return true;
  };
  bool measured = measure();
  if (start)
    cudaOk(cudaEventDestroy(start));
  if (stop)
    cudaOk(cudaEventDestroy(stop));
  if (handle)
    cublasOk(cublasDestroy(handle));
  for (float *buffer : buffers)
    if (buffer)
      cudaOk(cudaFree(buffer));
  if (!measured || times.empty())
    return 0;
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

TEST(CudaBench, MatmulChainDecomposedVsOneGemm) {
  REQUIRE_BENCH();
  const int64_t n = 4096;
  const int layers = 4;
  double flops = 2.0 * n * n * n * layers;
  double direct = directCublasSeconds(n, layers, 5);
  ASSERT_GT(direct, 0);
  std::printf("direct cuBLAS (%d x sgemm %lld^3): %.3f ms, %.1f TFLOP/s\n",
              layers, static_cast<long long>(n), direct * 1e3,
              flops / direct * 1e-12);
  for (auto completion : {CudaBackendOptions::Completion::Synchronize,
                          CudaBackendOptions::Completion::Deferred})
    for (auto [blocks, devices] :
         std::vector<std::pair<int, int>>{{1, 1}, {4, 1}, {4, 2}, {8, 4}}) {
      CudaBackendOptions options;
      options.completion = completion;
      options.physicalDevices.assign(devices, 0);
      Executor executor(makeBackend(options));
      MatmulChain chain(n, layers, blocks, devices);
      RunResult last;
      double seconds = medianMakespan(executor, chain, 5, &last);
      const char *mode = completion == CudaBackendOptions::Completion::Deferred
                             ? "deferred"
                             : "sync";
      std::printf("%-8s %d blocks on %d virtual devices: %.3f ms, %.1f "
                  "TFLOP/s, %.2fx direct\n",
                  mode, blocks, devices, seconds * 1e3, flops / seconds * 1e-12,
                  seconds / direct);
      std::string path = tracePath("doppler-cuda-chain-" + std::string(mode) +
                                   "-" + std::to_string(blocks) + "x" +
                                   std::to_string(devices) + ".json");
      EXPECT_TRUE(last.writeChromeTrace(chain.graph, path));
    }
}

TEST(CudaBench, TransfersOverlapCompute) {
  REQUIRE_BENCH();
  // Device 1 multiplies while a large buffer is copied into it from device
  // 0 (same GPU: a device-to-device copy on device 1's copy stream). With
  // the GEMMs sized to take about as long as the copy, overlapping streams
  // finish well before the sum of the two.
  const int64_t n = 4096, copyElements = int64_t(1) << 28; // 1 GiB
  std::vector<float> a = randomFloats(n * n, 1, -0.01, 0.01);
  std::vector<float> big(copyElements, 1.0f);
  auto best = [&](int gemms, bool copy, const char *trace) {
    CudaBackendOptions options;
    options.physicalDevices = {0, 0};
    Executor executor(makeBackend(options));
    TaskGraph graph;
    ValueId x = *graph.addInput(1, {n, n});
    ValueId y = *graph.addInput(0, {copyElements});
    InputBindings bindings = {{x, a.data()}, {y, big.data()}};
    ValueId p = x;
    for (int i = 0; i < gemms; ++i)
      p = *graph.addEinsum(1, "ij,jk->ik", JoinKind::Mul, AggKind::Add, {p, x});
    if (gemms)
      (void)graph.markOutput(p);
    if (copy)
      (void)graph.markOutput(*graph.addTransfer(y, 1));
    double fastest = 1e9;
    for (int r = 0; r < 4; ++r) {
      Result<RunResult> run = executor.run(graph, bindings);
      EXPECT_TRUE(run) << run.message();
      if (!run)
        return 0.0;
      fastest = std::min(fastest, run->makespan);
      if (trace && r == 3) {
        EXPECT_TRUE(run->writeChromeTrace(graph, tracePath(trace)));
      }
    }
    return fastest;
  };
  double copyOnly = best(0, true, nullptr);
  double oneGemm = best(1, false, nullptr);
  int gemms = std::max(1, static_cast<int>(copyOnly / oneGemm + 0.5));
  double computeOnly = best(gemms, false, nullptr);
  double together = best(gemms, true, "doppler-cuda-overlap.json");
  std::printf("copy 1 GiB %.3f ms (%.0f GB/s), %d GEMMs %.3f ms, both %.3f "
              "ms (%.0f%% of the sum)\n",
              copyOnly * 1e3, 4.0 * copyElements / copyOnly * 1e-9, gemms,
              computeOnly * 1e3, together * 1e3,
              100 * together / (computeOnly + copyOnly));
  EXPECT_LT(together, 0.9 * (computeOnly + copyOnly));
}

} // namespace
