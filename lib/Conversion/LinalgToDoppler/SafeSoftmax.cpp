//===- SafeSoftmax.cpp - torch's _safe_softmax as the frontend writes it --===//
//
// torch's `_safe_softmax` (every attention of torch.export's
// decompositions) is `where(all(x == -inf, d), 0, softmax(x, d))`: its
// condition depends on the data, and the dialect holds no i1 tensor. The
// PyTorch frontend (python/doppler/ops_activations.py, `safe_softmax`)
// computes it as a softmax whose row max is clamped to the type's lowest
// finite value and whose sum gets 1e-30: a row of -inf gives exp(-inf) = 0
// and 0 / 1e-30 = 0; every other row is unchanged (its max is finite and
// at least lowest, its sum at least 1, to which 1e-30 adds nothing).
// rewriteSafeSoftmax finds torch-mlir's form of it in linalg (the
// comparison with -inf, the `all` (andi) reduction, the select of 0, and
// the max, sub, exp, sum and div of the softmax of the same x along the
// same loops) and rewrites it so: the select's result is the softmax,
// whose sub reads max(M, lowest) and whose div reads S + 1e-30.
//
//===----------------------------------------------------------------------===//

#include "Builders.h"
#include "ConstantEval.h"
#include "Prepare.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

#include <cmath>

using namespace mlir;
using namespace mlir::doppler;
using namespace mlir::doppler::linalg_to_doppler;

namespace {

/// `value` before any expand_shape/collapse_shape.
Value throughReshapes(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def))
      break;
    value = def->getOperand(0);
  }
  return value;
}

/// `value` before arith.extf (torch-mlir compares in f64).
Value throughExtF(Value value) {
  if (auto ext = value.getDefiningOp<arith::ExtFOp>())
    return ext.getIn();
  return value;
}

/// The generic defining `value` (through reshapes), or null.
linalg::GenericOp genericOf(Value value) {
  return throughReshapes(value).getDefiningOp<linalg::GenericOp>();
}

/// The tensor operand a block argument of `op`'s body stands for, or null.
OpOperand *operandOf(linalg::GenericOp op, Value arg) {
  auto blockArg = dyn_cast<BlockArgument>(throughExtF(arg));
  if (!blockArg || blockArg.getOwner() != op.getBody())
    return nullptr;
  return &op->getOpOperand(blockArg.getArgNumber());
}

/// The body op that makes the value `op` yields as result `result`.
Operation *yieldedOp(linalg::GenericOp op, unsigned result = 0) {
  Operation *yield = op.getBody()->getTerminator();
  if (result >= yield->getNumOperands())
    return nullptr;
  return yield->getOperand(result).getDefiningOp();
}

bool allParallel(linalg::GenericOp op) {
  return op.getNumParallelLoops() == op.getNumLoops();
}

/// A reduction `acc = combine(x, acc)` of one input: its input operand
/// (through `result`'s body op of kind OpT), or null.
template <typename OpT>
OpOperand *reductionInput(linalg::GenericOp op, unsigned result = 0) {
  if (allParallel(op) || op.getNumDpsInputs() < 1)
    return nullptr;
  auto combine = dyn_cast_or_null<OpT>(yieldedOp(op, result));
  if (!combine)
    return nullptr;
  OpOperand *a = operandOf(op, combine->getOperand(0));
  OpOperand *b = operandOf(op, combine->getOperand(1));
  if (!a || !b)
    return nullptr;
  if (op.isDpsInit(a))
    std::swap(a, b);
  if (op.isDpsInput(a) && op.isDpsInit(b) &&
      b == op.getDpsInitOperand(result))
    return a;
  return nullptr;
}

/// Whether two reductions run over the same loops reading their input the
/// same way.
bool sameReduction(linalg::GenericOp a, linalg::GenericOp b) {
  return a.getIteratorTypesArray() == b.getIteratorTypesArray() &&
         a.getIndexingMapsArray()[0] == b.getIndexingMapsArray()[0];
}

