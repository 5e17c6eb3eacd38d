//===- IntegerCarriers.cpp - Integers and booleans from data as floats ----===//
//
// What stays integer after constants are folded is computed from the
// model's integer inputs: transformers' padding mask (`attention_mask !=
// 0`, gathered, `&`-ed with the causal mask, `where` on it), RoBERTa's
// positions (`cumsum(input_ids != pad) * mask + pad`, gathered at). The
// dialect computes on floats, so such tensors are *carried* as f64 tensors
// of the same values, exactly:
//
// - A single-result linalg op with an integer result that is not a gather
//   (its body does not yield `tensor.extract`) computes in f64: its integer
//   result and block arguments become f64, `cmpi` becomes `cmpf` (an i1
//   stays an i1 inside the body: `andi`/`ori`/`xori`/`select` on it are
//   valid and compile to mul/max/ne/where joins), `addi`/`subi`/`muli`/
//   `maxsi`/`minsi` their float forms, integer extensions and truncations
//   the value itself (no wrap: values beyond 2^53 are not exact), `extui`/
//   `extsi` of an i1 `uitofp`/`sitofp`. The body's i1 result is yielded
//   as 0.0/1.0 (`uitofp`).
// - A float-result op reading a carrier (a `where` on the mask, a cast of
//   it) reads it converted to its element type (exact on 0/1; integers
//   round as `sitofp` does).
// - Operands that are integers but not carriers (function arguments such as
//   `attention_mask`, gather results, constants) are converted: constants
//   now, the others by a tensor-level `sitofp` generic, which converts to a
//   conversion einsum (exact, or an error where it runs). Float data read
//   by an integer op (`x > 0` into an i1 mask) is widened to f64 (exact).
// - A gather at indices computed from data reads them as `fptosi` of the
//   carrier (Gathers.cpp: doppler.gather at f64 indices, checked integral
//   where it runs); a gather of a carrier table is a gather of floats.
// - Reshapes and slices of a carrier are retyped in place.
// - `tm_tensor.scan` (torch-mlir's cumsum) of a carrier with a zero init
//   becomes a contraction with a 0/1 triangular matrix (j <= i, or j < i
//   when exclusive) made from two iotas: exact for integers in f64.
//
// Anything else reading a carrier (a function result, an op this does not
// know, an integer op it cannot express such as a bitwise `andi` of wide
// integers or `fptosi` of data) keeps the whole function unchanged, so the
// reasons given for what is left stay those of the integer ops.
//
//===----------------------------------------------------------------------===//

#include "Builders.h"
#include "Prepare.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::doppler;
using namespace mlir::doppler::linalg_to_doppler;

namespace {

RankedTensorType intTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.hasStaticShape() &&
                 isa<IntegerType>(tensor.getElementType())
             ? tensor
             : nullptr;
}

bool isWideInt(Type type) {
  auto integer = dyn_cast<IntegerType>(type);
  return integer && integer.getWidth() > 1;
}

/// The body yields `tensor.extract` of a tensor from outside (a gather).
tensor::ExtractOp gatherExtract(Operation *op) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || generic->getNumResults() != 1)
    return nullptr;
  auto extract = generic.getBody()
                     ->getTerminator()
                     ->getOperand(0)
                     .getDefiningOp<tensor::ExtractOp>();
  return extract && extract->getBlock() == generic.getBody() ? extract
                                                             : nullptr;
}

/// The value of every element of an integer or float constant fill (a
/// linalg.fill of a constant, a splat constant), if `value` is one.
std::optional<double> fillValue(Value value) {
  if (std::optional<double> v = constantFillValue(value))
    return v;
  APInt integer;
  if (auto fill = value.getDefiningOp<linalg::FillOp>())
    if (matchPattern(fill.getInputs()[0], m_ConstantInt(&integer)))
      return static_cast<double>(integer.getSExtValue());
  DenseIntElementsAttr dense;
  if (matchPattern(value, m_Constant(&dense)) && dense.isSplat())
    return static_cast<double>(dense.getSplatValue<APInt>().getSExtValue());
  return std::nullopt;
}

