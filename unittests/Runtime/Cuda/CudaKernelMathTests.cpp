//===- CudaKernelMathTests.cpp - Kernel math and errors, on the host ------===//
//
// Runs on every machine: the per-element joins, aggregations, index decoding
// and reduction folds of CudaKernelMath.h against the CPU's applyJoin and
// applyAgg; error formatting (CudaCheck.h); and option checks that fail
// before any GPU is touched.
//
//===----------------------------------------------------------------------===//

#include "CudaTestCases.h"

#include "ContractionPlan.h"
#include "CudaCheck.h"
#include "CudaPlan.h"

#include "doppler/runtime/CpuKernels.h"
#include "doppler/runtime/CudaBackend.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace doppler;
using namespace doppler::runtime;
using namespace doppler::runtime::cuda;
using namespace doppler::runtime::test;

namespace {

//===----------------------------------------------------------------------===//
// Joins and aggregations, element by element
//===----------------------------------------------------------------------===//

TEST(CudaKernelMath, JoinsAndAggregationsMatchApplyJoinAndApplyAgg) {
  const double nan = std::nan("");
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> values = {-2.5, -1, -0.0, 0.0,  0.25,
                                1,    3,  inf,  -inf, nan};
  for (unsigned j = 0; j < kNumJoinKinds; ++j) {
    auto join = static_cast<JoinKind>(j);
    for (double a : values)
      for (double b : values) {
        double expected = applyJoin(join, a, b, 1.5);
        double actual = joinOp<double>(join, a, b, 1.5);
        if (std::isnan(expected)) {
          EXPECT_TRUE(std::isnan(actual)) << joinKindName(join) << a << b;
          continue;
        }
        EXPECT_EQ(std::signbit(expected), std::signbit(actual))
            << joinKindName(join) << " " << a << " " << b;
        if (!std::isinf(expected) &&
            (join == JoinKind::Gelu || join == JoinKind::Tanh ||
             join == JoinKind::Silu || join == JoinKind::Sigmoid))
          EXPECT_NEAR(actual, expected, 1e-15 * std::fabs(expected) + 1e-300);
        else
          EXPECT_EQ(actual, expected)
              << joinKindName(join) << " " << a << " " << b;
        float actual32 = joinOp<float>(join, static_cast<float>(a),
                                       static_cast<float>(b), 1.5f);
        if (std::isinf(expected))
          EXPECT_EQ(actual32, expected) << joinKindName(join) << " " << a;
        else // Float rounding, amplified by gelu's cancellation.
          EXPECT_NEAR(actual32, expected, 2e-5 * std::fabs(expected) + 1e-7)
              << joinKindName(join) << " " << a << " " << b;
      }
  }
  for (unsigned k = 0; k < kNumAggKinds; ++k) {
    auto agg = static_cast<AggKind>(k);
    for (double acc : values)
      for (double value : values) {
        double expected = applyAgg(agg, acc, value);
        double actual = aggOp<double>(agg, acc, value);
        if (std::isnan(expected))
          EXPECT_TRUE(std::isnan(actual));
        else
          EXPECT_EQ(actual, expected) << aggKindName(agg) << acc << value;
      }
  }
}

TEST(CudaKernelMath, DecodeAndFoldWalkEveryPoint) {
  // A 3-d space with odd strides, folded with every step size the kernels
  // use: each point is visited exactly once across the lanes.
  EinsumParams p;
  p.red.rank = 3;
  int64_t extents[3] = {3, 5, 7};
  int64_t strides[3] = {1000, 10, 1};
  for (int d = 0; d < 3; ++d) {
    p.red.extent[d] = extents[d];
    p.red.stride[kIn0Slot][d] = strides[d];
    p.red.stride[kIn1Slot][d] = 0;
  }
  p.redCount = 105;
  p.join = JoinKind::Identity;
  p.agg = AggKind::Add;
  std::vector<double> data(3000, 0);
  double one = 1;
  for (uint32_t step : {1u, 2u, 7u, 32u, 256u}) {
    std::fill(data.begin(), data.end(), 0);
    // Mark visits through the odometer by folding an indicator per point.
    for (int64_t point = 0; point < 105; ++point) {
      data.assign(3000, 0);
      int64_t i = point / 35, j = point / 7 % 5, k = point % 7;
      data[i * 1000 + j * 10 + k] = 1;
      double total = 0;
      for (uint32_t lane = 0; lane < step; ++lane)
        total += foldReduced<double, uint32_t>(p, data.data(), &one, 0, 0, lane,
                                               105, step);
      EXPECT_EQ(total, 1) << "point " << point << " step " << step;
    }
  }
  StridedSpace space;
  space.rank = 3;
  for (int d = 0; d < 3; ++d) {
    space.extent[d] = extents[d];
    space.stride[0][d] = strides[d];
  }
  uint64_t offset[1];
  decodeOffsets<uint64_t, 1>(space, 2 * 35 + 3 * 7 + 4, offset);
  EXPECT_EQ(offset[0], 2034u);
}

//===----------------------------------------------------------------------===//
// Errors and the backend without a GPU
//===----------------------------------------------------------------------===//

TEST(CudaCheck, FailuresNameTheCallFileAndLine) {
  EXPECT_EQ(formatCallFailure("cudaMalloc(&p, n)", "/a/b/CudaBackend.cpp", 42,
                              "cudaErrorMemoryAllocation", "out of memory"),
            "cudaMalloc(&p, n) failed at CudaBackend.cpp:42: "
            "cudaErrorMemoryAllocation: out of memory");
  Status status = DOPPLER_CUDA_CHECK(cudaErrorInvalidValue);
  ASSERT_FALSE(status);
  EXPECT_NE(status.message().find("cudaErrorInvalidValue"), std::string::npos)
      << status.message();
  EXPECT_NE(status.message().find("CudaKernelMathTests.cpp:"), std::string::npos);
  EXPECT_TRUE(DOPPLER_CUDA_CHECK(cudaSuccess));
  Status blas = DOPPLER_CUBLAS_CHECK(CUBLAS_STATUS_INVALID_VALUE);
  ASSERT_FALSE(blas);
  EXPECT_NE(blas.message().find("CUBLAS_STATUS_INVALID_VALUE"),
            std::string::npos)
      << blas.message();
  auto returnsEarly = []() -> Result<int> {
    DOPPLER_CUDA_TRY(cudaErrorNotReady);
    return 1;
  };
  EXPECT_FALSE(returnsEarly());
}

TEST(CudaBackendOptions, InvalidOptionsFailBeforeTouchingAGpu) {
  CudaBackendOptions options;
  options.numDevices = -1;
  Result<std::unique_ptr<Backend>> backend = createCudaBackend(options);
  ASSERT_FALSE(backend);
  EXPECT_NE(backend.message().find("device count"), std::string::npos);
  options = {};
  options.numDevices = 3;
  options.physicalDevices = {0, 0};
  backend = createCudaBackend(options);
  ASSERT_FALSE(backend);
  EXPECT_NE(backend.message().find("mapping"), std::string::npos);
  options = {};
  options.stagingBytes = 0;
  EXPECT_FALSE(createCudaBackend(options));
}

TEST(CudaBackendOptions, WithoutAGpuCreationFailsCleanly) {
  Result<int> count = cudaDeviceCount();
  if (count)
    GTEST_SKIP() << "a GPU is present (" << *count << ")";
  EXPECT_EQ(count.message().rfind("no CUDA device: ", 0), 0u)
      << count.message();
  Result<std::unique_ptr<Backend>> backend = createCudaBackend();
  ASSERT_FALSE(backend);
  EXPECT_EQ(backend.message(), count.message());
  std::printf("(expected) %s\n", backend.message().c_str());
}

} // namespace