bool isSplatOf(Value value, double expected, int64_t limit) {
  if (std::optional<double> c = scalarConstant(value))
    return *c == expected;
  std::optional<ConstTensor> t = readConstant(value, limit);
  if (!t)
    return false;
  for (int64_t k = 0; k < t->size(); ++k)
    if (t->getF(k) != expected)
      return false;
  return true;
}

/// The pieces of one safe softmax.
struct SafeSoftmax {
  linalg::GenericOp select, div;
  Value softmax; ///< what the select reads where the row is not all -inf
  OpOperand *maxOperand = nullptr; ///< where the sub reads the row max
  OpOperand *sumOperand = nullptr; ///< where the div reads the row sum
};

std::optional<SafeSoftmax> match(linalg::GenericOp select) {
  constexpr int64_t kLimit = int64_t(1) << 20;
  if (!allParallel(select) || select->getNumResults() != 1)
    return std::nullopt;
  auto sel = dyn_cast_or_null<arith::SelectOp>(yieldedOp(select));
  if (!sel || !isa<FloatType>(sel.getType()))
    return std::nullopt;
  OpOperand *cond = operandOf(select, sel.getCondition());
  OpOperand *zero = operandOf(select, sel.getTrueValue());
  OpOperand *softmax = operandOf(select, sel.getFalseValue());
  if (!cond || !softmax || !select.isDpsInput(cond) ||
      !select.isDpsInput(softmax) ||
      softmax->get().getType() != select->getResult(0).getType() ||
      select.getMatchingIndexingMap(softmax) !=
          select.getIndexingMapMatchingResult(select->getResult(0)))
    return std::nullopt;
  if (zero ? !isSplatOf(zero->get(), 0.0, kLimit)
           : !isSplatOf(sel.getTrueValue(), 0.0, kLimit))
    return std::nullopt;
  // all(x == -inf) over the softmax's loops.
  linalg::GenericOp all = genericOf(cond->get());
  OpOperand *compared = all ? reductionInput<arith::AndIOp>(all) : nullptr;
  if (!compared || !isSplatOf(all.getDpsInitOperand(0)->get(), -1, kLimit))
    return std::nullopt;
  linalg::GenericOp equal = genericOf(compared->get());
  if (!equal || !allParallel(equal))
    return std::nullopt;
  auto cmp = dyn_cast_or_null<arith::CmpFOp>(yieldedOp(equal));
  if (!cmp || cmp.getPredicate() != arith::CmpFPredicate::OEQ)
    return std::nullopt;
  std::optional<double> rhs = scalarConstant(cmp.getRhs());
  OpOperand *xOperand = operandOf(equal, cmp.getLhs());
  if (!rhs || !(std::isinf(*rhs) && *rhs < 0) || !xOperand)
    return std::nullopt;
  Value x = xOperand->get();
  // softmax(x) = exp(x - max(x)) / sum(exp(x - max(x))).
  linalg::GenericOp div = genericOf(softmax->get());
  auto divf = div && allParallel(div)
                  ? dyn_cast_or_null<arith::DivFOp>(yieldedOp(div))
                  : nullptr;
  if (!divf)
    return std::nullopt;
  OpOperand *eOperand = operandOf(div, divf.getLhs());
  OpOperand *sOperand = operandOf(div, divf.getRhs());
  if (!eOperand || !sOperand)
    return std::nullopt;
  linalg::GenericOp sum = genericOf(sOperand->get());
  OpOperand *summed = sum ? reductionInput<arith::AddFOp>(sum) : nullptr;
  if (!summed || summed->get() != eOperand->get() ||
      !isSplatOf(sum.getDpsInitOperand(0)->get(), 0.0, kLimit) ||
      !sameReduction(sum, all))
    return std::nullopt;
  // exp(x - m), in one generic or an exp of a sub.
  linalg::GenericOp exp = genericOf(eOperand->get());
  auto expOp = exp && allParallel(exp)
                   ? dyn_cast_or_null<math::ExpOp>(yieldedOp(exp))
                   : nullptr;
  if (!expOp)
    return std::nullopt;
  linalg::GenericOp subGeneric = exp;
  auto subf = expOp.getOperand().getDefiningOp<arith::SubFOp>();
  if (!subf) {
    OpOperand *d = operandOf(exp, expOp.getOperand());
    subGeneric = d ? genericOf(d->get()) : nullptr;
    subf = subGeneric && allParallel(subGeneric)
               ? dyn_cast_or_null<arith::SubFOp>(yieldedOp(subGeneric))
               : nullptr;
  }
  if (!subf)
    return std::nullopt;
  OpOperand *subX = operandOf(subGeneric, subf.getLhs());
  OpOperand *subM = operandOf(subGeneric, subf.getRhs());
  if (!subX || !subM || subX->get() != x)
    return std::nullopt;
  linalg::GenericOp max = genericOf(subM->get());
  unsigned result = 0;
  if (max)
    result = cast<OpResult>(throughReshapes(subM->get())).getResultNumber();
  OpOperand *maxed =
      max ? reductionInput<arith::MaximumFOp>(max, result) : nullptr;
  if (!maxed || maxed->get() != x || !sameReduction(max, all))
    return std::nullopt;
  return SafeSoftmax{select, div, softmax->get(), subM, sOperand};
}

