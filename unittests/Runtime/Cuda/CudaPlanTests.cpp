//===- CudaPlanTests.cpp - CUDA plans and kernel math, on the host --------===//
//
// Runs on every machine: the plans the CUDA backend builds are interpreted
// on the host with the kernels' own per-element functions
// (CudaKernelMath.h), a thread-by-thread emulation of the reduction groups
// and a reference of cuBLAS's column-major strided-batched GEMM, and
// compared with the double reference einsum. Also checks every plan's
// accesses stay inside their buffers, the launch and splitting decisions,
// and the shared GEMM planner. (Kernel math, errors and options:
// CudaKernelMathTests.cpp.)
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

/// A GPU like the H100 and a tiny one that makes even small reductions
/// split into several passes.
const DeviceLimits kH100{132, 2048};
const DeviceLimits kTiny{1, 256};

//===----------------------------------------------------------------------===//
// Host interpreter of plans
//===----------------------------------------------------------------------===//

struct HostBuffer {
  unsigned char *data;
  int64_t elements;
};

uint64_t reachOf(const StridedSpace &space, int slot) {
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
  std::vector<HostBuffer> buffers;
  for (size_t i = 0; i < c.shapes.size(); ++i) {
    inputs.push_back(inputFor(c.join, static_cast<int>(i),
                              numElements(c.shapes[i]), 7 + 13 * i));
    typed.push_back(cast<T>(inputs.back()));
  }
  for (auto &input : typed)
    buffers.push_back({reinterpret_cast<unsigned char *>(input.data()),
                       static_cast<int64_t>(input.size())});
  std::vector<double> expected =
      referenceEinsum(*spec, c.join, c.aggregation, c.scalar, inputs, c.shapes);
  std::vector<T> out(expected.size(), std::numeric_limits<T>::quiet_NaN());
  Interpreter interpreter(*plan, buffers,
                          {reinterpret_cast<unsigned char *>(out.data()),
                           static_cast<int64_t>(out.size())},
                          forceWide);
  interpreter.run<T>();
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
  std::vector<HostBuffer> buffers;
  for (const std::vector<double> &input : inputs)
    typed.push_back(cast<T>(input));
  for (auto &input : typed)
    buffers.push_back({reinterpret_cast<unsigned char *>(input.data()),
                       static_cast<int64_t>(input.size())});
  std::vector<double> expected = referenceFused(c, inputs);
  std::vector<T> out(expected.size(), std::numeric_limits<T>::quiet_NaN());
  Interpreter interpreter(*plan, buffers,
                          {reinterpret_cast<unsigned char *>(out.data()),
                           static_cast<int64_t>(out.size())},
                          forceWide);
  interpreter.run<T>();
  EXPECT_EQ(fusedMismatches(out.data(), expected,
                            std::is_same_v<T, double> ? 1e-12 : 1e-6),
            0);
}

//===----------------------------------------------------------------------===//
// Fused plans against the reference
//===----------------------------------------------------------------------===//

TEST(CudaPlan, FusedChainsMatchTheReference) {
  for (const FusedCase &c : fusedCases()) {
    checkFusedPlan<float>(c);
    checkFusedPlan<double>(c);
    checkFusedPlan<float>(c, /*forceWide=*/true);
  }
}

