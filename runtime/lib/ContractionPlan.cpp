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
  for (char c : term)
    if (!hasIndex(output, c) && !hasIndex(other, c))
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

std::optional<GemmPlan> planGemm(const EinsumSpec &spec,
                                 const std::string &indices,
                                 const std::vector<int64_t> &extents,
                                 const GemmLimits &limits) {
  if (spec.numInputs() != 2)
    return std::nullopt;
  const std::string &output = spec.output;
  for (int first = 0; first < 2; ++first) {
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
    // fits; when neither does, C goes through scratch.
    OperandLayout outLayout = denseLayout(output, indices, extents);
    std::optional<int64_t> batchStrideC =
        mergedStride(outLayout, plan.batchIndices, indices, extents);
    std::optional<int64_t> rowStrideC =
        mergedStride(outLayout, plan.mIndices, indices, extents);
    std::optional<int64_t> colStrideC =
        mergedStride(outLayout, plan.nIndices, indices, extents);
    std::optional<MatrixView> viewC;
    if (batchStrideC && rowStrideC && colStrideC)
      viewC = matrixView(plan.m, plan.n, *rowStrideC, *colStrideC, false);
    if (!viewC && first == 0)
      continue;
    if (viewC) {
      plan.ldc = viewC->leadingDim;
      plan.batchStrideC = *batchStrideC;
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
    if (std::max({plan.a.leadingDim, plan.b.leadingDim, plan.ldc}) >
        limits.maxLeadingDim)
      return std::nullopt;
    return plan;
  }
  return std::nullopt;
}

} // namespace doppler::runtime::contraction