bool isScan(Operation *op) {
  return op->getName().getStringRef() == "tm_tensor.scan";
}

bool isReshapeLike(Operation *op) {
  return isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp,
             tensor::ExtractSliceOp, tensor::ReshapeOp>(op);
}

std::optional<arith::CmpFPredicate> floatPredicate(arith::CmpIPredicate p) {
  switch (p) {
  case arith::CmpIPredicate::eq: return arith::CmpFPredicate::OEQ;
  case arith::CmpIPredicate::ne: return arith::CmpFPredicate::UNE;
  case arith::CmpIPredicate::slt: return arith::CmpFPredicate::OLT;
  case arith::CmpIPredicate::sle: return arith::CmpFPredicate::OLE;
  case arith::CmpIPredicate::sgt: return arith::CmpFPredicate::OGT;
  case arith::CmpIPredicate::sge: return arith::CmpFPredicate::OGE;
  default: return std::nullopt; // unsigned: not on signed carriers
  }
}

/// Whether every op of a computing body can be expressed on floats.
bool bodyComputable(Block &body) {
  for (Operation &op : body.without_terminator()) {
    bool wide = llvm::any_of(op.getOperandTypes(), isWideInt) ||
                llvm::any_of(op.getResultTypes(), isWideInt);
    if (!wide)
      continue; // float and i1 ops stay as they are
    // Integers from outside the body: constants only.
    for (Value operand : op.getOperands())
      if (isWideInt(operand.getType()) && operand.getParentBlock() != &body &&
          !matchPattern(operand, m_Constant()))
        return false;
    bool ok =
        llvm::TypeSwitch<Operation *, bool>(&op)
            .Case([](arith::CmpIOp cmp) {
              return floatPredicate(cmp.getPredicate()).has_value();
            })
            .Case<arith::AddIOp, arith::SubIOp, arith::MulIOp, arith::MaxSIOp,
                  arith::MinSIOp, arith::ExtSIOp, arith::ExtUIOp,
                  arith::SIToFPOp, arith::SelectOp, arith::ConstantOp>(
                [](Operation *) { return true; })
            .Case([](arith::TruncIOp trunc) {
              return isWideInt(trunc.getType()); // not to i1 (a bit test)
            })
            .Default([](Operation *) { return false; });
    if (!ok)
      return false;
  }
  return true;
}

/// The analysis: which ops change and whether every carrier is read only
/// by ops this rewrites.
struct Analysis {
  SmallVector<Operation *> compute;  ///< integer-result ops computed in f64
  SmallVector<Operation *> readers;  ///< float-result ops reading integers
  SmallVector<Operation *> gathers;  ///< gathers reading a carrier
  SmallVector<Operation *> reshapes; ///< reshapes/slices of a carrier
  SmallVector<Operation *> scans;    ///< tm_tensor.scan of a carrier
  llvm::DenseSet<Value> carriers;
  std::vector<Operation *> order; ///< all of the above, in program order

  bool run(Operation *function);
};

