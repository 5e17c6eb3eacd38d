//===- CudaPlan.cpp - Tasks as sequences of GPU steps ---------------------===//

#include "CudaPlan.h"

#include "ContractionPlan.h"

#include "doppler/runtime/TaskGraph.h"

#include "Doppler/Support/ElementwiseWalk.h"
#include "Doppler/Support/JoinProgram.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <string>

namespace doppler::runtime::cuda {
namespace {

using contraction::denseLayout;
using contraction::OperandLayout;

/// Counts and offsets at or above this use 64-bit index math; the margin
/// keeps `r + step` in a reduction loop from wrapping 32 bits.
constexpr uint64_t kNarrowLimit = (uint64_t(1) << 31) - (uint64_t(1) << 16);

/// A reduction thread folds at least this many points before splitting an
/// output over more threads pays, and splitting starts only above
/// kSplitThreshold points per thread.
constexpr int64_t kMinPointsPerThread = 64;
constexpr int64_t kSplitThreshold = 256;

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// One dimension of a space before merging.
struct Dim {
  int64_t extent = 1;
  int64_t stride[kNumSlots] = {0, 0, 0};
};

/// Builds `space` from `dims` (outermost first): extent-1 dimensions are
/// dropped and neighbours that every slot walks as one are merged. `count`
/// is the number of points (0 when an extent is 0).
Status buildSpace(const std::vector<Dim> &dims, StridedSpace &space,
                  int64_t &count, const char *what) {
  count = 1;
  std::vector<Dim> merged;
  for (const Dim &dim : dims) {
    count *= dim.extent;
    if (dim.extent == 1)
      continue;
    if (!merged.empty()) {
      Dim &prev = merged.back();
      bool contiguous = true;
      for (int slot = 0; slot < kNumSlots; ++slot)
        contiguous &= prev.stride[slot] == dim.stride[slot] * dim.extent;
      if (contiguous) {
        prev.extent *= dim.extent;
        std::copy(dim.stride, dim.stride + kNumSlots, prev.stride);
        continue;
      }
    }
    merged.push_back(dim);
  }
  if (count == 0)
    merged.clear();
  if (merged.size() > static_cast<size_t>(kMaxDims))
    return Status::failure(std::string(what) + " needs " +
                           std::to_string(merged.size()) +
                           " dimensions after merging; the CUDA kernels "
                           "take at most " +
                           std::to_string(kMaxDims));
  space = StridedSpace();
  space.rank = static_cast<int>(merged.size());
  for (int d = 0; d < space.rank; ++d) {
    space.extent[d] = merged[d].extent;
    for (int slot = 0; slot < kNumSlots; ++slot)
      space.stride[slot][d] = merged[d].stride[slot];
  }
  return Status();
}

/// Largest offset + 1 that `slot` reaches in `space`.
uint64_t reach(const StridedSpace &space, int slot) {
  uint64_t offset = 0;
  for (int d = 0; d < space.rank; ++d)
    offset += static_cast<uint64_t>(space.extent[d] - 1) *
              static_cast<uint64_t>(space.stride[slot][d]);
  return offset + 1;
}

bool needsWideIndex(std::initializer_list<uint64_t> values) {
  for (uint64_t value : values)
    if (value >= kNarrowLimit)
      return true;
  return false;
}

/// Makes `step` a tiled transpose when the destination is unit-stride along
/// its last dimension, the source along another, and both are long enough
/// for tiles to pay (otherwise one side would be accessed with a stride).
void planTranspose(CopyStep &step, const DeviceLimits &limits) {
  const StridedSpace &space = step.params.space;
  int cols = space.rank - 1;
  if (space.rank < 2 || space.stride[0][cols] != 1 ||
      space.stride[1][cols] == 1 || space.extent[cols] < 16)
    return;
  int rows = -1;
  for (int d = 0; d < cols; ++d)
    if (space.stride[1][d] == 1)
      rows = d;
  if (rows < 0 || space.extent[rows] < 16)
    return;
  TransposeParams &t = step.transpose;
  t.rows = space.extent[rows];
  t.cols = space.extent[cols];
  t.srcColStride = space.stride[1][cols];
  t.dstRowStride = space.stride[0][rows];
  t.batch = StridedSpace();
  for (int d = 0; d < cols; ++d) {
    if (d == rows)
      continue;
    int b = t.batch.rank++;
    t.batch.extent[b] = space.extent[d];
    t.batch.stride[0][b] = space.stride[0][d];
    t.batch.stride[1][b] = space.stride[1][d];
  }
  t.batches = step.params.count / (t.rows * t.cols);
  uint64_t tiles = static_cast<uint64_t>(t.batches) *
                   ((t.rows + kTransposeTile - 1) / kTransposeTile) *
                   ((t.cols + kTransposeTile - 1) / kTransposeTile);
  step.tiled = true;
  // One tile per block; gridFor counts threads, a tile is kBlockSize.
  step.launch = gridFor(tiles * kBlockSize, limits);
}

/// A strided copy of the box `extents` from `src` to `dst`.
Status appendCopy(KernelPlan &plan, const Shape &extents,
                  const std::vector<int64_t> &dstStrides, BufferRef dst,
                  const std::vector<int64_t> &srcStrides, BufferRef src,
                  unsigned elementBytes, const DeviceLimits &limits) {
  std::vector<Dim> dims;
  for (size_t d = 0; d < extents.size(); ++d) {
    Dim dim;
    dim.extent = extents[d];
    dim.stride[0] = dstStrides[d];
    dim.stride[1] = srcStrides[d];
    dims.push_back(dim);
  }
  CopyStep step;
  if (Status status =
          buildSpace(dims, step.params.space, step.params.count, "a copy");
      !status)
    return status;
  if (step.params.count == 0)
    return Status();
  const StridedSpace &space = step.params.space;
  step.elementBytes = elementBytes;
  step.dst = dst;
  step.src = src;
  step.contiguous =
      space.rank == 0 ||
      (space.rank == 1 && space.stride[0][0] == 1 && space.stride[1][0] == 1);
  step.wide = needsWideIndex({static_cast<uint64_t>(step.params.count),
                              reach(space, 0), reach(space, 1)});
  step.launch = gridFor(step.params.count, limits);
  planTranspose(step, limits);
  plan.steps.push_back(step);
  return Status();
}

/// Appends one or more reduction passes computing `params` (spaces, counts,
/// join, aggregation set) from in0/in1 into `out`. `primary` is the slot of
/// the larger input, whose contiguity decides the thread layout.
void appendReduction(KernelPlan &plan, EinsumParams params, BufferRef out,
                     BufferRef in0, BufferRef in1, int primary,
                     const DeviceLimits &limits) {
  bool contiguous = params.red.rank > 0 &&
                    params.red.stride[primary][params.red.rank - 1] == 1;
  ReduceShape shape =
      chooseReduceShape(params.outCount, params.redCount, contiguous, limits);
  params.splits = shape.splits;
  params.chunk = shape.chunk;
  params.toPartials = shape.splits > 1;

  ReduceStep step;
  step.in0 = in0;
  step.in1 = in1;
  step.group = shape.group;
  uint64_t items = static_cast<uint64_t>(params.outCount) * shape.splits;
  step.wide = needsWideIndex(
      {items, static_cast<uint64_t>(params.redCount) + shape.group,
       reach(params.out, kOutSlot),
       reach(params.out, kIn0Slot) + reach(params.red, kIn0Slot),
       reach(params.out, kIn1Slot) + reach(params.red, kIn1Slot)});
  step.launch = gridFor(items * shape.group, limits);
  if (!params.toPartials) {
    step.params = params;
    step.out = out;
    plan.steps.push_back(step);
    return;
  }

  // Partial results [splits][outCount], then reduce them over the splits
  // (Identity join, same aggregation) into `out`.
  unsigned elementBytes = elementSize(plan.type);
  int partials = plan.addTemp(items * elementBytes);
  step.params = params;
  step.out = BufferRef::temp(partials);
  plan.steps.push_back(step);

  EinsumParams next = params;
  int64_t dense = 1;
  for (int d = params.out.rank; d-- > 0;) {
    next.out.stride[kIn0Slot][d] = dense;
    next.out.stride[kIn1Slot][d] = dense;
    dense *= params.out.extent[d];
  }
  next.red = StridedSpace();
  next.red.rank = 1;
  next.red.extent[0] = shape.splits;
  next.red.stride[kIn0Slot][0] = params.outCount;
  next.red.stride[kIn1Slot][0] = params.outCount;
  next.redCount = shape.splits;
  next.splits = 1;
  next.chunk = 1;
  next.toPartials = false;
  next.join = JoinKind::Identity;
  next.scalar = 0;
  appendReduction(plan, next, out, BufferRef::temp(partials),
                  BufferRef::temp(partials), kIn0Slot, limits);
}

/// Steps for einsum `output` = [agg over contracted] join(inputs) where each
/// operand has the given layout over `indices`.
Status appendEinsum(KernelPlan &plan, const std::string &indices,
                    const std::vector<int64_t> &extents,
                    const OperandLayout &outLayout,
                    const std::vector<OperandLayout> &inLayouts, JoinKind join,
                    bool reduce, AggKind agg, double scalar, BufferRef out,
                    BufferRef in0, BufferRef in1, const DeviceLimits &limits) {
  const OperandLayout &layout0 = inLayouts[0];
  const OperandLayout &layout1 = inLayouts.size() > 1 ? inLayouts[1] : layout0;
  if (inLayouts.size() == 1)
    in1 = in0; // Unary joins read a dummy second operand: the first.
  auto dimOf = [&](char c, bool withOut) {
    Dim dim;
    dim.extent = extents[indices.find(c)];
    dim.stride[kOutSlot] = withOut ? outLayout.strideOf(c) : 0;
    dim.stride[kIn0Slot] = layout0.strideOf(c);
    dim.stride[kIn1Slot] = layout1.strideOf(c);
    return dim;
  };

  EinsumParams params;
  params.join = join;
  params.agg = agg;
  params.scalar = scalar;
  params.identity = aggIdentity(agg);
  std::vector<Dim> outDims;
  for (char c : outLayout.term)
    outDims.push_back(dimOf(c, true));
  if (Status status = buildSpace(outDims, params.out, params.outCount,
                                 "the einsum's output");
      !status)
    return status;
  if (params.outCount == 0)
    return Status();

  if (!reduce && join == JoinKind::Identity && inLayouts.size() == 1) {
    // A pure permutation (or copy): the copy kernels, tiled if transposed.
    Shape shape;
    std::vector<int64_t> srcStrides;
    for (char c : outLayout.term) {
      shape.push_back(extents[indices.find(c)]);
      srcStrides.push_back(layout0.strideOf(c));
    }
    return appendCopy(plan, shape, outLayout.strides, out, srcStrides, in0,
                      elementSize(plan.type), limits);
  }
  if (!reduce) {
    MapStep step;
    step.params = params;
    step.out = out;
    step.in0 = in0;
    step.in1 = in1;
    step.wide = needsWideIndex(
        {static_cast<uint64_t>(params.outCount), reach(params.out, kOutSlot),
         reach(params.out, kIn0Slot), reach(params.out, kIn1Slot)});
    step.launch = gridFor(params.outCount, limits);
    plan.steps.push_back(step);
    return Status();
  }

  // Reduced indices: those of the inputs missing from the output, ordered
  // so that the larger input is walked in memory order.
  int64_t size0 = 1, size1 = 1;
  for (char c : layout0.term)
    size0 *= extents[indices.find(c)];
  for (char c : layout1.term)
    size1 *= extents[indices.find(c)];
  int primary = size1 > size0 ? kIn1Slot : kIn0Slot;
  int secondary = primary == kIn0Slot ? kIn1Slot : kIn0Slot;
  std::vector<Dim> redDims;
  std::string seen = outLayout.term;
  for (const OperandLayout *layout : {&layout0, &layout1})
    for (char c : layout->term)
      if (seen.find(c) == std::string::npos) {
        seen.push_back(c);
        redDims.push_back(dimOf(c, false));
      }
  std::stable_sort(redDims.begin(), redDims.end(),
                   [&](const Dim &x, const Dim &y) {
                     if (x.stride[primary] != y.stride[primary])
                       return x.stride[primary] > y.stride[primary];
                     return x.stride[secondary] > y.stride[secondary];
                   });
  if (Status status = buildSpace(redDims, params.red, params.redCount,
                                 "the einsum's reduction");
      !status)
    return status;
  if (params.redCount == 0) {
    // An aggregation over nothing: the identity everywhere.
    KernelPlan fill =
        planFill(params.outCount, plan.type, params.identity, limits);
    FillStep step = std::get<FillStep>(fill.steps.front());
    step.dst = out;
    plan.steps.push_back(step);
    return Status();
  }
  appendReduction(plan, params, out, in0, in1, primary, limits);
  return Status();
}

Shape termShape(const std::string &term, const std::string &indices,
                const std::vector<int64_t> &extents) {
  Shape shape;
  for (char c : term)
    shape.push_back(extents[indices.find(c)]);
  return shape;
}

std::vector<int64_t> stridesFor(const std::string &term,
                                const OperandLayout &layout) {
  std::vector<int64_t> strides;
  for (char c : term)
    strides.push_back(layout.strideOf(c));
  return strides;
}

/// Reduces and/or permutes one GEMM operand as planned; returns the buffer
/// the GEMM reads.
Result<BufferRef> prepareGemmOperand(KernelPlan &plan,
                                     const contraction::GemmOperandPlan &op,
                                     const std::string &indices,
                                     const std::vector<int64_t> &extents,
                                     const DeviceLimits &limits) {
  unsigned elementBytes = elementSize(plan.type);
  BufferRef source = BufferRef::input(op.input);
  OperandLayout layout = denseLayout(op.term, indices, extents);
  if (op.preReduce()) {
    OperandLayout reduced = denseLayout(op.reducedTerm, indices, extents);
    int temp = plan.addTemp(static_cast<uint64_t>(numElements(
                                termShape(op.reducedTerm, indices, extents))) *
                            elementBytes);
    if (Status status = appendEinsum(
            plan, indices, extents, reduced, {layout}, JoinKind::Identity, true,
            AggKind::Add, 0, BufferRef::temp(temp), source, source, limits);
        !status)
      return status;
    source = BufferRef::temp(temp);
    layout = reduced;
  }
  if (op.permute) {
    Shape shape = termShape(op.canonical, indices, extents);
    OperandLayout dense = denseLayout(op.canonical, indices, extents);
    int temp =
        plan.addTemp(static_cast<uint64_t>(numElements(shape)) * elementBytes);
    if (Status status = appendCopy(
            plan, shape, dense.strides, BufferRef::temp(temp),
            stridesFor(op.canonical, layout), source, elementBytes, limits);
        !status)
      return status;
    source = BufferRef::temp(temp);
  }
  return source;
}

Status appendGemm(KernelPlan &plan, const contraction::GemmPlan &gemm,
                  const std::string &output, const std::string &indices,
                  const std::vector<int64_t> &extents,
                  const DeviceLimits &limits) {
  Result<BufferRef> a =
      prepareGemmOperand(plan, gemm.a, indices, extents, limits);
  if (!a)
    return a.status();
  Result<BufferRef> b =
      prepareGemmOperand(plan, gemm.b, indices, extents, limits);
  if (!b)
    return b.status();
  unsigned elementBytes = elementSize(plan.type);
  BufferRef c = BufferRef::output();
  int tempC = -1;
  if (!gemm.outDirect) {
    tempC = plan.addTemp(static_cast<uint64_t>(gemm.batch * gemm.m * gemm.n) *
                         elementBytes);
    c = BufferRef::temp(tempC);
  }
  // cuBLAS is column-major: a row-major matrix with leading dimension ld is
  // its transpose there. So row-major C = A B is column-major
  // C^T = B^T A^T: cuBLAS's A is our B and vice versa, m and n swap, and
  // each operand keeps its own transpose flag.
  GemmStep step;
  step.transA = gemm.b.transposed;
  step.transB = gemm.a.transposed;
  step.m = gemm.n;
  step.n = gemm.m;
  step.k = gemm.k;
  step.lda = gemm.b.leadingDim;
  step.ldb = gemm.a.leadingDim;
  step.ldc = gemm.ldc;
  step.strideA = gemm.b.batchStride;
  step.strideB = gemm.a.batchStride;
  step.strideC = gemm.batchStrideC;
  step.batch = gemm.batch;
  step.a = *b;
  step.b = *a;
  step.c = c;
  plan.steps.push_back(step);
  plan.usesGemm = true;
  if (!gemm.outDirect) {
    OperandLayout outLayout = denseLayout(output, indices, extents);
    OperandLayout temp = denseLayout(gemm.outCanonical, indices, extents);
    return appendCopy(plan, termShape(output, indices, extents),
                      outLayout.strides, BufferRef::output(),
                      stridesFor(output, temp), c, elementBytes, limits);
  }
  return Status();
}

uint64_t alignUp(uint64_t bytes) { return (bytes + 255) / 256 * 256; }

} // namespace

uint64_t KernelPlan::scratchBytes() const {
  uint64_t total = 0;
  for (uint64_t bytes : tempBytes)
    total += alignUp(bytes);
  return total;
}

uint64_t KernelPlan::tempOffset(int t) const {
  uint64_t offset = 0;
  for (int i = 0; i < t; ++i)
    offset += alignUp(tempBytes[i]);
  return offset;
}

int KernelPlan::addTemp(uint64_t bytes) {
  tempBytes.push_back(bytes);
  return static_cast<int>(tempBytes.size()) - 1;
}

LaunchConfig gridFor(uint64_t threads, const DeviceLimits &limits) {
  LaunchConfig config;
  if (threads == 0)
    return config;
  // A few waves of full occupancy; grid-stride loops cover the rest.
  uint64_t blocksPerSm = std::max(1, limits.maxThreadsPerSm / kBlockSize);
  uint64_t cap =
      static_cast<uint64_t>(std::max(1, limits.smCount)) * blocksPerSm * 4;
  uint64_t blocks = (threads + kBlockSize - 1) / kBlockSize;
  config.blocks = static_cast<uint32_t>(std::min(blocks, cap));
  return config;
}

ReduceShape chooseReduceShape(int64_t outCount, int64_t redCount,
                              bool contiguous, const DeviceLimits &limits) {
  ReduceShape shape;
  int64_t smCount = std::max(1, limits.smCount);
  if (contiguous && redCount >= 32)
    // A warp per output reads its row coalesced; a whole block when there
    // are too few outputs to give every SM several warps.
    shape.group = redCount >= 8192 && outCount < smCount * 8 ? kBlockSize : 32;
  int64_t wanted = smCount * std::max(kBlockSize, limits.maxThreadsPerSm);
  int64_t threads = outCount * shape.group;
  if (threads < wanted && redCount > shape.group * kSplitThreshold) {
    int64_t splits = std::min(ceilDiv(wanted, threads),
                              redCount / (shape.group * kMinPointsPerThread));
    splits = std::min<int64_t>(splits, 65536);
    if (splits > 1) {
      shape.chunk = ceilDiv(redCount, splits);
      shape.splits = ceilDiv(redCount, shape.chunk);
      return shape;
    }
  }
  shape.chunk = std::max<int64_t>(1, redCount);
  return shape;
}

Result<KernelPlan> planEinsum(const EinsumSpec &spec, JoinKind join,
                              std::optional<AggKind> aggregation, double scalar,
                              const std::vector<Shape> &inputShapes,
                              ElementType type, const DeviceLimits &limits) {
  if (type != ElementType::F32 && type != ElementType::F64)
    return Status::failure("einsum on " + std::string(elementTypeName(type)) +
                           " is not supported on CUDA (f32, f64 only)");
  Result<EinsumSignature> signature =
      checkRuntimeEinsum(spec, join, aggregation, scalar, inputShapes);
  if (!signature)
    return signature.status();
  const IndexSizes &sizes = signature->sizes;
  const std::string &indices = sizes.indices;
  const std::vector<int64_t> &extents = sizes.sizes;

  KernelPlan plan;
  plan.type = type;
  bool reduce = spec.contracts();
  AggKind agg = aggregation.value_or(AggKind::Add);
  bool empty = sizes.iterationSpace() == 0;
  if (reduce && !empty && join == JoinKind::Mul && agg == AggKind::Add &&
      spec.numInputs() == 2) {
    // Small contractions stay with the reduction kernel: below ~32^3 a
    // cuBLAS call costs more than it saves.
    contraction::GemmLimits gemmLimits;
    gemmLimits.minVolume = int64_t(1) << 15;
    gemmLimits.allowDotProducts = false;
    gemmLimits.maxExtent = INT_MAX;
    gemmLimits.maxLeadingDim = INT_MAX;
    gemmLimits.maxBatch = INT_MAX;
    if (std::optional<contraction::GemmPlan> gemm =
            contraction::planGemm(spec, indices, extents, gemmLimits)) {
      if (Status status =
              appendGemm(plan, *gemm, spec.output, indices, extents, limits);
          !status)
        return status;
      return plan;
    }
  }
  std::vector<OperandLayout> inLayouts;
  for (const std::string &term : spec.inputs)
    inLayouts.push_back(denseLayout(term, indices, extents));
  BufferRef in1 = BufferRef::input(spec.numInputs() > 1 ? 1 : 0);
  if (Status status = appendEinsum(
          plan, indices, extents, denseLayout(spec.output, indices, extents),
          inLayouts, join, reduce, agg, scalar, BufferRef::output(),
          BufferRef::input(0), in1, limits);
      !status)
    return status;
  return plan;
}

Result<KernelPlan> planFused(const EinsumSpec &spec, std::string_view program,
                             const std::vector<Shape> &inputShapes,
                             ElementType type, const DeviceLimits &limits) {
  static_assert(kMaxFusedSteps == static_cast<int>(kMaxJoinProgramSteps),
                "a fused step holds every program the dialect accepts");
  if (type != ElementType::F32 && type != ElementType::F64)
    return Status::failure("fused on " + std::string(elementTypeName(type)) +
                           " is not supported on CUDA (f32, f64 only)");
  if (spec.numInputs() > static_cast<size_t>(kMaxFusedInputs))
    return Status::failure("a fused op of " +
                           std::to_string(spec.numInputs()) +
                           " inputs; the CUDA kernel takes at most " +
                           std::to_string(kMaxFusedInputs));
  JoinProgram parsed;
  std::string error;
  std::optional<EinsumSignature> signature =
      checkFusedSignature(spec, program, inputShapes, &parsed, &error);
  if (!signature)
    return Status::failure(error);
  const IndexSizes &sizes = signature->sizes;
  const int numInputs = static_cast<int>(spec.numInputs());

  // The output's dimensions in its own order (so point i is output element
  // i), extent-1 ones dropped, neighbours merged where every input and the
  // output walk them as one.
  std::vector<OperandLayout> layouts = {
      denseLayout(spec.output, sizes.indices, sizes.sizes)};
  for (const std::string &term : spec.inputs)
    layouts.push_back(denseLayout(term, sizes.indices, sizes.sizes));
  std::vector<WalkDim> dims = mergedWalk(
      spec.output, sizes, layouts.size(),
      [&](size_t slot, char index) { return layouts[slot].strideOf(index); });
  int64_t count = 1;
  for (char index : spec.output)
    count *= sizes.sizes[sizes.indices.find(index)];
  KernelPlan plan;
  plan.type = type;
  if (count == 0)
    return plan;
  if (dims.size() > static_cast<size_t>(kMaxDims))
    return Status::failure("the fused op needs " + std::to_string(dims.size()) +
                           " dimensions after merging; the CUDA kernels take "
                           "at most " +
                           std::to_string(kMaxDims));

  auto params = std::make_shared<FusedParams>();
  params->rank = static_cast<int>(dims.size());
  params->count = count;
  params->numInputs = numInputs;
  params->numSteps = static_cast<int>(parsed.steps.size());
  uint64_t largest = static_cast<uint64_t>(count);
  for (int d = 0; d < params->rank; ++d)
    params->extent[d] = dims[d].extent;
  for (int k = 0; k < numInputs; ++k) {
    uint64_t reach = 1;
    for (int d = 0; d < params->rank; ++d) {
      params->stride[k][d] = dims[d].strides[k + 1];
      reach += static_cast<uint64_t>(dims[d].extent - 1) *
               static_cast<uint64_t>(dims[d].strides[k + 1]);
    }
    largest = std::max(largest, reach);
  }
  auto code = [](const JoinOperand &operand) {
    return static_cast<uint8_t>(operand.isStep ? kMaxFusedInputs + operand.index
                                               : operand.index);
  };
  for (size_t j = 0; j < parsed.steps.size(); ++j) {
    const JoinStep &step = parsed.steps[j];
    FusedStepCode &out = params->steps[j];
    out.join = step.join;
    out.a = code(step.operands[0]);
    out.b = step.operands.size() > 1 ? code(step.operands[1]) : out.a;
    out.scalar = step.scalar;
  }

  FusedStep step;
  step.params = std::move(params);
  step.out = BufferRef::output();
  step.numInputs = numInputs;
  for (int k = 0; k < numInputs; ++k)
    step.in[k] = BufferRef::input(k);
  step.wide = needsWideIndex({largest});
  step.launch = gridFor(count, limits);
  plan.steps.push_back(std::move(step));
  return plan;
}

Result<KernelPlan> planSlice(const Shape &inShape,
                             const std::vector<int64_t> &offsets,
                             const Shape &outShape, ElementType type,
                             const DeviceLimits &limits) {
  KernelPlan plan;
  plan.type = type;
  std::vector<int64_t> inStrides = rowMajorStrides(inShape);
  int64_t start = 0;
  for (size_t d = 0; d < offsets.size(); ++d)
    start += offsets[d] * inStrides[d];
  if (Status status = appendCopy(
          plan, outShape, rowMajorStrides(outShape), BufferRef::output(),
          inStrides, BufferRef::input(0, start), elementSize(type), limits);
      !status)
    return status;
  return plan;
}

Result<KernelPlan>
planAssemble(const std::vector<std::vector<int64_t>> &blockExtents,
             ElementType type, const DeviceLimits &limits) {
  KernelPlan plan;
  plan.type = type;
  size_t rank = blockExtents.size();
  Shape outShape(rank, 0);
  size_t numBlocks = 1;
  for (size_t d = 0; d < rank; ++d) {
    for (int64_t extent : blockExtents[d])
      outShape[d] += extent;
    numBlocks *= blockExtents[d].size();
  }
  std::vector<int64_t> outStrides = rowMajorStrides(outShape);
  std::vector<size_t> coord(rank, 0);
  std::vector<int64_t> offsets(rank, 0);
  for (size_t block = 0; block < numBlocks; ++block) {
    Shape blockShape(rank);
    int64_t start = 0;
    for (size_t d = 0; d < rank; ++d) {
      blockShape[d] = blockExtents[d][coord[d]];
      start += offsets[d] * outStrides[d];
    }
    if (Status status =
            appendCopy(plan, blockShape, outStrides, BufferRef::output(start),
                       rowMajorStrides(blockShape),
                       BufferRef::input(static_cast<int>(block)),
                       elementSize(type), limits);
        !status)
      return status;
    for (size_t d = rank; d-- > 0;) {
      offsets[d] += blockExtents[d][coord[d]];
      if (++coord[d] < blockExtents[d].size())
        break;
      coord[d] = 0;
      offsets[d] = 0;
    }
  }
  return plan;
}

KernelPlan planFill(int64_t count, ElementType type, double value,
                    const DeviceLimits &limits) {
  KernelPlan plan;
  plan.type = type;
  FillStep step;
  step.count = count;
  step.elementBytes = elementSize(type);
  switch (type) {
  case ElementType::F32: {
    float f = static_cast<float>(value);
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof(bits));
    step.pattern = bits;
    break;
  }
  case ElementType::F64:
    std::memcpy(&step.pattern, &value, sizeof(step.pattern));
    break;
  case ElementType::F16:
    step.pattern = floatToHalf(static_cast<float>(value));
    break;
  case ElementType::I32:
    step.pattern = static_cast<uint32_t>(static_cast<int32_t>(value));
    break;
  case ElementType::I64: {
    int64_t i = static_cast<int64_t>(value);
    std::memcpy(&step.pattern, &i, sizeof(step.pattern));
    break;
  }
  }
  step.launch = gridFor(count, limits);
  if (count > 0)
    plan.steps.push_back(step);
  return plan;
}

