//===- TensorOps.cpp - static tensor slicing and joining to doppler ops ---===//
//
// tensor.extract_slice -> doppler.slice, tensor.insert_slice / pad /
// concat -> doppler.assemble of blocks, and the reshapes doppler can
// express: expand_shape that only adds unit dims (a broadcast over them)
// and collapse_shape that only drops unit dims (a product over one
// element); reshapes that split or merge extents become blocks
// (Reshapes.cpp).
//
//===----------------------------------------------------------------------===//

#include "Builders.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include <type_traits>

using namespace mlir;
using namespace mlir::doppler;
using namespace mlir::doppler::linalg_to_doppler;

namespace {

/// Why a slice-like op with these mixed offsets/sizes/strides cannot be
/// expressed: empty if all are static and strides are 1.
std::string staticUnitStrides(OffsetSizeAndStrideOpInterface op) {
  if (!op.hasUnitStride())
    return "it has non-unit strides";
  for (OpFoldResult value : llvm::concat<OpFoldResult>(
           op.getMixedOffsets(), op.getMixedSizes(), op.getMixedStrides()))
    if (!getConstantIntValue(value))
      return "it has dynamic offsets, sizes or strides";
  return "";
}

std::string whyNotTyped(Operation *op, bool needFloat) {
  for (Type type : llvm::concat<Type>(op->getOperandTypes(),
                                      op->getResultTypes())) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor)
      continue;
    if (!tensor.hasStaticShape())
      return "it has a dynamic shape";
    if (needFloat && !isa<FloatType>(tensor.getElementType()))
      return "its element type is not a float type";
  }
  return "";
}

/// The unit dims of `big` that `small` lacks, when `small` is `big` with
/// some unit dims removed (reassociation gives the groups).
std::optional<std::string>
unitDimLetters(RankedTensorType big, RankedTensorType small,
               ArrayRef<ReassociationIndices> groups, std::string &bigTerm,
               std::string &smallTerm) {
  if (big.getRank() > kMaxLetters)
    return std::nullopt;
  bigTerm = std::string(kLetters, big.getRank());
  smallTerm.clear();
  std::string units;
  if (static_cast<int64_t>(groups.size()) != small.getRank())
    return std::nullopt;
  for (auto [i, group] : llvm::enumerate(groups)) {
    // In each group, at most one dim is not a unit dim, and its extent is
    // the small dim's.
    int64_t kept = -1;
    for (int64_t d : group)
      if (big.getDimSize(d) != 1) {
        if (kept >= 0)
          return std::nullopt;
        kept = d;
      }
    if (kept < 0) // all units: keep the first one
      kept = group.front();
    if (big.getDimSize(kept) != small.getDimSize(i))
      return std::nullopt;
    smallTerm += bigTerm[kept];
    for (int64_t d : group)
      if (d != kept)
        units += bigTerm[d];
  }
  return units;
}

std::string whyNotExtractSlice(tensor::ExtractSliceOp op) {
  std::string why = staticUnitStrides(op);
  if (why.empty())
    why = whyNotTyped(op, false);
  if (!why.empty())
    return why;
  if (op.getResultType().getRank() != op.getSourceType().getRank() &&
      !isa<FloatType>(op.getResultType().getElementType()))
    return "it drops dims of a non-float tensor";
  return "";
}

struct ExtractSlicePattern : public OpRewritePattern<tensor::ExtractSliceOp> {
  ExtractSlicePattern(MLIRContext *context, LinalgToDopplerCounters *counters)
      : OpRewritePattern(context), counters(counters) {}

  LogicalResult matchAndRewrite(tensor::ExtractSliceOp op,
                                PatternRewriter &rewriter) const override {
    std::string why = whyNotExtractSlice(op);
    if (!why.empty())
      return rewriter.notifyMatchFailure(op, why);
    DopplerBuilder b(rewriter, op.getLoc(), counters);
    RankedTensorType source = op.getSourceType();
    SmallVector<int64_t> sizes(op.getStaticSizes());
    auto blockType = RankedTensorType::get(sizes, source.getElementType());
    Value block = b.block(op.getSource(), op.getStaticOffsets(), sizes);
    if (blockType != op.getResultType()) {
      // A rank-reducing slice: drop the unit dims it names.
      std::string all(kLetters, sizes.size()), kept;
      llvm::SmallBitVector dropped = op.getDroppedDims();
      for (size_t d = 0; d < sizes.size(); ++d)
        if (!dropped.test(d))
          kept += all[d];
      block = b.einsum(all + "->" + kept, JoinKind::Identity, AggKind::Mul,
                       std::nullopt, block, op.getResultType());
    }
    countConverted(counters, op);
    rewriter.replaceOp(op, block);
    return success();
  }
  LinalgToDopplerCounters *counters;
};

