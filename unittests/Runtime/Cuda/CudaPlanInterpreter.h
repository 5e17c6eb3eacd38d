//===- CudaPlanInterpreter.h - CUDA plans run on the host -------*- C++ -*-===//
//
// What the CUDA plan tests share: a host interpreter of KernelPlans with the
// kernels' own per-element functions (CudaKernelMath.h), a thread-by-thread
// emulation of the reduction groups and a reference of cuBLAS's column-major
// strided-batched GEMM, and the checks that plan a case, interpret it and
// compare with the double reference (CudaPlanTests.cpp,
// CudaPlanGemmTests.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_UNITTESTS_RUNTIME_CUDA_CUDAPLANINTERPRETER_H
#define DOPPLER_UNITTESTS_RUNTIME_CUDA_CUDAPLANINTERPRETER_H

#include "CudaTestCases.h"

#include "ContractionPlan.h"
#include "CudaCheck.h"
#include "CudaPlan.h"

#include "doppler/runtime/CpuKernels.h"
#include "doppler/runtime/CudaBackend.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

namespace doppler::runtime::cuda::plan_test {

using namespace doppler::runtime::test;


/// A GPU like the H100 and a tiny one that makes even small reductions
/// split into several passes.
inline const DeviceLimits kH100{132, 2048};
inline const DeviceLimits kTiny{1, 256};

//===----------------------------------------------------------------------===//
// Host interpreter of plans
//===----------------------------------------------------------------------===//

struct HostBuffer {
  unsigned char *data;
  int64_t elements;
};

inline uint64_t reachOf(const StridedSpace &space, int slot) {
  uint64_t offset = 0;
  for (int d = 0; d < space.rank; ++d)
    offset +=
        static_cast<uint64_t>(space.extent[d] - 1) * space.stride[slot][d];
  return offset + 1;
}

class Interpreter {
public:
  Interpreter(const KernelPlan &plan, std::vector<HostBuffer> inputs,
              HostBuffer output, bool forceWide)
      : plan_(plan), inputs_(std::move(inputs)), output_(output),
        forceWide_(forceWide) {
    for (uint64_t bytes : plan.tempBytes)
      temps_.emplace_back(bytes, 0xAB); // Poisoned.
  }

  template <typename T> void run() {
    for (const Step &step : plan_.steps) {
      if (const auto *map = std::get_if<MapStep>(&step))
        wide(map->wide) ? runMap<T, uint64_t>(*map) : runMap<T, uint32_t>(*map);
      else if (const auto *reduce = std::get_if<ReduceStep>(&step))
        wide(reduce->wide) ? runReduce<T, uint64_t>(*reduce)
                           : runReduce<T, uint32_t>(*reduce);
      else if (const auto *copy = std::get_if<CopyStep>(&step))
        runCopy(*copy);
      else if (const auto *gemm = std::get_if<GemmStep>(&step))
        runGemm<T>(*gemm);
      else if (const auto *fill = std::get_if<FillStep>(&step))
        runFill(*fill);
      else if (const auto *fused = std::get_if<FusedStep>(&step))
        wide(fused->wide) ? runFused<T, uint64_t>(*fused)
                          : runFused<T, uint32_t>(*fused);
    }
  }

private:
  bool wide(bool planned) const { return planned || forceWide_; }

  unsigned elementBytes() const { return elementSize(plan_.type); }

  HostBuffer buffer(const BufferRef &ref) {
    switch (ref.kind) {
    case BufferRef::Kind::Input:
      return inputs_.at(ref.index);
    case BufferRef::Kind::Output:
      return output_;
    case BufferRef::Kind::Temp:
      return {temps_.at(ref.index).data(),
              static_cast<int64_t>(temps_[ref.index].size() / elementBytes())};
    }
    return output_;
  }

  /// The step's pointer, after checking that `reach` elements from it stay
  /// inside the buffer.
  template <typename T> T *pointer(const BufferRef &ref, uint64_t reach) {
    HostBuffer host = buffer(ref);
    EXPECT_LE(ref.offset + reach, static_cast<uint64_t>(host.elements))
        << "out of bounds";
    return reinterpret_cast<T *>(host.data) + ref.offset;
  }

  template <typename T, typename Index> void runMap(const MapStep &step) {
    const EinsumParams &p = step.params;
    T *out = pointer<T>(step.out, reachOf(p.out, kOutSlot));
    const T *in0 = pointer<T>(step.in0, reachOf(p.out, kIn0Slot));
    const T *in1 = pointer<T>(step.in1, reachOf(p.out, kIn1Slot));
    for (int64_t i = 0; i < p.outCount; ++i)
      mapElement<T, Index>(p, out, in0, in1, static_cast<Index>(i));
  }