TEST(CudaPlan, FusedPlanIsOneKernelWithMergedDimensions) {
  // "ij,j->ij" over 64x700: the bias blocks merging (its stride is 0 along
  // i), so two dimensions; a same-layout chain merges into one.
  Result<KernelPlan> plan =
      planFused(*EinsumSpec::parse("ij,j->ij"), "add(in0, in1); gelu(s0)",
                {{64, 700}, {700}}, ElementType::F32, kH100);
  ASSERT_TRUE(plan) << plan.message();
  ASSERT_EQ(plan->steps.size(), 1u);
  const FusedStep &step = std::get<FusedStep>(plan->steps[0]);
  EXPECT_EQ(step.params->rank, 2);
  EXPECT_EQ(step.params->numSteps, 2);
  EXPECT_EQ(step.params->steps[1].join, JoinKind::Gelu);
  EXPECT_EQ(step.params->steps[1].a, kMaxFusedInputs + 0);
  plan = planFused(*EinsumSpec::parse("ijk,ijk->ijk"), "mul(in0, in1)",
                   {{2, 3, 4}, {2, 3, 4}}, ElementType::F64, kH100);
  ASSERT_TRUE(plan) << plan.message();
  EXPECT_EQ(std::get<FusedStep>(plan->steps[0]).params->rank, 1);
  EXPECT_NE(describeStep(plan->steps[0]).find("fused"), std::string::npos);

  // Errors: f16, too many inputs, a bad program.
  plan = planFused(*EinsumSpec::parse("i->i"), "exp(in0)", {{4}},
                   ElementType::F16, kH100);
  ASSERT_FALSE(plan);
  EXPECT_NE(plan.message().find("f16"), std::string::npos);
  std::string spec, program = "add(in0, in1)";
  std::vector<Shape> shapes;
  for (int k = 0; k <= kMaxFusedInputs; ++k) {
    spec += std::string(k ? "," : "") + "i";
    shapes.push_back({4});
    if (k >= 2)
      program += "; add(s" + std::to_string(k - 2) + ", in" +
                 std::to_string(k) + ")";
  }
  plan = planFused(*EinsumSpec::parse(spec + "->i"), program, shapes,
                   ElementType::F32, kH100);
  ASSERT_FALSE(plan);
  EXPECT_NE(plan.message().find("at most"), std::string::npos)
      << plan.message();
  plan = planFused(*EinsumSpec::parse("i->i"), "exp(in1)", {{4}},
                   ElementType::F32, kH100);
  ASSERT_FALSE(plan);
  EXPECT_NE(plan.message().find("invalid join program"), std::string::npos);
}

//===----------------------------------------------------------------------===//
// Einsum plans against the reference
//===----------------------------------------------------------------------===//

TEST(CudaPlan, EveryCaseMatchesTheReferenceInF32AndF64) {
  for (const EinsumCase &c : einsumCases()) {
    checkPlan<float>(c, kH100);
    checkPlan<double>(c, kH100);
  }
}

TEST(CudaPlan, EveryCaseMatchesOnATinyGpuThatSplitsReductions) {
  for (const EinsumCase &c : einsumCases())
    checkPlan<float>(c, kTiny);
}

TEST(CudaPlan, SixtyFourBitIndexMathAgrees) {
  for (const EinsumCase &c : einsumCases())
    checkPlan<float>(c, kTiny, /*forceWide=*/true);
}

size_t countSteps(const KernelPlan &plan, size_t index) {
  return std::count_if(plan.steps.begin(), plan.steps.end(),
                       [&](const Step &s) { return s.index() == index; });
}

TEST(CudaPlan, ReductionsPickGroupsAndSplits) {
  // A long contiguous row sum to a scalar: a block per split, then a pass
  // over the partials.
  std::optional<KernelPlan> plan = checkPlan<float>(
      {"ij->", JoinKind::Identity, AggKind::Add, {{1000, 1000}}}, kH100);
  ASSERT_TRUE(plan);
  ASSERT_EQ(plan->steps.size(), 2u);
  const auto &first = std::get<ReduceStep>(plan->steps[0]);
  EXPECT_EQ(first.group, kBlockSize);
  EXPECT_GT(first.params.splits, 1);
  EXPECT_TRUE(first.params.toPartials);
  EXPECT_FALSE(std::get<ReduceStep>(plan->steps[1]).params.toPartials);
  EXPECT_EQ(plan->tempBytes.size(), 1u);

  // Row sums of many rows: a warp per row, one pass.
  plan = checkPlan<float>(
      {"ij->i", JoinKind::Identity, AggKind::Max, {{4096, 512}}}, kH100);
  ASSERT_TRUE(plan);
  ASSERT_EQ(plan->steps.size(), 1u);
  EXPECT_EQ(std::get<ReduceStep>(plan->steps[0]).group, 32);

  // Column sums: a thread per column, coalesced across columns.
  plan = checkPlan<float>(
      {"ij->j", JoinKind::Identity, AggKind::Add, {{64, 4096}}}, kH100);
  ASSERT_TRUE(plan);
  ASSERT_EQ(plan->steps.size(), 1u);
  EXPECT_EQ(std::get<ReduceStep>(plan->steps[0]).group, 1);

  // Few tall columns: split along the rows.
  plan = checkPlan<float>(
      {"ij->j", JoinKind::Identity, AggKind::Add, {{100000, 2}}}, kH100);
  ASSERT_TRUE(plan);
  EXPECT_GE(plan->steps.size(), 2u);
}