bool Analysis::run(Operation *function) {
  auto readsCarrier = [&](Operation *op) {
    return llvm::any_of(op->getOperands(),
                        [&](Value v) { return carriers.contains(v); });
  };
  bool ok = true;
  function->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op == function)
      return WalkResult::advance();
    if (isScan(op)) {
      if (op->getNumOperands() >= 1 && carriers.contains(op->getOperand(0))) {
        // Zero inits, the accumulator result unused, an add body.
        bool zeroInits =
            llvm::all_of(op->getOperands().drop_front(), [](Value init) {
              std::optional<double> v = fillValue(init);
              return v && *v == 0;
            });
        auto add = op->getRegion(0).front().empty()
                       ? nullptr
                       : &op->getRegion(0).front().front();
        if (!zeroInits || op->getNumResults() != 2 ||
            !op->getResult(1).use_empty() || !add ||
            !isa<arith::AddIOp, arith::AddFOp>(add)) {
          ok = false;
          return WalkResult::interrupt();
        }
        scans.push_back(op);
        order.push_back(op);
        carriers.insert(op->getResult(0));
      }
      return WalkResult::skip();
    }
    if (isReshapeLike(op)) {
      if (carriers.contains(op->getOperand(0))) {
        reshapes.push_back(op);
        order.push_back(op);
        carriers.insert(op->getResult(0));
      }
      return WalkResult::skip();
    }
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    if (!linalgOp) {
      // Any other op reading a carrier (a return, an unknown op) cannot.
      if (readsCarrier(op))
        ok = false;
      return ok ? WalkResult::skip() : WalkResult::interrupt();
    }
    if (isa<linalg::FillOp>(op) || op->getNumResults() != 1 ||
        !isa<linalg::GenericOp>(op) || !linalgOp.hasPureTensorSemantics()) {
      if (readsCarrier(op))
        ok = false;
      return ok ? WalkResult::skip() : WalkResult::interrupt();
    }
    Value result = op->getResult(0);
    if (tensor::ExtractOp extract = gatherExtract(op)) {
      bool table = carriers.contains(extract.getTensor());
      if (table || readsCarrier(op)) {
        if (table && !extract->hasOneUse()) {
          ok = false;
          return WalkResult::interrupt();
        }
        gathers.push_back(op);
        order.push_back(op);
        if (table)
          carriers.insert(result);
      }
      return WalkResult::skip();
    }
    Block &body = op->getRegion(0).front();
    bool intResult = intTensor(result.getType()) != nullptr;
    bool readsInts = llvm::any_of(linalgOp.getDpsInputs(), [](Value v) {
      return intTensor(v.getType()) != nullptr;
    });
    if (!intResult && !readsInts)
      return WalkResult::skip();
    // linalg.index feeding integers is an iota: only folded as a constant.
    bool usesIndex = false;
    body.walk([&](linalg::IndexOp) { usesIndex = true; });
    // An init the body reads must be remade as floats: a constant fill or
    // a carrier.
    OpOperand *init = linalgOp.getDpsInitOperand(0);
    bool initOk = !linalgOp.payloadUsesValueFromOperand(init) ||
                  carriers.contains(init->get()) ||
                  fillValue(init->get()).has_value();
    if (usesIndex || !initOk || !bodyComputable(body)) {
      if (readsCarrier(op))
        ok = false;
      return ok ? WalkResult::skip() : WalkResult::interrupt();
    }
    if (intResult) {
      compute.push_back(op);
      carriers.insert(result);
    } else {
      readers.push_back(op);
    }
    order.push_back(op);
    return WalkResult::skip();
  });
  return ok && !carriers.empty();
}

//===----------------------------------------------------------------------===//
// Rewriting
//===----------------------------------------------------------------------===//

/// A parallel generic converting `value` elementwise to `element`
/// (sitofp, extf or truncf): a conversion einsum once converted.
Value convertTensor(OpBuilder &b, Location loc, Value value, Type element) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getElementType() == element)
    return value;
  DenseElementsAttr dense;
  if (matchPattern(value, m_Constant(&dense)) &&
      isa<IntegerType>(type.getElementType())) {
    auto floatType = cast<FloatType>(element);
    bool isBool = type.getElementType().isInteger(1);
    SmallVector<APFloat> values;
    for (APInt v : dense.getValues<APInt>()) {
      APFloat f(static_cast<double>(isBool ? v.getZExtValue()
                                           : v.getSExtValue()));
      bool losesInfo;
      f.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                &losesInfo);
      values.push_back(f);
    }
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(type.clone(element), values));
  }
  auto resultType = type.clone(element);
  Value empty = tensor::EmptyOp::create(b, loc, resultType.getShape(), element);
  AffineMap id = b.getMultiDimIdentityMap(type.getRank());
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  Type from = type.getElementType();
  return linalg::GenericOp::create(
             b, loc, resultType, ValueRange{value}, ValueRange{empty},
             ArrayRef<AffineMap>{id, id}, iterators,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value x = args[0];
               Value y;
               if (from.isInteger(1)) // a bool: 0/1
                 y = arith::UIToFPOp::create(nb, nl, element, x);
               else if (isa<IntegerType>(from))
                 y = arith::SIToFPOp::create(nb, nl, element, x);
               else if (from.getIntOrFloatBitWidth() <
                        element.getIntOrFloatBitWidth())
                 y = arith::ExtFOp::create(nb, nl, element, x);
               else
                 y = arith::TruncFOp::create(nb, nl, element, x);
               linalg::YieldOp::create(nb, nl, y);
             })
      .getResult(0);
}