  /// Lane values combined as the kernels' shuffles do (shfl_down tree).
  template <typename T> T combine(AggKind agg, std::vector<T> lanes) {
    for (size_t offset = lanes.size() / 2; offset > 0; offset /= 2)
      for (size_t lane = 0; lane < offset; ++lane)
        lanes[lane] = aggOp(agg, lanes[lane], lanes[lane + offset]);
    return lanes[0];
  }

  template <typename T, typename Index> void runReduce(const ReduceStep &step) {
    const EinsumParams &p = step.params;
    uint64_t items = static_cast<uint64_t>(p.outCount * p.splits);
    T *out =
        pointer<T>(step.out, p.toPartials ? items : reachOf(p.out, kOutSlot));
    const T *in0 = pointer<T>(step.in0, reachOf(p.out, kIn0Slot) +
                                            reachOf(p.red, kIn0Slot) - 1);
    const T *in1 = pointer<T>(step.in1, reachOf(p.out, kIn1Slot) +
                                            reachOf(p.red, kIn1Slot) - 1);
    EXPECT_TRUE(step.group == 1 || step.group == 32 ||
                step.group == kBlockSize);
    EXPECT_GE(p.chunk * p.splits, p.redCount);
    EXPECT_LT(p.chunk * (p.splits - 1), p.redCount) << "an empty split";
    for (uint64_t item = 0; item < items; ++item) {
      std::vector<T> lanes(step.group);
      Index outOffset = 0;
      for (int lane = 0; lane < step.group; ++lane)
        lanes[lane] = reduceLane<T, Index>(
            p, in0, in1, static_cast<Index>(item), lane, step.group, outOffset);
      T acc;
      if (step.group == kBlockSize) {
        // Warps first, then warp 0 over the warp results (padded with the
        // identity), as reduceBlockKernel does.
        std::vector<T> warps(32, static_cast<T>(p.identity));
        for (int w = 0; w < kBlockSize / 32; ++w)
          warps[w] =
              combine(p.agg, std::vector<T>(lanes.begin() + 32 * w,
                                            lanes.begin() + 32 * w + 32));
        acc = combine(p.agg, warps);
      } else {
        acc = combine(p.agg, lanes);
      }
      out[outOffset] = acc;
    }
  }

  void runCopy(const CopyStep &step) {
    const CopyParams &p = step.params;
    unsigned char *dst = buffer(step.dst).data;
    const unsigned char *src = buffer(step.src).data;
    EXPECT_EQ(step.elementBytes, elementBytes());
    EXPECT_LE(step.dst.offset + reachOf(p.space, 0),
              static_cast<uint64_t>(buffer(step.dst).elements));
    EXPECT_LE(step.src.offset + reachOf(p.space, 1),
              static_cast<uint64_t>(buffer(step.src).elements));
    dst += step.dst.offset * step.elementBytes;
    src += step.src.offset * step.elementBytes;
    if (step.contiguous) {
      std::memcpy(dst, src, p.count * step.elementBytes);
      return;
    }
    if (step.tiled) {
      ++tiledCopies;
      switch (step.elementBytes) {
      case 2:
        return runTranspose(step.transpose, reinterpret_cast<uint16_t *>(dst),
                            reinterpret_cast<const uint16_t *>(src));
      case 4:
        return runTranspose(step.transpose, reinterpret_cast<uint32_t *>(dst),
                            reinterpret_cast<const uint32_t *>(src));
      default:
        return runTranspose(step.transpose, reinterpret_cast<uint64_t *>(dst),
                            reinterpret_cast<const uint64_t *>(src));
      }
    }
    for (int64_t i = 0; i < p.count; ++i) {
      switch (step.elementBytes) {
      case 2:
        copyElement<uint16_t, uint64_t>(p, reinterpret_cast<uint16_t *>(dst),
                                        reinterpret_cast<const uint16_t *>(src),
                                        i);
        break;
      case 4:
        copyElement<uint32_t, uint32_t>(p, reinterpret_cast<uint32_t *>(dst),
                                        reinterpret_cast<const uint32_t *>(src),
                                        static_cast<uint32_t>(i));
        break;
      default:
        copyElement<uint64_t, uint64_t>(p, reinterpret_cast<uint64_t *>(dst),
                                        reinterpret_cast<const uint64_t *>(src),
                                        i);
      }
    }
  }