uint64_t deviceBlockSize(uint64_t bytes) {
  if (bytes <= 4096)
    return std::max<uint64_t>(512, (bytes + 511) / 512 * 512);
  uint64_t power = uint64_t(1) << (63 - __builtin_clzll(bytes));
  uint64_t step = power / 8;
  return (bytes + step - 1) / step * step;
}

std::string describeStep(const Step &step) {
  struct Describer {
    std::string operator()(const MapStep &s) const {
      return "elementwise " + std::string(joinKindName(s.params.join)) +
             " over " + std::to_string(s.params.outCount) + " elements";
    }
    std::string operator()(const ReduceStep &s) const {
      return "reduction " + std::string(joinKindName(s.params.join)) + "/" +
             std::string(aggKindName(s.params.agg)) + " of " +
             std::to_string(s.params.redCount) + " into " +
             std::to_string(s.params.outCount) + " (group " +
             std::to_string(s.group) + ", " + std::to_string(s.params.splits) +
             " splits)";
    }
    std::string operator()(const CopyStep &s) const {
      return "copy of " + std::to_string(s.params.count) + " elements";
    }
    std::string operator()(const GemmStep &s) const {
      return "GEMM m=" + std::to_string(s.m) + " n=" + std::to_string(s.n) +
             " k=" + std::to_string(s.k) + " batch=" + std::to_string(s.batch);
    }
    std::string operator()(const FillStep &s) const {
      return "fill of " + std::to_string(s.count) + " elements";
    }
    std::string operator()(const FusedStep &s) const {
      return "fused elementwise chain of " +
             std::to_string(s.params ? s.params->numSteps : 0) +
             " step(s) over " +
             std::to_string(s.params ? s.params->count : 0) + " elements";
    }
    std::string operator()(const WindowStep &s) const {
      return describeWindowStep(s);
    }
  };
  return std::visit(Describer(), step);
}

} // namespace doppler::runtime::cuda