TEST(CudaPlan, PermutationsUseTiledTransposes) {
  auto tiled = [](const KernelPlan &plan) {
    int count = 0;
    for (const Step &step : plan.steps)
      if (const auto *copy = std::get_if<CopyStep>(&step))
        count += copy->tiled;
    return count;
  };
  std::optional<KernelPlan> plan = checkPlan<float>(
      {"ij->ji", JoinKind::Identity, std::nullopt, {{40, 37}}}, kH100);
  ASSERT_TRUE(plan);
  EXPECT_EQ(tiled(*plan), 1);
  // A batched transpose with the batch in the middle, and odd edges.
  plan = checkPlan<double>(
      {"ijk->kji", JoinKind::Identity, std::nullopt, {{20, 3, 33}}}, kH100);
  ASSERT_TRUE(plan);
  EXPECT_EQ(tiled(*plan), 1);
  EXPECT_EQ(std::get<CopyStep>(plan->steps[0]).transpose.batches, 3);
  plan = checkPlan<float>(
      {"bhqd->bqhd", JoinKind::Identity, std::nullopt, {{2, 4, 50, 64}}},
      kH100);
  ASSERT_TRUE(plan);
  EXPECT_EQ(tiled(*plan), 0); // d stays innermost: strided rows, no tiles.
  plan = checkPlan<float>(
      {"ij->ij", JoinKind::Identity, std::nullopt, {{40, 37}}}, kH100);
  ASSERT_TRUE(plan);
  EXPECT_TRUE(std::get<CopyStep>(plan->steps[0]).contiguous);
  // Too narrow for tiles: the plain strided copy.
  plan = checkPlan<float>(
      {"ij->ji", JoinKind::Identity, std::nullopt, {{4, 1000}}}, kH100);
  ASSERT_TRUE(plan);
  EXPECT_EQ(tiled(*plan), 0);
  // A GEMM whose output needs permuting goes through a tiled copy.
  plan = checkPlan<float>({"bij,bjk->ikb",
                           JoinKind::Mul,
                           AggKind::Add,
                           {{40, 40, 36}, {40, 36, 30}}},
                          kH100);
  ASSERT_TRUE(plan);
  EXPECT_EQ(tiled(*plan), 1);
}

TEST(CudaPlan, ChooseReduceShape) {
  ReduceShape shape = chooseReduceShape(1000, 10, true, kH100);
  EXPECT_EQ(shape.group, 1); // Short rows: a thread each.
  EXPECT_EQ(shape.splits, 1);
  EXPECT_EQ(shape.chunk, 10);
  shape = chooseReduceShape(10000, 100, true, kH100);
  EXPECT_EQ(shape.group, 32);
  EXPECT_EQ(shape.splits, 1);
  shape = chooseReduceShape(1, 1 << 24, true, kH100);
  EXPECT_EQ(shape.group, kBlockSize);
  EXPECT_GT(shape.splits, 100);
  EXPECT_GE(shape.chunk * shape.splits, 1 << 24);
  EXPECT_GE(shape.chunk, kBlockSize * 64);
  shape = chooseReduceShape(4, 1 << 20, false, kH100);
  EXPECT_EQ(shape.group, 1);
  EXPECT_GT(shape.splits, 1);
  shape = chooseReduceShape(1, 0, true, kH100);
  EXPECT_EQ(shape.splits, 1);
  EXPECT_EQ(shape.chunk, 1);
}

TEST(CudaPlan, GridsCoverTheWorkWithinAFewWaves) {
  EXPECT_EQ(gridFor(0, kH100).blocks, 0u);
  EXPECT_EQ(gridFor(1, kH100).blocks, 1u);
  EXPECT_EQ(gridFor(256, kH100).blocks, 1u);
  EXPECT_EQ(gridFor(257, kH100).blocks, 2u);
  EXPECT_EQ(gridFor(uint64_t(1) << 40, kH100).blocks, 132u * 8 * 4);
  EXPECT_EQ(gridFor(uint64_t(1) << 40, kTiny).blocks, 4u);
}

TEST(CudaPlan, DeviceBlockSizesAreBoundedClasses) {
  EXPECT_EQ(deviceBlockSize(1), 512u);
  EXPECT_EQ(deviceBlockSize(513), 1024u);
  EXPECT_EQ(deviceBlockSize(4096), 4096u);
  EXPECT_EQ(deviceBlockSize(4097), 4608u);
  EXPECT_EQ(deviceBlockSize(uint64_t(1) << 30), uint64_t(1) << 30);
  for (uint64_t bytes = 1; bytes < (uint64_t(1) << 34); bytes = bytes * 3 + 1) {
    uint64_t size = deviceBlockSize(bytes);
    EXPECT_GE(size, bytes);
    EXPECT_LE(size, std::max<uint64_t>(512, bytes + bytes / 8 + 512));
    EXPECT_EQ(deviceBlockSize(size), size) << "classes are fixed points";
  }
}