  /// transposeKernel, block by block and thread by thread.
  template <typename Word>
  void runTranspose(const TransposeParams &t, Word *dst, const Word *src) {
    EXPECT_EQ(t.batches * t.rows * t.cols,
              static_cast<int64_t>(t.batches) * t.rows * t.cols);
    uint64_t tiles = static_cast<uint64_t>(t.batches) *
                     ((t.rows + kTransposeTile - 1) / kTransposeTile) *
                     ((t.cols + kTransposeTile - 1) / kTransposeTile);
    Word tile[kTransposeTile][kTransposeTile + 1];
    for (uint64_t id = 0; id < tiles; ++id) {
      uint64_t offset[2], row0, col0;
      transposeTile<uint64_t>(t, id, offset, row0, col0);
      for (int y = 0; y < kTransposeBlockRows; ++y)
        for (int x = 0; x < kTransposeTile; ++x)
          for (int i = y; i < kTransposeTile; i += kTransposeBlockRows) {
            uint64_t row = row0 + x, col = col0 + i;
            if (row < uint64_t(t.rows) && col < uint64_t(t.cols))
              tile[i][x] = src[offset[1] + row + col * t.srcColStride];
          }
      for (int y = 0; y < kTransposeBlockRows; ++y)
        for (int x = 0; x < kTransposeTile; ++x)
          for (int i = y; i < kTransposeTile; i += kTransposeBlockRows) {
            uint64_t row = row0 + i, col = col0 + x;
            if (row < uint64_t(t.rows) && col < uint64_t(t.cols))
              dst[offset[0] + row * t.dstRowStride + col] = tile[x][i];
          }
    }
  }

  /// cuBLAS semantics: column-major C(m x n) = op(A) op(B), per batch.
  template <typename T> void runGemm(const GemmStep &g) {
    // cuBLAS's requirements on the leading dimensions.
    EXPECT_GE(g.lda, std::max<int64_t>(1, g.transA ? g.k : g.m));
    EXPECT_GE(g.ldb, std::max<int64_t>(1, g.transB ? g.n : g.k));
    EXPECT_GE(g.ldc, std::max<int64_t>(1, g.m));
    auto reach = [&](int64_t rows, int64_t cols, int64_t ld, int64_t stride) {
      return static_cast<uint64_t>((g.batch - 1) * stride + (cols - 1) * ld +
                                   rows);
    };
    const T *a = pointer<T>(g.a, g.transA ? reach(g.k, g.m, g.lda, g.strideA)
                                          : reach(g.m, g.k, g.lda, g.strideA));
    const T *b = pointer<T>(g.b, g.transB ? reach(g.n, g.k, g.ldb, g.strideB)
                                          : reach(g.k, g.n, g.ldb, g.strideB));
    T *c = pointer<T>(g.c, reach(g.m, g.n, g.ldc, g.strideC));
    for (int64_t batch = 0; batch < g.batch; ++batch)
      for (int64_t i = 0; i < g.m; ++i)
        for (int64_t j = 0; j < g.n; ++j) {
          double sum = 0;
          for (int64_t l = 0; l < g.k; ++l) {
            double x = g.transA ? a[batch * g.strideA + l + i * g.lda]
                                : a[batch * g.strideA + i + l * g.lda];
            double y = g.transB ? b[batch * g.strideB + j + l * g.ldb]
                                : b[batch * g.strideB + l + j * g.ldb];
            sum += x * y;
          }
          c[batch * g.strideC + i + j * g.ldc] = static_cast<T>(sum);
        }
  }

  template <typename T, typename Index> void runFused(const FusedStep &step) {
    const FusedParams &p = *step.params;
    T *out = pointer<T>(step.out, p.count);
    FusedInputs<T> inputs;
    for (int k = 0; k < step.numInputs; ++k) {
      uint64_t reach = 1;
      for (int d = 0; d < p.rank; ++d)
        reach += static_cast<uint64_t>(p.extent[d] - 1) * p.stride[k][d];
      inputs.in[k] = pointer<T>(step.in[k], reach);
    }
    for (int64_t i = 0; i < p.count; ++i)
      fusedElement<T, Index>(p, out, inputs, static_cast<Index>(i));
  }