/// An empty tensor, or a fill of a constant, of `type` for an init.
Value remakeInit(OpBuilder &b, Location loc, Value init,
                 RankedTensorType type) {
  std::optional<double> value = fillValue(init);
  Value empty = tensor::EmptyOp::create(b, loc, type.getShape(),
                                        type.getElementType());
  if (!value || isa_and_nonnull<tensor::EmptyOp>(init.getDefiningOp()))
    return empty;
  Value scalar = arith::ConstantOp::create(
      b, loc, FloatAttr::get(type.getElementType(), *value));
  return linalg::FillOp::create(b, loc, scalar, empty).getResult(0);
}

/// Rewrites the body of a computing op so that every integer value wider
/// than i1 is a float of `element`; i1 block arguments (carriers) become
/// `x != 0`, and an i1 yield is yielded as 0/1.
void rewriteBody(Block &body, Type element,
                 ArrayRef<Type> originalArgTypes) {
  OpBuilder b(&body, body.begin());
  Location loc = body.getParentOp()->getLoc();
  auto zero = [&](OpBuilder &at) {
    return arith::ConstantOp::create(at, loc, FloatAttr::get(element, 0.0));
  };
  for (auto [arg, original] :
       llvm::zip(body.getArguments(), originalArgTypes)) {
    if (arg.getType() == original)
      continue;
    if (original.isInteger(1)) {
      // The carrier's 0/1 back as an i1.
      arg.setType(element);
      Value nonzero = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE,
                                            arg, zero(b));
      arg.replaceAllUsesExcept(nonzero, nonzero.getDefiningOp());
    }
  }
  SmallVector<Operation *> ops;
  for (Operation &op : body)
    ops.push_back(&op);
  for (Operation *op : ops) {
    OpBuilder at(op);
    // Integer constants from outside the body: float ones inside it.
    for (OpOperand &operand : op->getOpOperands()) {
      APInt value;
      if (isWideInt(operand.get().getType()) &&
          operand.get().getParentBlock() != &body &&
          matchPattern(operand.get(), m_ConstantInt(&value)))
        operand.set(arith::ConstantOp::create(
            at, loc,
            FloatAttr::get(element,
                           static_cast<double>(value.getSExtValue()))));
    }
    auto replace = [&](Value with) {
      op->getResult(0).replaceAllUsesWith(with);
      op->erase();
    };
    if (auto yield = dyn_cast<linalg::YieldOp>(op)) {
      for (OpOperand &operand : yield->getOpOperands())
        if (operand.get().getType().isInteger(1))
          operand.set(arith::UIToFPOp::create(at, loc, element, operand.get()));
      continue;
    }
    // Integer ops whose operands are (now) floats, or that still touch a
    // wide integer; i1-only ops stay.
    bool integerOp =
        isa<arith::CmpIOp, arith::AddIOp, arith::SubIOp, arith::MulIOp,
            arith::MaxSIOp, arith::MinSIOp, arith::ExtSIOp, arith::ExtUIOp,
            arith::TruncIOp, arith::SIToFPOp>(op) &&
        llvm::any_of(op->getOperandTypes(), [](Type t) {
          return isa<FloatType>(t) || isWideInt(t);
        });
    bool wide = integerOp ||
                llvm::any_of(op->getOperandTypes(), isWideInt) ||
                llvm::any_of(op->getResultTypes(), isWideInt);
    if (!wide)
      continue;
    Value x = op->getNumOperands() > 0 ? op->getOperand(0) : Value();
    Value y = op->getNumOperands() > 1 ? op->getOperand(1) : Value();
    if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
      auto attr = cast<IntegerAttr>(constant.getValue());
      replace(arith::ConstantOp::create(
          at, loc,
          FloatAttr::get(element,
                         static_cast<double>(attr.getValue().getSExtValue()))));
    } else if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
      replace(arith::CmpFOp::create(at, loc, *floatPredicate(cmp.getPredicate()),
                                    x, y));
    } else if (isa<arith::AddIOp>(op)) {
      replace(arith::AddFOp::create(at, loc, x, y));
    } else if (isa<arith::SubIOp>(op)) {
      replace(arith::SubFOp::create(at, loc, x, y));
    } else if (isa<arith::MulIOp>(op)) {
      replace(arith::MulFOp::create(at, loc, x, y));
    } else if (isa<arith::MaxSIOp>(op)) {
      replace(arith::MaximumFOp::create(at, loc, x, y));
    } else if (isa<arith::MinSIOp>(op)) {
      replace(arith::MinimumFOp::create(at, loc, x, y));
    } else if (isa<arith::ExtUIOp, arith::ExtSIOp>(op) &&
               x.getType().isInteger(1)) {
      if (isa<arith::ExtUIOp>(op))
        replace(arith::UIToFPOp::create(at, loc, element, x));
      else
        replace(arith::SIToFPOp::create(at, loc, element, x));
    } else if (isa<arith::ExtUIOp, arith::ExtSIOp, arith::TruncIOp>(op)) {
      replace(x); // the same value on the carrier
    } else if (isa<arith::SIToFPOp>(op)) {
      Type to = op->getResult(0).getType();
      if (to == element)
        replace(x);
      else if (to.getIntOrFloatBitWidth() > element.getIntOrFloatBitWidth())
        replace(arith::ExtFOp::create(at, loc, to, x));
      else
        replace(arith::TruncFOp::create(at, loc, to, x));
    } else if (auto select = dyn_cast<arith::SelectOp>(op)) {
      replace(arith::SelectOp::create(at, loc, select.getCondition(),
                                      select.getTrueValue(),
                                      select.getFalseValue()));
    }
  }
}