//===----------------------------------------------------------------------===//
// GEMM planning (shared with the CPU backend) and cuBLAS arguments
//===----------------------------------------------------------------------===//

const GemmStep &onlyGemm(const KernelPlan &plan) {
  EXPECT_EQ(countSteps(plan, 3), 1u);
  for (const Step &step : plan.steps)
    if (const auto *gemm = std::get_if<GemmStep>(&step))
      return *gemm;
  static GemmStep none;
  return none;
}

TEST(CudaPlan, MatmulMapsToColumnMajorCublasArguments) {
  // Row-major C = A B is column-major C^T = B^T A^T: cuBLAS's A is B.
  std::optional<KernelPlan> plan = checkPlan<float>(
      {"ij,jk->ik", JoinKind::Mul, AggKind::Add, {{64, 48}, {48, 40}}}, kH100);
  ASSERT_TRUE(plan);
  EXPECT_TRUE(plan->usesGemm);
  EXPECT_EQ(plan->steps.size(), 1u);
  const GemmStep &g = onlyGemm(*plan);
  EXPECT_FALSE(g.transA);
  EXPECT_FALSE(g.transB);
  EXPECT_EQ(g.m, 40);
  EXPECT_EQ(g.n, 64);
  EXPECT_EQ(g.k, 48);
  EXPECT_EQ(g.lda, 40);
  EXPECT_EQ(g.ldb, 48);
  EXPECT_EQ(g.ldc, 40);
  EXPECT_EQ(g.a.kind, BufferRef::Kind::Input);
  EXPECT_EQ(g.a.index, 1);
  EXPECT_EQ(g.b.index, 0);
  EXPECT_EQ(g.c.kind, BufferRef::Kind::Output);

  // B stored transposed ("kj"): read in place with a transpose flag.
  plan = checkPlan<float>(
      {"ij,kj->ik", JoinKind::Mul, AggKind::Add, {{64, 48}, {40, 48}}}, kH100);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->steps.size(), 1u);
  EXPECT_TRUE(onlyGemm(*plan).transA);
  EXPECT_FALSE(onlyGemm(*plan).transB);
  EXPECT_EQ(onlyGemm(*plan).lda, 48);

  // Transposed output: the roles swap instead of permuting C.
  plan = checkPlan<float>(
      {"ij,jk->ki", JoinKind::Mul, AggKind::Add, {{64, 48}, {48, 40}}}, kH100);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->steps.size(), 1u);
  EXPECT_EQ(onlyGemm(*plan).c.kind, BufferRef::Kind::Output);
}

TEST(CudaPlan, BatchedMatmulUsesStridesOrPermutes) {
  std::optional<KernelPlan> plan = checkPlan<double>(
      {"bij,bjk->bik", JoinKind::Mul, AggKind::Add, {{4, 40, 36}, {4, 36, 30}}},
      kH100);
  ASSERT_TRUE(plan);
  const GemmStep &g = onlyGemm(*plan);
  EXPECT_EQ(g.batch, 4);
  EXPECT_EQ(g.strideA, 36 * 30);
  EXPECT_EQ(g.strideB, 40 * 36);
  EXPECT_EQ(g.strideC, 40 * 30);
  EXPECT_EQ(plan->steps.size(), 1u);

  // Batch index in the middle of A and outermost in C: strided in place.
  plan = checkPlan<float>(
      {"ibj,jbk->bik", JoinKind::Mul, AggKind::Add, {{40, 4, 36}, {36, 4, 30}}},
      kH100);
  ASSERT_TRUE(plan);
  EXPECT_EQ(onlyGemm(*plan).batch, 4);

  // Output with the batch innermost: C goes through scratch and a copy.
  plan = checkPlan<float>(
      {"bij,bjk->ikb", JoinKind::Mul, AggKind::Add, {{4, 40, 36}, {4, 36, 30}}},
      kH100);
  ASSERT_TRUE(plan);
  EXPECT_EQ(onlyGemm(*plan).c.kind, BufferRef::Kind::Temp);
  EXPECT_EQ(countSteps(*plan, 2), 1u); // The copy into the output.

  // An index only A has is summed out first.
  plan = checkPlan<float>(
      {"ijx,jk->ik", JoinKind::Mul, AggKind::Add, {{40, 50, 3}, {50, 36}}},
      kH100);
  ASSERT_TRUE(plan);
  EXPECT_EQ(countSteps(*plan, 1), 1u);
  EXPECT_EQ(onlyGemm(*plan).b.kind, BufferRef::Kind::Temp);
}