std::string whyNotInsertSlice(tensor::InsertSliceOp op) {
  std::string why = staticUnitStrides(op);
  if (why.empty())
    why = whyNotTyped(op, false);
  if (!why.empty())
    return why;
  if (op.getSourceType().getRank() != op.getDestType().getRank())
    return "it is rank-reducing";
  return "";
}

struct InsertSlicePattern : public OpRewritePattern<tensor::InsertSliceOp> {
  InsertSlicePattern(MLIRContext *context, LinalgToDopplerCounters *counters)
      : OpRewritePattern(context), counters(counters) {}

  LogicalResult matchAndRewrite(tensor::InsertSliceOp op,
                                PatternRewriter &rewriter) const override {
    std::string why = whyNotInsertSlice(op);
    if (!why.empty())
      return rewriter.notifyMatchFailure(op, why);
    DopplerBuilder b(rewriter, op.getLoc(), counters);
    Value dest = op.getDest();
    // What tensor.empty holds is unspecified: zeros are as good as any.
    if (dest.getDefiningOp<tensor::EmptyOp>() &&
        isa<FloatType>(op.getDestType().getElementType()))
      dest = b.fill(0.0, op.getDestType());
    Value result = b.insert(op.getSource(), dest, op.getStaticOffsets());
    countConverted(counters, op);
    rewriter.replaceOp(op, result);
    return success();
  }
  LinalgToDopplerCounters *counters;
};

/// The constant a tensor.pad pads with, when its body yields one.
std::optional<double> padValue(tensor::PadOp op) {
  Value value = op.getConstantPaddingValue();
  return value ? scalarConstant(value) : std::nullopt;
}

std::string whyNotPad(tensor::PadOp op) {
  std::string why = whyNotTyped(op, true);
  if (!why.empty())
    return why;
  if (!op.getLow().empty() || !op.getHigh().empty())
    return "it has dynamic padding";
  for (int64_t pad : llvm::concat<const int64_t>(op.getStaticLow(),
                                                  op.getStaticHigh()))
    if (pad < 0)
      return "it has negative padding";
  if (!padValue(op))
    return "it does not pad with a constant";
  return "";
}

struct PadPattern : public OpRewritePattern<tensor::PadOp> {
  PadPattern(MLIRContext *context, LinalgToDopplerCounters *counters)
      : OpRewritePattern(context), counters(counters) {}

  LogicalResult matchAndRewrite(tensor::PadOp op,
                                PatternRewriter &rewriter) const override {
    std::string why = whyNotPad(op);
    if (!why.empty())
      return rewriter.notifyMatchFailure(op, why);
    DopplerBuilder b(rewriter, op.getLoc(), counters);
    Value dest = b.fill(*padValue(op), op.getResultType());
    Value result = b.insert(op.getSource(), dest, op.getStaticLow());
    countConverted(counters, op);
    rewriter.replaceOp(op, result);
    return success();
  }
  LinalgToDopplerCounters *counters;
};

std::string whyNotConcat(tensor::ConcatOp op) {
  return whyNotTyped(op, false);
}

struct ConcatPattern : public OpRewritePattern<tensor::ConcatOp> {
  ConcatPattern(MLIRContext *context, LinalgToDopplerCounters *counters)
      : OpRewritePattern(context), counters(counters) {}

  LogicalResult matchAndRewrite(tensor::ConcatOp op,
                                PatternRewriter &rewriter) const override {
    std::string why = whyNotConcat(op);
    if (!why.empty())
      return rewriter.notifyMatchFailure(op, why);
    DopplerBuilder b(rewriter, op.getLoc(), counters);
    auto type = cast<RankedTensorType>(op.getResultType());
    SmallVector<int64_t> grid(type.getRank(), 1);
    grid[op.getDim()] = op.getInputs().size();
    Value result = b.assemble(grid, op.getInputs(), type);
    countConverted(counters, op);
    rewriter.replaceOp(op, result);
    return success();
  }
  LinalgToDopplerCounters *counters;
};