/// Reads every tensor input of a computing op at `element`, retypes its
/// init and result (to `element`) and its body.
void rewriteComputing(Operation *op, Type element) {
  auto linalgOp = cast<linalg::LinalgOp>(op);
  Block &body = op->getRegion(0).front();
  SmallVector<Type> originalArgTypes(body.getArgumentTypes());
  OpBuilder b(op);
  Location loc = op->getLoc();
  for (OpOperand *operand : linalgOp.getDpsInputOperands()) {
    auto type = dyn_cast<RankedTensorType>(operand->get().getType());
    if (!type || type.getElementType() == element)
      continue;
    operand->set(convertTensor(b, loc, operand->get(), element));
  }
  auto resultType =
      cast<RankedTensorType>(op->getResult(0).getType()).clone(element);
  OpOperand &init = *linalgOp.getDpsInitOperand(0);
  if (cast<RankedTensorType>(init.get().getType()).getElementType() != element)
    init.set(remakeInit(b, loc, init.get(), resultType));
  for (auto [arg, operand] :
       llvm::zip(body.getArguments(), op->getOperands()))
    if (isa<IntegerType>(arg.getType()) && isa<RankedTensorType>(operand.getType()))
      arg.setType(cast<RankedTensorType>(operand.getType()).getElementType());
  op->getResult(0).setType(resultType);
  rewriteBody(body, element, originalArgTypes);
}

/// A gather reading a carrier: integer indices from a carrier read through
/// `fptosi` (i1 ones as `!= 0`); a carrier table's extract retyped.
void rewriteGather(Operation *op, const llvm::DenseSet<Value> &carriers) {
  auto generic = cast<linalg::GenericOp>(op);
  Block &body = *generic.getBody();
  OpBuilder b(&body, body.begin());
  Location loc = op->getLoc();
  for (OpOperand *operand : generic.getDpsInputOperands()) {
    if (!carriers.contains(operand->get()))
      continue;
    BlockArgument arg = generic.getMatchingBlockArgument(operand);
    Type original = arg.getType();
    Type element =
        cast<RankedTensorType>(operand->get().getType()).getElementType();
    arg.setType(element);
    Value back;
    if (original.isInteger(1))
      back = arith::CmpFOp::create(
          b, loc, arith::CmpFPredicate::UNE, arg,
          arith::ConstantOp::create(b, loc, FloatAttr::get(element, 0.0)));
    else
      back = arith::FPToSIOp::create(b, loc, original, arg);
    arg.replaceAllUsesExcept(back, back.getDefiningOp());
  }
  tensor::ExtractOp extract = gatherExtract(op);
  if (carriers.contains(extract.getTensor())) {
    Type element = extract.getTensor().getType().getElementType();
    extract.getResult().setType(element);
    BlockArgument out = body.getArgument(body.getNumArguments() - 1);
    out.setType(element);
    OpOperand &init = *generic.getDpsInitOperand(0);
    auto resultType =
        cast<RankedTensorType>(op->getResult(0).getType()).clone(element);
    OpBuilder before(op);
    init.set(tensor::EmptyOp::create(before, loc, resultType.getShape(),
                                     element));
    op->getResult(0).setType(resultType);
  }
}