TEST(CudaPlan, SmallContractionsAndDotProductsReduceInstead) {
  std::optional<KernelPlan> plan = checkPlan<float>(
      {"ij,jk->ik", JoinKind::Mul, AggKind::Add, {{8, 8}, {8, 8}}}, kH100);
  ASSERT_TRUE(plan);
  EXPECT_FALSE(plan->usesGemm);
  plan = checkPlan<float>(
      {"bi,bi->b", JoinKind::Mul, AggKind::Add, {{64, 4096}, {64, 4096}}},
      kH100);
  ASSERT_TRUE(plan);
  EXPECT_FALSE(plan->usesGemm);
}

TEST(ContractionPlan, SharedPlannerKeepsTheCpuChoices) {
  EinsumSpec spec = *EinsumSpec::parse("ji,jk->ik");
  IndexSizes sizes = *inferIndexSizes(spec, {{45, 37}, {45, 29}});
  std::optional<contraction::GemmPlan> plan =
      contraction::planGemm(spec, sizes.indices, sizes.sizes);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->mIndices, "i");
  EXPECT_EQ(plan->nIndices, "k");
  EXPECT_EQ(plan->kIndices, "j");
  EXPECT_TRUE(plan->a.transposed);
  EXPECT_EQ(plan->a.leadingDim, 37);
  EXPECT_FALSE(plan->b.transposed);
  EXPECT_TRUE(plan->outDirect);

  // "jil": j and l are not adjacent in A, so A is permuted.
  spec = *EinsumSpec::parse("jil,jlk->ik");
  sizes = *inferIndexSizes(spec, {{4, 37, 5}, {4, 5, 29}});
  plan = contraction::planGemm(spec, sizes.indices, sizes.sizes);
  ASSERT_TRUE(plan);
  EXPECT_TRUE(plan->a.permute);
  EXPECT_EQ(plan->a.canonical, "ijl");
  EXPECT_FALSE(plan->b.permute);

  // Limits: tiny, dot products, and 32-bit extents.
  spec = *EinsumSpec::parse("ij,jk->ik");
  sizes = *inferIndexSizes(spec, {{4, 4}, {4, 4}});
  EXPECT_FALSE(contraction::planGemm(spec, sizes.indices, sizes.sizes));
  contraction::GemmLimits anything;
  anything.minVolume = 0;
  EXPECT_TRUE(
      contraction::planGemm(spec, sizes.indices, sizes.sizes, anything));
  spec = *EinsumSpec::parse("i,i->");
  sizes = *inferIndexSizes(spec, {{4096}, {4096}});
  EXPECT_FALSE(
      contraction::planGemm(spec, sizes.indices, sizes.sizes, anything));
  anything.allowDotProducts = true;
  EXPECT_TRUE(
      contraction::planGemm(spec, sizes.indices, sizes.sizes, anything));
  spec = *EinsumSpec::parse("ij,jk->ik");
  sizes =
      *inferIndexSizes(spec, {{2, int64_t(1) << 32}, {int64_t(1) << 32, 2}});
  EXPECT_FALSE(contraction::planGemm(spec, sizes.indices, sizes.sizes));
}

//===----------------------------------------------------------------------===//
// Slice, assemble, fill
//===----------------------------------------------------------------------===//

template <typename Word>
std::vector<Word> runCopyPlan(const KernelPlan &plan,
                              std::vector<std::vector<Word>> &inputs,
                              size_t outElements) {
  std::vector<HostBuffer> buffers;
  for (auto &input : inputs)
    buffers.push_back({reinterpret_cast<unsigned char *>(input.data()),
                       static_cast<int64_t>(input.size())});
  std::vector<Word> out(outElements, Word(0x5a5a));
  Interpreter interpreter(plan, buffers,
                          {reinterpret_cast<unsigned char *>(out.data()),
                           static_cast<int64_t>(out.size())},
                          false);
  interpreter.run<float>();
  return out;
}