/// Why a reshape cannot be converted (empty: it can). `regroups` is set
/// when it is not one einsum (it splits or merges extents) but blocks.
template <typename ReshapeOp>
std::string whyNotReshape(ReshapeOp op, std::string &bigTerm,
                          std::string &smallTerm, std::string &units,
                          bool &regroups) {
  std::string why = whyNotTyped(op, true);
  if (!why.empty())
    return why;
  RankedTensorType big = op.getSrcType(), small = op.getResultType();
  if constexpr (std::is_same_v<ReshapeOp, tensor::ExpandShapeOp>)
    std::swap(big, small);
  SmallVector<ReassociationIndices> groups = op.getReassociationIndices();
  std::optional<std::string> found =
      unitDimLetters(big, small, groups, bigTerm, smallTerm);
  regroups = !found;
  if (regroups)
    return whyNotRegroup(big, small, groups);
  units = *found;
  return "";
}

/// Dropping unit dims: a product over them is their one element.
Value dropUnitDims(DopplerBuilder &b, tensor::CollapseShapeOp op,
                   const std::string &bigTerm, const std::string &smallTerm,
                   const std::string &units) {
  return b.einsum(bigTerm + "->" + smallTerm, JoinKind::Identity,
                  units.empty() ? std::optional<AggKind>() : AggKind::Mul,
                  std::nullopt, op.getSrc(), op.getResultType());
}

/// Adding unit dims: a broadcast over them, by adding -0.0 (exact).
Value addUnitDims(DopplerBuilder &b, tensor::ExpandShapeOp op,
                  const std::string &bigTerm, const std::string &smallTerm,
                  const std::string &units) {
  if (units.empty())
    return b.einsum(smallTerm + "->" + bigTerm, JoinKind::Identity,
                    std::nullopt, std::nullopt, op.getSrc(),
                    op.getResultType());
  Type element = op.getResultType().getElementType();
  Value zeros = b.fill(
      -0.0,
      RankedTensorType::get(SmallVector<int64_t>(units.size(), 1), element));
  return b.einsum(smallTerm + "," + units + "->" + bigTerm, JoinKind::Add,
                  std::nullopt, std::nullopt, ValueRange{op.getSrc(), zeros},
                  op.getResultType());
}

/// tensor.collapse_shape / expand_shape: a regrouping of extents becomes
/// slices, identity einsums and an assemble (regroup); adding or dropping
/// unit dims, one einsum.
template <typename ReshapeOp>
struct ReshapePattern : public OpRewritePattern<ReshapeOp> {
  static constexpr bool kExpand =
      std::is_same_v<ReshapeOp, tensor::ExpandShapeOp>;

  ReshapePattern(MLIRContext *context, LinalgToDopplerCounters *counters)
      : OpRewritePattern<ReshapeOp>(context), counters(counters) {}

  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    std::string bigTerm, smallTerm, units;
    bool regroups = false;
    std::string why = whyNotReshape(op, bigTerm, smallTerm, units, regroups);
    if (!why.empty())
      return rewriter.notifyMatchFailure(op, why);
    DopplerBuilder b(rewriter, op.getLoc(), counters);
    Value result;
    if (regroups)
      result = regroup(b, op.getSrc(), op.getResultType(), kExpand,
                       op.getReassociationIndices());
    else if constexpr (kExpand)
      result = addUnitDims(b, op, bigTerm, smallTerm, units);
    else
      result = dropUnitDims(b, op, bigTerm, smallTerm, units);
    countConverted(counters, op);
    rewriter.replaceOp(op, result);
    return success();
  }
  LinalgToDopplerCounters *counters;
};

} // namespace

namespace mlir::doppler::linalg_to_doppler {

void populateTensorOpPatterns(RewritePatternSet &patterns,
                              LinalgToDopplerCounters *counters) {
  patterns.add<ExtractSlicePattern, InsertSlicePattern, PadPattern,
               ConcatPattern, ReshapePattern<tensor::CollapseShapeOp>,
               ReshapePattern<tensor::ExpandShapeOp>>(
      patterns.getContext(), counters);
}

std::string explainTensorOp(Operation *op) {
  std::string bigTerm, smallTerm, units;
  bool regroups = false;
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op))
    return whyNotExtractSlice(slice);
  if (auto insert = dyn_cast<tensor::InsertSliceOp>(op))
    return whyNotInsertSlice(insert);
  if (auto pad = dyn_cast<tensor::PadOp>(op))
    return whyNotPad(pad);
  if (auto concat = dyn_cast<tensor::ConcatOp>(op))
    return whyNotConcat(concat);
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op))
    return whyNotReshape(collapse, bigTerm, smallTerm, units, regroups);
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op))
    return whyNotReshape(expand, bigTerm, smallTerm, units, regroups);
  return "it has no doppler form";
}

} // namespace mlir::doppler::linalg_to_doppler