/// cumsum along `dimension` of a carrier: out[.., i, ..] = sum_j x[.., j,
/// ..] * (j <= i) (j < i when exclusive), in f64. Returns the sum.
Value rewriteScan(Operation *scan) {
  OpBuilder b(scan);
  Location loc = scan->getLoc();
  Value x = scan->getOperand(0);
  auto type = cast<RankedTensorType>(x.getType());
  Type f64 = b.getF64Type();
  int64_t dim = cast<IntegerAttr>(scan->getAttr("dimension")).getInt();
  auto inclusive = scan->getAttrOfType<BoolAttr>("inclusive");
  int64_t n = type.getDimSize(dim), rank = type.getRank();
  SmallVector<APFloat> iota;
  for (int64_t i = 0; i < n; ++i)
    iota.push_back(APFloat(static_cast<double>(i)));
  auto vectorType = RankedTensorType::get({n}, f64);
  Value positions = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(vectorType, iota));
  // The triangle T[j, i] = (j <= i): a comparison of two iotas.
  auto square = RankedTensorType::get({n, n}, f64);
  MLIRContext *ctx = b.getContext();
  AffineExpr j = getAffineDimExpr(0, ctx), i = getAffineDimExpr(1, ctx);
  Value triangle =
      linalg::GenericOp::create(
          b, loc, square, ValueRange{positions, positions},
          ValueRange{tensor::EmptyOp::create(b, loc, square.getShape(), f64)},
          ArrayRef<AffineMap>{AffineMap::get(2, 0, {j}, ctx),
                              AffineMap::get(2, 0, {i}, ctx),
                              AffineMap::get(2, 0, {j, i}, ctx)},
          SmallVector<utils::IteratorType>(2, utils::IteratorType::parallel),
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            Value holds = arith::CmpFOp::create(
                nb, nl,
                inclusive && !inclusive.getValue() ? arith::CmpFPredicate::OLT
                                                   : arith::CmpFPredicate::OLE,
                args[0], args[1]);
            Value bit = arith::UIToFPOp::create(nb, nl, f64, holds);
            linalg::YieldOp::create(nb, nl, bit);
          })
          .getResult(0);
  // Loops: the dims of x (d0..), then j (the reduced copy of `dim`).
  SmallVector<AffineExpr> xExprs, outExprs;
  for (int64_t d = 0; d < rank; ++d) {
    outExprs.push_back(getAffineDimExpr(d, ctx));
    xExprs.push_back(getAffineDimExpr(d == dim ? rank : d, ctx));
  }
  AffineMap xMap = AffineMap::get(rank + 1, 0, xExprs, ctx);
  AffineMap tMap = AffineMap::get(
      rank + 1, 0, {getAffineDimExpr(rank, ctx), getAffineDimExpr(dim, ctx)},
      ctx);
  AffineMap outMap = AffineMap::get(rank + 1, 0, outExprs, ctx);
  SmallVector<utils::IteratorType> iterators(rank + 1,
                                             utils::IteratorType::parallel);
  iterators[rank] = utils::IteratorType::reduction;
  Value zero = arith::ConstantOp::create(b, loc, FloatAttr::get(f64, 0.0));
  Value empty = tensor::EmptyOp::create(b, loc, type.getShape(), f64);
  Value init = linalg::FillOp::create(b, loc, zero, empty).getResult(0);
  Value sum =
      linalg::GenericOp::create(
          b, loc, type, ValueRange{x, triangle}, ValueRange{init},
          ArrayRef<AffineMap>{xMap, tMap, outMap}, iterators,
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            Value product = arith::MulFOp::create(nb, nl, args[0], args[1]);
            Value total = arith::AddFOp::create(nb, nl, args[2], product);
            linalg::YieldOp::create(nb, nl, total);
          })
          .getResult(0);
  scan->getResult(0).replaceAllUsesWith(sum);
  scan->erase();
  return sum;
}

} // namespace

