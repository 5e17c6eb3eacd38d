//===- Reshapes.cpp - tensor reshapes to doppler.reshape ------------------===//
//
// tensor.expand_shape, tensor.collapse_shape and tensor.reshape on static
// shapes are row-major reshapes: each becomes one doppler.reshape, whatever
// it does to the dims (a head split [B, T, H*D] -> [B, T, H, D], a merge
// [B, H, T, D] -> [B*H, T, D], unit dims added or dropped), of any element
// type.
//
//===----------------------------------------------------------------------===//

#include "Builders.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::doppler;
using namespace mlir::doppler::linalg_to_doppler;

namespace {

/// Why a reshape from `source` to `result` cannot be a doppler.reshape
/// (empty: it can).
std::string whyNotReshape(Type source, Type result) {
  for (Type type : {source, result}) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape())
      return "it has a dynamic shape";
  }
  return "";
}

template <typename OpT> struct ReshapePattern : public OpRewritePattern<OpT> {
  ReshapePattern(MLIRContext *context, LinalgToDopplerCounters *counters)
      : OpRewritePattern<OpT>(context), counters(counters) {}

  LogicalResult matchAndRewrite(OpT op,
                                PatternRewriter &rewriter) const override {
    // The source is operand 0 of all three (tensor.reshape's shape operand
    // only restates the static result type).
    Value source = op->getOperand(0);
    Type resultType = op->getResult(0).getType();
    std::string why = whyNotReshape(source.getType(), resultType);
    if (!why.empty())
      return rewriter.notifyMatchFailure(op, why);
    DopplerBuilder b(rewriter, op.getLoc(), counters);
    Value result = b.reshape(source, cast<RankedTensorType>(resultType));
    countConverted(counters, op);
    SmallVector<Value> others(llvm::drop_begin(op->getOperands()));
    rewriter.replaceOp(op, result);
    // tensor.reshape's shape, typically a constant, may now be dead.
    for (Value other : others)
      if (Operation *def = other.getDefiningOp();
          def && isOpTriviallyDead(def))
        rewriter.eraseOp(def);
    return success();
  }
  LinalgToDopplerCounters *counters;
};

} // namespace

void linalg_to_doppler::populateReshapePatterns(
    RewritePatternSet &patterns, LinalgToDopplerCounters *counters) {
  patterns.add<ReshapePattern<tensor::CollapseShapeOp>,
               ReshapePattern<tensor::ExpandShapeOp>,
               ReshapePattern<tensor::ReshapeOp>>(patterns.getContext(),
                                                  counters);
}

std::optional<std::string> linalg_to_doppler::explainReshape(Operation *op) {
  if (!isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp, tensor::ReshapeOp>(
          op))
    return std::nullopt;
  return whyNotReshape(op->getOperand(0).getType(),
                       op->getResult(0).getType());
}
