//===- CpuKernels.cpp - CPU kernels for the runtime's tasks ---------------===//

#include "doppler/runtime/CpuKernels.h"
#include "doppler/runtime/TaskGraph.h"

#include "ContractionPlan.h"
#include "CpuBlas.h"
#include "CpuLoopNest.h"

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

namespace doppler::runtime::cpu {

using namespace detail;

// The plan of a contraction as batched GEMMs. Outside the anonymous namespace
// because EinsumPlan (declared in CpuKernels.h) holds one.

/// One GEMM operand: where it comes from, how it is prepared, and the
/// strided matrix view BLAS reads.
struct CpuGemmOperand {
  int input = 0;          ///< Spec input providing it.
  bool preReduce = false; ///< Sum out indices only it has first.
  LoopNest preReduceNest; ///< input -> dense scratch.
  uint64_t preReduceBytes = 0;
  bool permute = false; ///< Copy into [batch][rows][cols].
  LoopNest permuteNest;
  uint64_t permuteBytes = 0;
  bool transposed = false;
  int64_t leadingDim = 1;
  int64_t batchStride = 0;
};

struct CpuGemmPlan {
  CpuGemmOperand a, b;
  int64_t batch = 1, m = 1, n = 1, k = 1;
  bool outDirect = true; ///< Else: C into scratch, then permuteOut.
  int64_t ldc = 1;
  int64_t batchStrideC = 0;
  LoopNest permuteOut;
  uint64_t tempBytes = 0;
};

namespace {

//===----------------------------------------------------------------------===//
// Per-thread scratch memory for GEMM operands.
//===----------------------------------------------------------------------===//

enum ScratchSlot {
  kPreReduceA,
  kPreReduceB,
  kPermuteA,
  kPermuteB,
  kTempC,
  kNumScratchSlots
};

class Scratch {
public:
  ~Scratch() {
    for (void *block : blocks_)
      std::free(block);
  }
  void *get(int slot, uint64_t bytes) {
    if (sizes_[slot] < bytes) {
      std::free(blocks_[slot]);
      uint64_t rounded = std::max<uint64_t>(64, (bytes + 63) / 64 * 64);
      blocks_[slot] = std::aligned_alloc(64, rounded);
      sizes_[slot] = blocks_[slot] ? rounded : 0;
    }
    return blocks_[slot];
  }

private:
  std::array<void *, kNumScratchSlots> blocks_{};
  std::array<uint64_t, kNumScratchSlots> sizes_{};
};

thread_local Scratch threadScratch;

//===----------------------------------------------------------------------===//
// Contractions as batched GEMMs
//===----------------------------------------------------------------------===//

/// Smallest m*n*k worth a BLAS call.
constexpr int64_t kMinGemmVolume = 256;
/// Smallest row or column extent left to each GEMM when outer output
/// indices become batch loops instead of a permutation of C (see
/// GemmLimits::minSplitExtent). Measured with doppler-bench-gemm
/// ("sd,dhe->hse"): 4 GEMMs with n = 128 beat one with n = 512 plus the
/// permutation.
constexpr int64_t kMinSplitExtent = 32;


/// The CPU side of one operand of a contraction plan: loop nests for its
/// reduction and permutation.
CpuGemmOperand lowerGemmOperand(ElementType type,
                             const contraction::GemmOperandPlan &planned,
                             const std::string &indices,
                             const std::vector<int64_t> &extents) {
  CpuGemmOperand operand;
  operand.input = planned.input;
  OperandLayout layout = denseLayout(planned.term, indices, extents);
  if (planned.preReduce()) {
    OperandLayout reduced = denseLayout(planned.reducedTerm, indices, extents);
    // The nest iterates over this operand's indices only.
    std::vector<int64_t> termExtents;
    for (char c : planned.term)
      termExtents.push_back(extents[indices.find(c)]);
    operand.preReduce = true;
    operand.preReduceNest =
        buildLoopNest(type, planned.term, termExtents, {reduced, layout},
                      JoinKind::Identity, true, AggKind::Add, 0);
    operand.preReduceBytes =
        static_cast<uint64_t>(elementsOf(reduced, indices, extents)) *
        elementSize(type);
    layout = reduced;
  }
  if (planned.permute) {
    const std::string &canonical = planned.canonical;
    std::vector<int64_t> canonicalExtents;
    for (char c : canonical)
      canonicalExtents.push_back(extents[indices.find(c)]);
    OperandLayout dense = denseLayout(canonical, indices, extents);
    operand.permute = true;
    operand.permuteNest =
        buildLoopNest(type, canonical, canonicalExtents, {dense, layout},
                      JoinKind::Identity, false, AggKind::Add, 0);
    operand.permuteBytes =
        static_cast<uint64_t>(elementsOf(dense, indices, extents)) *
        elementSize(type);
  }
  operand.transposed = planned.transposed;
  operand.leadingDim = planned.leadingDim;
  operand.batchStride = planned.batchStride;
  return operand;
}

/// The GEMM plan for a mul/add contraction of two inputs, or nullopt when
/// the einsum contracts nothing both inputs share (the loop path is as good
/// there) or the sizes exceed BLAS's 32-bit integers.
std::optional<CpuGemmPlan> planGemm(ElementType type, const EinsumSpec &spec,
                                 const std::string &indices,
                                 const std::vector<int64_t> &extents) {
  contraction::GemmLimits limits;
  limits.minVolume = kMinGemmVolume;
  limits.minSplitExtent = kMinSplitExtent;
  std::optional<contraction::GemmPlan> planned =
      contraction::planGemm(spec, indices, extents, limits);
  if (!planned)
    return std::nullopt;
  CpuGemmPlan plan;
  plan.batch = planned->batch;
  plan.m = planned->m;
  plan.n = planned->n;
  plan.k = planned->k;
  plan.outDirect = planned->outDirect;
  plan.ldc = planned->ldc;
  plan.batchStrideC = planned->batchStrideC;
  if (!plan.outDirect) {
    const std::string &canonical = planned->outCanonical;
    std::vector<int64_t> canonicalExtents;
    for (char c : canonical)
      canonicalExtents.push_back(extents[indices.find(c)]);
    OperandLayout temp = denseLayout(canonical, indices, extents);
    plan.permuteOut =
        buildLoopNest(type, canonical, canonicalExtents,
                      {denseLayout(spec.output, indices, extents), temp},
                      JoinKind::Identity, false, AggKind::Add, 0);
    plan.tempBytes =
        static_cast<uint64_t>(plan.batch * plan.m * plan.n) * elementSize(type);
  }
  plan.a = lowerGemmOperand(type, planned->a, indices, extents);
  plan.b = lowerGemmOperand(type, planned->b, indices, extents);
  return plan;
}

const void *prepareGemmOperand(const CpuGemmOperand &operand,
                               const void *const *inputs, int reduceSlot,
                               int permuteSlot) {
  const void *data = inputs[operand.input];
  if (operand.preReduce) {
    void *reduced = threadScratch.get(reduceSlot, operand.preReduceBytes);
    runLoopNest(operand.preReduceNest, reduced, data, nullptr);
    data = reduced;
  }
  if (operand.permute) {
    void *permuted = threadScratch.get(permuteSlot, operand.permuteBytes);
    runLoopNest(operand.permuteNest, permuted, data, nullptr);
    data = permuted;
  }
  return data;
}

template <typename T>
void runGemmBatches(const CpuGemmPlan &plan, const T *a, const T *b, T *c) {
  for (int64_t i = 0; i < plan.batch; ++i)
    blasGemm<T>(plan.a.transposed, plan.b.transposed, plan.m, plan.n, plan.k,
                T(1), a + i * plan.a.batchStride, plan.a.leadingDim,
                b + i * plan.b.batchStride, plan.b.leadingDim, T(0),
                c + i * plan.batchStrideC, plan.ldc);
}

void runGemm(const CpuGemmPlan &plan, ElementType type, int64_t outElements,
             const void *const *inputs, void *output) {
  if (plan.batch == 0 || plan.m == 0 || plan.n == 0)
    return;
  if (plan.k == 0) { // Sum over nothing.
    fillTyped(output, type, outElements, 0.0);
    return;
  }
  const void *a = prepareGemmOperand(plan.a, inputs, kPreReduceA, kPermuteA);
  const void *b = prepareGemmOperand(plan.b, inputs, kPreReduceB, kPermuteB);
  void *c = plan.outDirect ? output : threadScratch.get(kTempC, plan.tempBytes);
  if (type == ElementType::F64)
    runGemmBatches(plan, static_cast<const double *>(a),
                   static_cast<const double *>(b), static_cast<double *>(c));
  else
    runGemmBatches(plan, static_cast<const float *>(a),
                   static_cast<const float *>(b), static_cast<float *>(c));
  if (!plan.outDirect)
    runLoopNest(plan.permuteOut, output, c, nullptr);
}

//===----------------------------------------------------------------------===//
// Strided copies (slice, assemble)
//===----------------------------------------------------------------------===//

/// Copies an n-d box of `extents` between two strided layouts. Runs that
/// are contiguous on both sides are copied with memcpy.
void copyBox(void *dst, const std::vector<int64_t> &dstStrides, const void *src,
             const std::vector<int64_t> &srcStrides, const Shape &extents,
             unsigned elementBytes) {
  struct Dim {
    int64_t extent, dstStride, srcStride;
  };
  std::vector<Dim> dims;
  for (size_t d = 0; d < extents.size(); ++d) {
    if (extents[d] == 0)
      return;
    if (extents[d] == 1)
      continue;
    Dim dim{extents[d], dstStrides[d], srcStrides[d]};
    if (!dims.empty() && dims.back().dstStride == dim.dstStride * dim.extent &&
        dims.back().srcStride == dim.srcStride * dim.extent) {
      dims.back() = {dims.back().extent * dim.extent, dim.dstStride,
                     dim.srcStride};
      continue;
    }
    dims.push_back(dim);
  }
  auto *dstBytes = static_cast<char *>(dst);
  auto *srcBytes = static_cast<const char *>(src);
  Dim inner{1, 1, 1};
  if (!dims.empty()) {
    inner = dims.back();
    dims.pop_back();
  }
  const bool contiguous = inner.dstStride == 1 && inner.srcStride == 1;
  auto copyRun = [&](char *to, const char *from) {
    if (contiguous) {
      std::memcpy(to, from, static_cast<size_t>(inner.extent) * elementBytes);
      return;
    }
    for (int64_t i = 0; i < inner.extent; ++i)
      std::memcpy(to + i * inner.dstStride * elementBytes,
                  from + i * inner.srcStride * elementBytes, elementBytes);
  };
  std::vector<int64_t> counter(dims.size(), 0);
  int64_t dstOffset = 0, srcOffset = 0;
  while (true) {
    copyRun(dstBytes + dstOffset * elementBytes,
            srcBytes + srcOffset * elementBytes);
    size_t d = dims.size();
    while (true) {
      if (d == 0)
        return;
      --d;
      dstOffset += dims[d].dstStride;
      srcOffset += dims[d].srcStride;
      if (++counter[d] < dims[d].extent)
        break;
      dstOffset -= dims[d].dstStride * dims[d].extent;
      srcOffset -= dims[d].srcStride * dims[d].extent;
      counter[d] = 0;
    }
  }
}

int64_t linearOffset(const std::vector<int64_t> &offsets,
                     const std::vector<int64_t> &strides) {
  int64_t offset = 0;
  for (size_t d = 0; d < offsets.size(); ++d)
    offset += offsets[d] * strides[d];
  return offset;
}

} // namespace

//===----------------------------------------------------------------------===//
// EinsumKernel
//===----------------------------------------------------------------------===//

struct EinsumPlan {
  ElementType type = ElementType::F32;
  Shape outShape;
  int64_t outElements = 0;
  unsigned numInputs = 1;
  bool useGemm = false;
  LoopNest loop;
  CpuGemmPlan gemm;
};

Result<EinsumKernel> EinsumKernel::create(const EinsumSpec &spec, JoinKind join,
                                          std::optional<AggKind> aggregation,
                                          double scalar,
                                          const std::vector<Shape> &inputShapes,
                                          ElementType type) {
  if (type != ElementType::F32 && type != ElementType::F64)
    return Status::failure("einsum on " + std::string(elementTypeName(type)) +
                           " is not supported on the CPU (f32, f64 only)");
  Result<EinsumSignature> signature =
      checkRuntimeEinsum(spec, join, aggregation, scalar, inputShapes);
  if (!signature)
    return signature.status();
  const IndexSizes &sizes = signature->sizes;

  auto plan = std::make_shared<EinsumPlan>();
  plan->type = type;
  plan->outShape = signature->outputShape;
  plan->outElements = numElements(plan->outShape);
  plan->numInputs = spec.numInputs();
  const std::string &indices = sizes.indices;
  const std::vector<int64_t> &extents = sizes.sizes;
  bool accumulate = spec.contracts();
  AggKind agg = aggregation.value_or(AggKind::Add);

  if (accumulate && join == JoinKind::Mul && agg == AggKind::Add &&
      spec.numInputs() == 2) {
    if (std::optional<CpuGemmPlan> gemm = planGemm(type, spec, indices, extents)) {
      plan->useGemm = true;
      plan->gemm = std::move(*gemm);
      return EinsumKernel(std::move(plan));
    }
  }
  std::vector<OperandLayout> operands = {
      denseLayout(spec.output, indices, extents)};
  for (const std::string &term : spec.inputs)
    operands.push_back(denseLayout(term, indices, extents));
  plan->loop = buildLoopNest(type, indices, extents, operands, join, accumulate,
                             agg, scalar);
  return EinsumKernel(std::move(plan));
}

void EinsumKernel::run(const void *const *inputs, void *output) const {
  if (plan_->useGemm) {
    runGemm(plan_->gemm, plan_->type, plan_->outElements, inputs, output);
    return;
  }
  runLoopNest(plan_->loop, output, inputs[0],
              plan_->numInputs == 2 ? inputs[1] : nullptr);
}

const Shape &EinsumKernel::outputShape() const { return plan_->outShape; }
bool EinsumKernel::usesGemm() const { return plan_->useGemm; }

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

void fill(void *out, ElementType type, int64_t count, double value) {
  fillTyped(out, type, count, value);
}

void slice(const void *in, const Shape &inShape,
           const std::vector<int64_t> &offsets, void *out,
           const Shape &outShape, ElementType type) {
  unsigned elementBytes = elementSize(type);
  std::vector<int64_t> inStrides = rowMajorStrides(inShape);
  const char *start = static_cast<const char *>(in) +
                      linearOffset(offsets, inStrides) * elementBytes;
  copyBox(out, rowMajorStrides(outShape), start, inStrides, outShape,
          elementBytes);
}

void insertBlock(const void *block, const Shape &blockShape, void *out,
                 const Shape &outShape, const std::vector<int64_t> &offsets,
                 ElementType type) {
  unsigned elementBytes = elementSize(type);
  std::vector<int64_t> outStrides = rowMajorStrides(outShape);
  char *start = static_cast<char *>(out) +
                linearOffset(offsets, outStrides) * elementBytes;
  copyBox(start, outStrides, block, rowMajorStrides(blockShape), blockShape,
          elementBytes);
}

void assemble(const std::vector<const void *> &blocks,
              const std::vector<std::vector<int64_t>> &blockExtents, void *out,
              ElementType type) {
  size_t rank = blockExtents.size();
  Shape outShape(rank, 0);
  for (size_t d = 0; d < rank; ++d)
    for (int64_t extent : blockExtents[d])
      outShape[d] += extent;
  std::vector<size_t> coord(rank, 0);
  std::vector<int64_t> offsets(rank, 0);
  for (const void *block : blocks) {
    Shape blockShape(rank);
    for (size_t d = 0; d < rank; ++d)
      blockShape[d] = blockExtents[d][coord[d]];
    insertBlock(block, blockShape, out, outShape, offsets, type);
    for (size_t d = rank; d-- > 0;) {
      offsets[d] += blockExtents[d][coord[d]];
      if (++coord[d] < blockExtents[d].size())
        break;
      coord[d] = 0;
      offsets[d] = 0;
    }
  }
}

void useSingleThreadedBlas() { openblas_set_num_threads(1); }

} // namespace doppler::runtime::cpu
