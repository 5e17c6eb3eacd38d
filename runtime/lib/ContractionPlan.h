//===- ContractionPlan.h - Einsum contractions as batched GEMMs -*- C++ -*-===//
//
// Backend-neutral planning of a mul/add contraction of two inputs as
//   C[batch][m][n] = A[batch][m][k] * B[batch][k][n]
// over dense row-major operands. The plan says which index groups form the
// batch, m, n and k dimensions, which operands must first be reduced
// (indices only one input has) or permuted into a dense [batch][rows][cols]
// copy, and the strided row-major matrix views (transposed or not, leading
// dimension, batch stride) a BLAS reads. Backends turn the reduction and
// permutation steps into their own kernels: loop nests on the CPU, CUDA
// kernels on a GPU (which also flips the views to cuBLAS's column-major
// convention). Internal to the runtime; not installed.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_RUNTIME_LIB_CONTRACTIONPLAN_H
#define DOPPLER_RUNTIME_LIB_CONTRACTIONPLAN_H

#include "Doppler/Support/EinsumSpec.h"

#include <climits>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace doppler::runtime::contraction {

/// One tensor operand over einsum indices: the index letter of each of its
/// dimensions and their strides in elements.
struct OperandLayout {
  std::string term;
  std::vector<int64_t> strides;

  /// 0 when the operand does not have `index` (a broadcast).
  int64_t strideOf(char index) const {
    size_t pos = term.find(index);
    return pos == std::string::npos ? 0 : strides[pos];
  }
};

/// The dense row-major layout of `term`, where `extents[i]` is the extent
/// of `indices[i]`.
OperandLayout denseLayout(const std::string &term, const std::string &indices,
                          const std::vector<int64_t> &extents);
/// Elements of a dense tensor of `layout.term`.
int64_t elementsOf(const OperandLayout &layout, const std::string &indices,
                   const std::vector<int64_t> &extents);
/// Product of the extents of the indices in `group`.
int64_t groupExtent(const std::string &group, const std::string &indices,
                    const std::vector<int64_t> &extents);
/// Stride of a group of dimensions walked as one (its last index varies
/// fastest), or nullopt when the operand's layout does not allow it.
/// Extent-1 dimensions are ignored; a group of total extent 1 reports 0.
std::optional<int64_t> mergedStride(const OperandLayout &layout,
                                    const std::string &group,
                                    const std::string &indices,
                                    const std::vector<int64_t> &extents);

/// A rows x cols matrix as a row-major BLAS sees it: stored as is
/// (`transposed` false, rows `leadingDim` apart) or as its transpose.
struct MatrixView {
  bool transposed = false;
  int64_t leadingDim = 1;
};
/// The view of a rows x cols matrix with the given strides, or nullopt when
/// neither dimension is unit-stride (or transposing is not allowed).
std::optional<MatrixView> matrixView(int64_t rows, int64_t cols,
                                     int64_t rowStride, int64_t colStride,
                                     bool allowTranspose);

/// One GEMM operand: where it comes from and how a backend prepares it.
struct GemmOperandPlan {
  int input = 0;    ///< Spec input providing it.
  std::string term; ///< That input's term.
  /// Indices only this operand has, of extent over 1: summed out first
  /// (the product distributes over them) into a dense tensor of
  /// `reducedTerm`. Empty when there are none; `reducedTerm` is then `term`
  /// (own indices of extent 1 stay in it: they sum one element).
  std::string ownOnly;
  std::string reducedTerm;
  /// Copy (after the reduction, if any) into a dense tensor of `canonical`
  /// (batch, row and column indices) because BLAS cannot read the layout.
  bool permute = false;
  std::string canonical;
  /// The row-major view BLAS reads (of the permuted copy when permuting).
  bool transposed = false;
  int64_t leadingDim = 1;
  int64_t batchStride = 0;

  bool preReduce() const { return !ownOnly.empty(); }
};

struct GemmPlan {
  /// Index groups; `batchIndices` etc. list letters outermost first.
  std::string batchIndices, mIndices, nIndices, kIndices;
  int64_t batch = 1, m = 1, n = 1, k = 1;
  GemmOperandPlan a, b;
  /// C is written in place as a row-major matrix per batch element, or
  /// into a dense scratch tensor of `outCanonical` (batch, m, n indices)
  /// that is then permuted into the output.
  bool outDirect = true;
  std::string outCanonical;
  int64_t ldc = 1;
  int64_t batchStrideC = 0;
};

/// When a contraction is worth a GEMM call, and what the BLAS can address.
struct GemmLimits {
  /// Smallest m*n*k worth a call (below it the generic kernels win).
  int64_t minVolume = 256;
  /// Whether m == n == 1 (batched dot products) may use GEMM.
  bool allowDotProducts = false;
  /// Largest m, n, k and leading dimension the BLAS takes (32-bit ints).
  int64_t maxExtent = INT_MAX / 2;
  int64_t maxLeadingDim = INT_MAX;
  /// Largest batch count (cuBLAS takes an int; the CPU loops).
  int64_t maxBatch = INT64_MAX;
  /// When C's row or column indices are not one strided dimension of the
  /// output (e.g. "sd,dhe->hse": h sits outside s), the outer indices of
  /// that group may join the batch (the operand without them is reread,
  /// batch stride 0) instead of C going through scratch and a permutation,
  /// provided the rest of the group still spans at least this many elements
  /// and neither operand needs a copy. 0: never.
  int64_t minSplitExtent = 0;
};

/// The GEMM plan for a mul/add contraction of two inputs (the caller checks
/// join and aggregation), or nullopt when the einsum contracts no index both
/// inputs share, is too small per `limits`, or exceeds them. `indices` and
/// `extents` are IndexSizes' fields.
std::optional<GemmPlan> planGemm(const EinsumSpec &spec,
                                 const std::string &indices,
                                 const std::vector<int64_t> &extents,
                                 const GemmLimits &limits = {});

} // namespace doppler::runtime::contraction

#endif // DOPPLER_RUNTIME_LIB_CONTRACTIONPLAN_H