  void runFill(const FillStep &step) {
    HostBuffer host = buffer(step.dst);
    EXPECT_LE(step.dst.offset + step.count, host.elements);
    unsigned char *dst = host.data + step.dst.offset * step.elementBytes;
    for (int64_t i = 0; i < step.count; ++i)
      std::memcpy(dst + i * step.elementBytes, &step.pattern,
                  step.elementBytes); // Little-endian: the low bytes.
  }

public:
  int tiledCopies = 0;

private:
  const KernelPlan &plan_;
  std::vector<HostBuffer> inputs_;
  HostBuffer output_;
  bool forceWide_;
  std::vector<std::vector<unsigned char>> temps_;
};

template <typename T> std::vector<T> cast(const std::vector<double> &values) {
  return std::vector<T>(values.begin(), values.end());
}

/// `plan` interpreted as element type RunAs on `typed` inputs (words of
/// type T) into an output of `size` elements, each `poison` first (every
/// element must be written).
template <typename RunAs, typename T>
std::vector<T> interpretPlan(const KernelPlan &plan,
                             std::vector<std::vector<T>> &typed, size_t size,
                             bool forceWide, T poison) {
  std::vector<HostBuffer> buffers;
  for (auto &input : typed)
    buffers.push_back({reinterpret_cast<unsigned char *>(input.data()),
                       static_cast<int64_t>(input.size())});
  std::vector<T> out(size, poison);
  Interpreter interpreter(plan, buffers,
                          {reinterpret_cast<unsigned char *>(out.data()),
                           static_cast<int64_t>(out.size())},
                          forceWide);
  interpreter.run<RunAs>();
  return out;
}

/// Plans `c` for `limits`, interprets the plan and compares with the
/// reference. Returns the plan.
template <typename T>
std::optional<KernelPlan> checkPlan(const EinsumCase &c,
                                    const DeviceLimits &limits,
                                    bool forceWide = false) {
  SCOPED_TRACE(c.name());
  ElementType type =
      std::is_same_v<T, double> ? ElementType::F64 : ElementType::F32;
  std::optional<EinsumSpec> spec = EinsumSpec::parse(c.spec);
  EXPECT_TRUE(spec);
  if (!spec)
    return std::nullopt;
  Result<KernelPlan> plan = planEinsum(*spec, c.join, c.aggregation, c.scalar,
                                       c.shapes, type, limits);
  EXPECT_TRUE(plan) << plan.message();
  if (!plan)
    return std::nullopt;
  std::vector<std::vector<double>> inputs;
  std::vector<std::vector<T>> typed;
  for (size_t i = 0; i < c.shapes.size(); ++i) {
    inputs.push_back(inputFor(c.join, static_cast<int>(i),
                              numElements(c.shapes[i]), 7 + 13 * i));
    typed.push_back(cast<T>(inputs.back()));
  }
  std::vector<double> expected =
      referenceEinsum(*spec, c.join, c.aggregation, c.scalar, inputs, c.shapes);
  std::vector<T> out = interpretPlan<T>(*plan, typed, expected.size(), forceWide,
                                       std::numeric_limits<T>::quiet_NaN());
  double tolerance = std::is_same_v<T, double> ? 1e-12 : 2e-5;
  EXPECT_LE(relativeError(out.data(), expected), tolerance);
  return std::move(*plan);
}

/// Plans fused case `c`, interprets the plan with the kernel's own
/// fusedElement and compares with JoinProgram::evaluate within
/// tol * max(1, |reference|) (1e-6 in f32, 1e-12 in f64).
template <typename T>
void checkFusedPlan(const FusedCase &c, bool forceWide = false) {
  SCOPED_TRACE(c.name());
  ElementType type =
      std::is_same_v<T, double> ? ElementType::F64 : ElementType::F32;
  Result<KernelPlan> plan = planFused(*EinsumSpec::parse(c.spec), c.program,
                                      c.shapes, type, kH100);
  ASSERT_TRUE(plan) << plan.message();
  std::vector<std::vector<double>> inputs = fusedInputs(c, 5);
  std::vector<std::vector<T>> typed;
  for (const std::vector<double> &input : inputs)
    typed.push_back(cast<T>(input));
  std::vector<double> expected = referenceFused(c, inputs);
  std::vector<T> out = interpretPlan<T>(*plan, typed, expected.size(), forceWide,
                                       std::numeric_limits<T>::quiet_NaN());
  EXPECT_EQ(fusedMismatches(out.data(), expected,
                            std::is_same_v<T, double> ? 1e-12 : 1e-6),
            0);
}

//===----------------------------------------------------------------------===//
// Fused plans against the reference
//===----------------------------------------------------------------------===//

inline size_t countSteps(const KernelPlan &plan, size_t index) {
  return std::count_if(plan.steps.begin(), plan.steps.end(),
                       [&](const Step &s) { return s.index() == index; });
}

} // namespace doppler::runtime::cuda::plan_test

#endif // DOPPLER_UNITTESTS_RUNTIME_CUDA_CUDAPLANINTERPRETER_H