TEST(CudaPlan, SliceAndAssembleMatchTheCpuKernels) {
  for (ElementType type : {ElementType::F16, ElementType::F32}) {
    Shape shape = {10, 7, 5};
    std::vector<uint32_t> input32(numElements(shape));
    for (size_t i = 0; i < input32.size(); ++i)
      input32[i] = static_cast<uint32_t>(i * 2654435761u);
    std::vector<std::vector<int64_t>> extents = {{3, 3, 4}, {2, 5}, {5}};
    std::vector<std::vector<uint32_t>> blocks;
    for (int64_t o0 : {0, 3, 6})
      for (int64_t o1 : {0, 2}) {
        Shape blockShape = {o0 == 6 ? 4 : 3, o1 == 0 ? 2 : 5, 5};
        Result<KernelPlan> plan =
            planSlice(shape, {o0, o1, 0}, blockShape, type, kH100);
        ASSERT_TRUE(plan) << plan.message();
        size_t elements = numElements(blockShape);
        std::vector<uint32_t> expected(elements);
        cpu::slice(input32.data(), shape, {o0, o1, 0}, expected.data(),
                   blockShape, type);
        std::vector<std::vector<uint32_t>> inputs = {input32};
        std::vector<uint32_t> block;
        if (type == ElementType::F16) {
          // Half elements: run on uint16 words of the same bytes.
          std::vector<std::vector<uint16_t>> halves = {std::vector<uint16_t>(
              reinterpret_cast<uint16_t *>(input32.data()),
              reinterpret_cast<uint16_t *>(input32.data()) + input32.size())};
          std::vector<uint16_t> out = runCopyPlan(*plan, halves, elements);
          EXPECT_EQ(0, std::memcmp(out.data(), expected.data(),
                                   elements * sizeof(uint16_t)));
          block.assign(expected.begin(), expected.end());
        } else {
          block = runCopyPlan(*plan, inputs, elements);
          EXPECT_EQ(block, expected);
        }
        blocks.push_back(block);
      }
    if (type != ElementType::F32)
      continue;
    Result<KernelPlan> plan = planAssemble(extents, type, kH100);
    ASSERT_TRUE(plan);
    EXPECT_EQ(plan->steps.size(), blocks.size());
    std::vector<uint32_t> out = runCopyPlan(*plan, blocks, input32.size());
    EXPECT_EQ(out, input32);
  }
}

TEST(CudaPlan, FillPatternsPerType) {
  KernelPlan plan = planFill(5, ElementType::F32, 2.5, kH100);
  ASSERT_EQ(plan.steps.size(), 1u);
  float f = 2.5f;
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  EXPECT_EQ(std::get<FillStep>(plan.steps[0]).pattern, bits);
  plan = planFill(3, ElementType::F16, 1.5, kH100);
  EXPECT_EQ(std::get<FillStep>(plan.steps[0]).pattern, floatToHalf(1.5f));
  EXPECT_EQ(std::get<FillStep>(plan.steps[0]).elementBytes, 2u);
  plan = planFill(3, ElementType::F64, -1.25, kH100);
  double d = -1.25;
  uint64_t bits64;
  std::memcpy(&bits64, &d, 8);
  EXPECT_EQ(std::get<FillStep>(plan.steps[0]).pattern, bits64);
  EXPECT_TRUE(planFill(0, ElementType::F32, 1, kH100).steps.empty());
}

TEST(CudaPlan, RejectsWhatCudaCannotRun) {
  EinsumSpec spec = *EinsumSpec::parse("ij->ij");
  Result<KernelPlan> half = planEinsum(spec, JoinKind::Exp, std::nullopt, 0,
                                       {{2, 2}}, ElementType::F16, kH100);
  ASSERT_FALSE(half);
  EXPECT_NE(half.message().find("f16"), std::string::npos);
  Result<KernelPlan> arity = planEinsum(spec, JoinKind::Add, std::nullopt, 0,
                                        {{2, 2}}, ElementType::F32, kH100);
  EXPECT_FALSE(arity);
  Result<KernelPlan> noAgg =
      planEinsum(*EinsumSpec::parse("ij->i"), JoinKind::Identity, std::nullopt,
                 0, {{2, 2}}, ElementType::F32, kH100);
  EXPECT_FALSE(noAgg);
  // More unmergeable dimensions than the kernels take.
  Result<KernelPlan> deep = planEinsum(
      *EinsumSpec::parse("abcdefghijkl->lkjihgfedcba"), JoinKind::Neg,
      std::nullopt, 0, {Shape(12, 2)}, ElementType::F32, kH100);
  ASSERT_FALSE(deep);
  EXPECT_NE(deep.message().find("at most"), std::string::npos);
}

} // namespace
