//===- TensorOps.cpp - static tensor slicing and joining to doppler ops ---===//
//
// tensor.extract_slice -> doppler.slice (a rank-reducing one, then a
// doppler.reshape that drops the unit dims), tensor.insert_slice / pad /
// concat -> doppler.assemble of blocks (a rank-reducing insert reshapes its
// source first); the reshapes are Reshapes.cpp's.
//
//===----------------------------------------------------------------------===//

#include "Builders.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"


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

std::string whyNotExtractSlice(tensor::ExtractSliceOp op) {
  std::string why = staticUnitStrides(op);
  if (why.empty())
    why = whyNotTyped(op, false);
  return why;
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
    Value block = b.block(op.getSource(), op.getStaticOffsets(),
                          op.getStaticSizes());
    // A rank-reducing slice drops the unit dims it names: a reshape.
    block = b.reshape(block, op.getResultType());
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
  return why;
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
    // A rank-reducing insert: the source with the unit dims it lacks.
    RankedTensorType destType = op.getDestType();
    Value source = b.reshape(
        op.getSource(), RankedTensorType::get(op.getStaticSizes(),
                                              destType.getElementType()));
    Value result = b.insert(source, dest, op.getStaticOffsets());
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
  if (foldsIntoWindowOps(op))
    return "it is the padding of the convolutions or pools that read it";
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

} // namespace

namespace mlir::doppler::linalg_to_doppler {

void populateTensorOpPatterns(RewritePatternSet &patterns,
                              LinalgToDopplerCounters *counters) {
  patterns.add<ExtractSlicePattern, InsertSlicePattern, PadPattern,
               ConcatPattern>(patterns.getContext(), counters);
  populateReshapePatterns(patterns, counters);
}

std::string explainTensorOp(Operation *op) {
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op))
    return whyNotExtractSlice(slice);
  if (auto insert = dyn_cast<tensor::InsertSliceOp>(op))
    return whyNotInsertSlice(insert);
  if (auto pad = dyn_cast<tensor::PadOp>(op))
    return whyNotPad(pad);
  if (auto concat = dyn_cast<tensor::ConcatOp>(op))
    return whyNotConcat(concat);
  if (std::optional<std::string> why = explainReshape(op))
    return *why;
  return "it has no doppler form";
}

} // namespace mlir::doppler::linalg_to_doppler
