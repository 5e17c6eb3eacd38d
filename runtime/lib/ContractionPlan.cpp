//===- ContractionPlan.cpp - Einsum contractions as batched GEMMs ---------===//

#include "ContractionPlan.h"

#include "doppler/runtime/Types.h"

#include <algorithm>

namespace doppler::runtime::contraction {
namespace {

bool hasIndex(const std::string &term, char c) {
  return term.find(c) != std::string::npos;
}

/// Plans one operand of C[batch][m][n] = A[batch][m][k] * B[batch][k][n]:
/// `rowGroup`/`colGroup` are the index groups of its matrix dimensions.
GemmOperandPlan
planOperand(int input, const std::string &term, const std::string &other,
            const std::string &output, const std::string &batchGroup,
            const std::string &rowGroup, const std::string &colGroup,
            const std::string &indices, const std::vector<int64_t> &extents) {
  GemmOperandPlan operand;
  operand.input = input;
  operand.term = term;
  operand.reducedTerm = term;
  // An own index of extent 1 sums one element: nothing to reduce (a 1x1
  // convolution's kernel indices), and no copy of the operand for it.
  for (char c : term)
    if (!hasIndex(output, c) && !hasIndex(other, c) &&
        extents[indices.find(c)] != 1)
      operand.ownOnly.push_back(c);
  if (operand.preReduce()) {
    operand.reducedTerm.clear();
    for (char c : term)
      if (!hasIndex(operand.ownOnly, c))
        operand.reducedTerm.push_back(c);
  }
  OperandLayout layout = denseLayout(operand.reducedTerm, indices, extents);

  int64_t rows = groupExtent(rowGroup, indices, extents);
  int64_t cols = groupExtent(colGroup, indices, extents);
  std::optional<int64_t> batchStride =
      mergedStride(layout, batchGroup, indices, extents);
  std::optional<int64_t> rowStride =
      mergedStride(layout, rowGroup, indices, extents);
  std::optional<int64_t> colStride =
      mergedStride(layout, colGroup, indices, extents);
  std::optional<MatrixView> view;
  if (batchStride && rowStride && colStride)
    view = matrixView(rows, cols, *rowStride, *colStride, true);
  if (view) {
    operand.transposed = view->transposed;
    operand.leadingDim = view->leadingDim;
    operand.batchStride = *batchStride;
    return operand;
  }

  // A layout BLAS cannot read: permute into a dense [batch][rows][cols].
  operand.permute = true;
  operand.canonical = batchGroup + rowGroup + colGroup;
  operand.transposed = false;
  operand.leadingDim = std::max<int64_t>(1, cols);
  operand.batchStride = rows * cols;
  return operand;
}

} // namespace

OperandLayout denseLayout(const std::string &term, const std::string &indices,
                          const std::vector<int64_t> &extents) {
  Shape shape;
  for (char c : term)
    shape.push_back(extents[indices.find(c)]);
  return {term, rowMajorStrides(shape)};
}

int64_t elementsOf(const OperandLayout &layout, const std::string &indices,
                   const std::vector<int64_t> &extents) {
  return groupExtent(layout.term, indices, extents);
}

int64_t groupExtent(const std::string &group, const std::string &indices,
                    const std::vector<int64_t> &extents) {
  int64_t extent = 1;
  for (char c : group)
    extent *= extents[indices.find(c)];
  return extent;
}

std::optional<int64_t> mergedStride(const OperandLayout &layout,
                                    const std::string &group,
                                    const std::string &indices,
                                    const std::vector<int64_t> &extents) {
  bool first = true;
  int64_t innerStride = 0, expected = 0;
  for (size_t i = group.size(); i-- > 0;) {
    int64_t extent = extents[indices.find(group[i])];
    if (extent == 1)
      continue;
    int64_t stride = layout.strideOf(group[i]);
    if (first) {
      innerStride = stride;
      first = false;
    } else if (stride != expected) {
      return std::nullopt;
    }
    expected = stride * extent;
  }
  return innerStride;
}

std::optional<MatrixView> matrixView(int64_t rows, int64_t cols,
                                     int64_t rowStride, int64_t colStride,
                                     bool allowTranspose) {
  if (cols == 1 || colStride == 1) {
    int64_t ld = rows == 1 ? std::max<int64_t>(1, cols) : rowStride;
    if (ld >= std::max<int64_t>(1, cols))
      return MatrixView{false, ld};
  }
  if (allowTranspose && (rows == 1 || rowStride == 1)) {
    int64_t ld = cols == 1 ? std::max<int64_t>(1, rows) : colStride;
    if (ld >= std::max<int64_t>(1, rows))
      return MatrixView{true, ld};
  }
  return std::nullopt;
}

namespace {

/// How C is written when it is not one strided matrix per batch element.
enum class OutputMode {
  Direct,     ///< Only plans where it is.
  SplitBatch, ///< Outer row or column indices join the batch.
  Scratch,    ///< A dense scratch C, then permuted into the output.
};

/// Moves the outer indices of C's row and column groups that keep a group
/// from being one strided dimension of `out` into the batch group. False
/// when nothing needs moving or what is left of a group is under
/// `minExtent` elements (many thin GEMMs cost more than the permutation).
bool splitIntoBatch(GemmPlan &plan, const OperandLayout &out,
                    const std::string &indices,
                    const std::vector<int64_t> &extents, int64_t minExtent) {
  std::string moved;
  for (std::string *group : {&plan.mIndices, &plan.nIndices}) {
    if (mergedStride(out, *group, indices, extents))
      continue;
    // A single index is always one strided dimension, so this stops.
    size_t keep = 1;
    while (!mergedStride(out, group->substr(keep), indices, extents))
      ++keep;
    std::string rest = group->substr(keep);
    if (groupExtent(rest, indices, extents) < minExtent)
      return false;
    moved += group->substr(0, keep);
    *group = rest;
  }
  if (moved.empty())
    return false;
  // Batch indices in the output's order, so that they merge where C's do.
  std::string batch;
  for (char c : out.term)
    if (hasIndex(plan.batchIndices, c) || hasIndex(moved, c))
      batch.push_back(c);
  plan.batchIndices = batch;
  plan.batch = groupExtent(plan.batchIndices, indices, extents);
  plan.m = groupExtent(plan.mIndices, indices, extents);
  plan.n = groupExtent(plan.nIndices, indices, extents);
  return true;
}

/// The plan with input `first` as A, or nullopt when `mode` does not fit.
std::optional<GemmPlan> planRoles(const EinsumSpec &spec, int first,
                                  OutputMode mode, const std::string &indices,
                                  const std::vector<int64_t> &extents,
                                  const GemmLimits &limits) {
  const std::string &output = spec.output;
  const std::string &termA = spec.inputs[first];
  const std::string &termB = spec.inputs[1 - first];
  GemmPlan plan;
  for (char c : output) {
    bool inA = hasIndex(termA, c), inB = hasIndex(termB, c);
    (inA && inB ? plan.batchIndices
     : inA      ? plan.mIndices
                : plan.nIndices)
        .push_back(c);
  }
  for (char c : termA)
    if (!hasIndex(output, c) && hasIndex(termB, c))
      plan.kIndices.push_back(c);
  if (plan.kIndices.empty())
    return std::nullopt;

  plan.batch = groupExtent(plan.batchIndices, indices, extents);
  plan.m = groupExtent(plan.mIndices, indices, extents);
  plan.n = groupExtent(plan.nIndices, indices, extents);
  plan.k = groupExtent(plan.kIndices, indices, extents);
  if (std::max({plan.m, plan.n, plan.k}) > limits.maxExtent ||
      plan.batch > limits.maxBatch)
    return std::nullopt;
  // Batched dot products and tiny matrices: a GEMM call per batch element
  // costs more than a generic reduction.
  if ((plan.m == 1 && plan.n == 1 && !limits.allowDotProducts) ||
      plan.m * plan.n * plan.k < limits.minVolume)
    return std::nullopt;

  // C must be a plain (untransposed) row-major matrix per batch element.
  // When it is transposed, the other role assignment (C^T = B^T A^T)
  // fits; when neither does, outer indices may join the batch, or C goes
  // through scratch.
  OperandLayout outLayout = denseLayout(output, indices, extents);
  auto viewOfC = [&]() -> std::optional<MatrixView> {
    std::optional<int64_t> batchStrideC =
        mergedStride(outLayout, plan.batchIndices, indices, extents);
    std::optional<int64_t> rowStrideC =
        mergedStride(outLayout, plan.mIndices, indices, extents);
    std::optional<int64_t> colStrideC =
        mergedStride(outLayout, plan.nIndices, indices, extents);
    if (!batchStrideC || !rowStrideC || !colStrideC)
      return std::nullopt;
    plan.batchStrideC = *batchStrideC;
    return matrixView(plan.m, plan.n, *rowStrideC, *colStrideC, false);
  };
  std::optional<MatrixView> viewC = viewOfC();
  if (mode == OutputMode::Direct && !viewC)
    return std::nullopt;
  if (mode == OutputMode::SplitBatch) {
    if (viewC || limits.minSplitExtent <= 0 ||
        !splitIntoBatch(plan, outLayout, indices, extents,
                        limits.minSplitExtent) ||
        plan.batch > limits.maxBatch || !(viewC = viewOfC()))
      return std::nullopt;
  }
  if (viewC) {
    plan.ldc = viewC->leadingDim;
  } else {
    plan.outDirect = false;
    plan.outCanonical = plan.batchIndices + plan.mIndices + plan.nIndices;
    plan.ldc = std::max<int64_t>(1, plan.n);
    plan.batchStrideC = plan.m * plan.n;
  }
  plan.a = planOperand(first, termA, termB, output, plan.batchIndices,
                       plan.mIndices, plan.kIndices, indices, extents);
  plan.b = planOperand(1 - first, termB, termA, output, plan.batchIndices,
                       plan.kIndices, plan.nIndices, indices, extents);
  // A split batch holds indices one operand lacks: a copy of that operand
  // in batch-major order would repeat it per batch element. The scratch
  // path is the better plan then.
  if (mode == OutputMode::SplitBatch && (plan.a.permute || plan.b.permute))
    return std::nullopt;
  if (std::max({plan.a.leadingDim, plan.b.leadingDim, plan.ldc}) >
      limits.maxLeadingDim)
    return std::nullopt;
  return plan;
}

} // namespace

std::optional<GemmPlan> planGemm(const EinsumSpec &spec,
                                 const std::string &indices,
                                 const std::vector<int64_t> &extents,
                                 const GemmLimits &limits) {
  if (spec.numInputs() != 2)
    return std::nullopt;
  // Best first: C written in place as is, then with outer indices looped,
  // then through scratch (with input 1 as A, as before the split existed).
  for (OutputMode mode : {OutputMode::Direct, OutputMode::SplitBatch})
    for (int first = 0; first < 2; ++first)
      if (std::optional<GemmPlan> plan =
              planRoles(spec, first, mode, indices, extents, limits))
        return plan;
  return planRoles(spec, 1, OutputMode::Scratch, indices, extents, limits);
}

} // namespace doppler::runtime::contraction