void linalg_to_doppler::carryIntegersAsFloats(
    Operation *function, LinalgToDopplerCounters *counters) {
  Analysis analysis;
  if (!analysis.run(function))
    return;
  Type f64 = Float64Type::get(function->getContext());
  // Program order: every carrier an op reads is retyped before it.
  for (Operation *op : analysis.order) {
    if (isScan(op)) {
      countConverted(counters, op);
      analysis.carriers.insert(rewriteScan(op));
    } else if (isReshapeLike(op)) {
      auto type = cast<RankedTensorType>(op->getResult(0).getType());
      op->getResult(0).setType(type.clone(f64));
    } else if (gatherExtract(op)) {
      rewriteGather(op, analysis.carriers);
    } else {
      auto result = cast<RankedTensorType>(op->getResult(0).getType());
      Type element = isa<IntegerType>(result.getElementType())
                         ? f64
                         : result.getElementType();
      rewriteComputing(op, element);
    }
  }
}

//===----------------------------------------------------------------------===//
// Tensor-level conversions -> conversion einsums
//===----------------------------------------------------------------------===//

namespace {

/// A parallel generic yielding `sitofp` (from i32/i64), `extf` or `truncf`
/// of its one input, read and written at the same (identity) map: one
/// conversion einsum (identity join, another element type). The integers
/// convert exactly or fail where the einsum runs; floats round as the cast.
struct TensorConversionPattern : public OpRewritePattern<linalg::GenericOp> {
  TensorConversionPattern(MLIRContext *context,
                          LinalgToDopplerCounters *counters)
      : OpRewritePattern(context, /*benefit=*/2), counters(counters) {}

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getNumDpsInputs() != 1 || op->getNumResults() != 1 ||
        !op.hasPureTensorSemantics() ||
        op.getNumParallelLoops() != op.getNumLoops() ||
        !llvm::all_of(op.getIndexingMapsArray(),
                      [](AffineMap map) { return map.isIdentity(); }))
      return failure();
    Block &body = *op.getBody();
    if (!llvm::hasSingleElement(body.without_terminator()))
      return failure();
    Operation &cast = body.front();
    if (!isa<arith::SIToFPOp, arith::ExtFOp, arith::TruncFOp>(cast) ||
        cast.getOperand(0) != body.getArgument(0) ||
        body.getTerminator()->getOperand(0) != cast.getResult(0))
      return failure();
    Value input = op.getDpsInputOperand(0)->get();
    auto inType = dyn_cast<RankedTensorType>(input.getType());
    RankedTensorType outType = staticFloatTensor(op->getResult(0).getType());
    if (!inType || !inType.hasStaticShape() || !outType ||
        !(inType.getElementType().isInteger(32) ||
          inType.getElementType().isInteger(64) ||
          isa<FloatType>(inType.getElementType())) ||
        inType.getRank() > static_cast<int64_t>(kMaxLetters))
      return failure();
    std::string term(kLetters, inType.getRank());
    DopplerBuilder b(rewriter, op.getLoc(), counters);
    Value converted = b.einsum(term + "->" + term, JoinKind::Identity,
                               std::nullopt, std::nullopt, {input}, outType);
    countConverted(counters, op);
    rewriter.replaceOp(op, converted);
    return success();
  }

  LinalgToDopplerCounters *counters;
};

} // namespace

void linalg_to_doppler::populateConversionPatterns(
    RewritePatternSet &patterns, LinalgToDopplerCounters *counters) {
  patterns.add<TensorConversionPattern>(patterns.getContext(), counters);
}