/// A parallel generic applying `combine(x, c)` elementwise to `value`.
Value elementwiseWith(OpBuilder &b, Location loc, Value value, double c,
                      bool isMax) {
  auto type = cast<RankedTensorType>(value.getType());
  AffineMap id = AffineMap::getMultiDimIdentityMap(type.getRank(),
                                                   b.getContext());
  Value empty =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  SmallVector<utils::IteratorType> parallel(type.getRank(),
                                            utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{type}, ValueRange{value}, ValueRange{empty},
             ArrayRef<AffineMap>{id, id}, parallel,
             [&](OpBuilder &nb, Location l, ValueRange args) {
               Value cst = arith::ConstantOp::create(
                   nb, l, FloatAttr::get(type.getElementType(), c));
               Value r = isMax ? arith::MaximumFOp::create(nb, l, args[0], cst)
                                     .getResult()
                               : arith::AddFOp::create(nb, l, args[0], cst)
                                     .getResult();
               linalg::YieldOp::create(nb, l, r);
             })
      .getResult(0);
}

} // namespace

void linalg_to_doppler::rewriteSafeSoftmax(Operation *function,
                                           LinalgToDopplerCounters *counters) {
  SmallVector<SafeSoftmax> found;
  for (Region &region : function->getRegions())
    for (Block &block : region)
      for (Operation &op : block)
        if (auto generic = dyn_cast<linalg::GenericOp>(&op))
          if (std::optional<SafeSoftmax> s = match(generic))
            found.push_back(*s);
  for (SafeSoftmax &s : found) {
    Type element = getElementTypeOrSelf(s.maxOperand->get().getType());
    const llvm::fltSemantics &semantics =
        cast<FloatType>(element).getFloatSemantics();
    double lowest =
        APFloat::getLargest(semantics, /*Negative=*/true).convertToDouble();
    double tiny = element.isF16() || element.isBF16() ? 1e-7 : 1e-30;
    OpBuilder b(s.maxOperand->getOwner());
    s.maxOperand->set(elementwiseWith(b, s.select.getLoc(),
                                      s.maxOperand->get(), lowest, true));
    b.setInsertionPoint(s.div);
    s.sumOperand->set(elementwiseWith(b, s.select.getLoc(),
                                      s.sumOperand->get(), tiny, false));
    countConverted(counters, s.select);
    s.select->getResult(0).replaceAllUsesWith(s.softmax);
    eraseIfDead(s.select);
  }
}
