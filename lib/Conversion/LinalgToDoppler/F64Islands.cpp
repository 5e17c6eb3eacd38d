//===- F64Islands.cpp - f32 -> f64 -> f32 computations done in f32 --------===//
//
// torch-mlir lowers `aten.var_mean` (LayerNorm's decomposition) in f64: an
// f32 -> f64 cast of the input (a linalg.generic of arith.extf), f64
// reductions and elementwise ops, and an f64 -> f32 cast of the variance.
// A doppler op keeps one element type and the dialect has no cast, so such
// an *island* (the ops reached from f32 -> f64 casts through f64 tensors,
// every f64 tensor leaving it through an f64 -> f32 cast) is computed in
// f32: its ops are retyped, the casts at its borders dropped. PyTorch's
// eager LayerNorm computes the same statistics in f32 (with f32
// accumulation); the zoo's LayerNorms differ from torch by at most 2e-7
// relative this way (docs/zoo.md). An f64 tensor that leaves otherwise (a
// function result, an op that is not linalg) keeps its island in f64.
//
//===----------------------------------------------------------------------===//

#include "Builders.h"
#include "Prepare.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::doppler;
using namespace mlir::doppler::linalg_to_doppler;

namespace {

bool isF64Tensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getElementType().isF64();
}

Type toF32(Type type) {
  Builder b(type.getContext());
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    return tensor.getElementType().isF64() ? tensor.clone(b.getF32Type())
                                           : type;
  return type.isF64() ? b.getF32Type() : type;
}

/// A parallel generic whose body only casts its one input from `from` to
/// `to` element type (extf or truncf).
template <typename CastOp>
bool isTensorCast(Operation *op, bool fromF32) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInputs() != 1 ||
      generic->getNumResults() != 1 ||
      generic.getNumParallelLoops() != generic.getNumLoops())
    return false;
  Block &body = generic.getRegion().front();
  if (!llvm::hasSingleElement(body.without_terminator()))
    return false;
  auto cast = dyn_cast<CastOp>(&body.front());
  if (!cast || cast.getIn() != body.getArgument(0) ||
      body.getTerminator()->getOperand(0) != cast.getResult())
    return false;
  Type in = cast.getIn().getType(), out = cast.getType();
  return fromF32 ? (in.isF32() && out.isF64()) : (in.isF64() && out.isF32());
}

bool isWidening(Operation *op) {
  return isTensorCast<arith::ExtFOp>(op, true);
}
bool isNarrowing(Operation *op) {
  return isTensorCast<arith::TruncFOp>(op, false);
}

/// Whether an op may be retyped in place: linalg ops (their bodies are
/// arith/math on the element type) and reshapes.
bool retypable(Operation *op) {
  return isa<linalg::LinalgOp, tensor::ExpandShapeOp, tensor::CollapseShapeOp>(
      op);
}

/// An f64 value an island op reads that is not made inside the island: a
/// tensor.empty, a constant, a fill of a constant: remade in f32.
bool isF64Source(Value value) {
  Operation *def = value.getDefiningOp();
  if (!def)
    return false;
  if (isa<tensor::EmptyOp>(def))
    return true;
  if (matchPattern(value, m_Constant()))
    return true;
  if (auto fill = dyn_cast<linalg::FillOp>(def))
    return matchPattern(fill.getInputs()[0], m_Constant());
  return false;
}

/// The island grown from the widening cast `start`: its ops, the widening
/// and narrowing casts at its borders; false if an f64 value escapes.
bool growIsland(Operation *start, llvm::SetVector<Operation *> &ops,
                llvm::SetVector<Operation *> &widen,
                llvm::SetVector<Operation *> &narrow) {
  SmallVector<Operation *> work{start};
  widen.insert(start);
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    // Every f64 operand of an island op comes from the island or a source.
    if (!widen.contains(op)) {
      for (Value operand : op->getOperands()) {
        if (!isF64Tensor(operand.getType()) && !operand.getType().isF64())
          continue;
        Operation *def = operand.getDefiningOp();
        if (def && (ops.contains(def) || widen.contains(def)))
          continue;
        if (isF64Source(operand) || !isF64Tensor(operand.getType()))
          continue;
        if (def && isWidening(def)) {
          if (widen.insert(def))
            work.push_back(def);
          continue;
        }
        if (def && retypable(def) && ops.insert(def)) {
          work.push_back(def);
          continue;
        }
        if (def && ops.contains(def))
          continue;
        return false;
      }
    }
    for (Value result : op->getResults()) {
      if (!isF64Tensor(result.getType()))
        return false; // an island op makes only f64 tensors
      for (Operation *user : result.getUsers()) {
        if (ops.contains(user) || narrow.contains(user))
          continue;
        if (isNarrowing(user)) {
          narrow.insert(user);
          continue;
        }
        if (!retypable(user))
          return false;
        ops.insert(user);
        work.push_back(user);
      }
    }
  }
  return !narrow.empty();
}

/// An f32 copy of the f64 source `value`, made before `before`.
Value remakeInF32(Value value, Operation *before) {
  OpBuilder b(before);
  Location loc = value.getLoc();
  Operation *def = value.getDefiningOp();
  auto type = cast<RankedTensorType>(toF32(value.getType()));
  if (isa<tensor::EmptyOp>(def))
    return tensor::EmptyOp::create(b, loc, type.getShape(),
                                   type.getElementType());
  if (auto fill = dyn_cast<linalg::FillOp>(def)) {
    FloatAttr attr;
    matchPattern(fill.getInputs()[0], m_Constant(&attr));
    Value scalar = arith::ConstantOp::create(
        b, loc, b.getF32FloatAttr(static_cast<float>(attr.getValueAsDouble())));
    Value empty = tensor::EmptyOp::create(b, loc, type.getShape(),
                                          type.getElementType());
    return linalg::FillOp::create(b, loc, scalar, empty).getResult(0);
  }
  DenseElementsAttr dense;
  matchPattern(value, m_Constant(&dense));
  SmallVector<APFloat> values;
  for (APFloat v : dense.getValues<APFloat>()) {
    bool losesInfo = false;
    v.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &losesInfo);
    values.push_back(v);
  }
  return arith::ConstantOp::create(b, loc, DenseElementsAttr::get(type, values));
}

/// Retypes the scalar body of a linalg op from f64 to f32: block arguments,
/// results, constants; casts between f32 and f64 become no-ops; f64 scalar
/// constants from outside are remade inside.
void retypeBody(Block &body) {
  for (BlockArgument arg : body.getArguments())
    arg.setType(toF32(arg.getType()));
  SmallVector<Operation *> ops;
  for (Operation &op : body)
    ops.push_back(&op);
  for (Operation *op : ops) {
    for (OpOperand &operand : op->getOpOperands()) {
      Value value = operand.get();
      FloatAttr attr;
      if (value.getType().isF64() && value.getParentBlock() != &body &&
          matchPattern(value, m_Constant(&attr))) {
        OpBuilder b(op);
        operand.set(arith::ConstantOp::create(
            b, op->getLoc(),
            b.getF32FloatAttr(static_cast<float>(attr.getValueAsDouble()))));
      }
    }
    if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
      if (auto attr = dyn_cast<FloatAttr>(constant.getValue());
          attr && attr.getType().isF64()) {
        OpBuilder b(op);
        Value f32 = arith::ConstantOp::create(
            b, op->getLoc(),
            b.getF32FloatAttr(static_cast<float>(attr.getValueAsDouble())));
        constant.getResult().replaceAllUsesWith(f32);
        constant->erase();
      }
      continue;
    }
    if (isa<arith::ExtFOp, arith::TruncFOp>(op) &&
        toF32(op->getOperand(0).getType()) == toF32(op->getResult(0).getType())) {
      op->getResult(0).replaceAllUsesWith(op->getOperand(0));
      op->erase();
      continue;
    }
    for (Value result : op->getResults())
      result.setType(toF32(result.getType()));
  }
}

void retypeIsland(const llvm::SetVector<Operation *> &ops,
                  const llvm::SetVector<Operation *> &widen,
                  const llvm::SetVector<Operation *> &narrow) {
  for (Operation *cast : widen)
    cast->getResult(0).replaceAllUsesWith(cast->getOperand(0));
  for (Operation *op : ops) {
    for (OpOperand &operand : op->getOpOperands()) {
      Value value = operand.get();
      Operation *def = value.getDefiningOp();
      if (isF64Tensor(value.getType()) && !(def && ops.contains(def)) &&
          isF64Source(value))
        operand.set(remakeInF32(value, op));
    }
    for (Value result : op->getResults())
      result.setType(toF32(result.getType()));
    for (Region &region : op->getRegions())
      for (Block &block : region)
        retypeBody(block);
  }
  for (Operation *cast : narrow) {
    cast->getResult(0).replaceAllUsesWith(cast->getOperand(0));
    cast->erase();
  }
  for (Operation *cast : widen)
    cast->erase();
}

} // namespace

void linalg_to_doppler::foldF64Islands(Operation *function,
                                       LinalgToDopplerCounters *counters) {
  SmallVector<Operation *> starts;
  function->walk([&](Operation *op) {
    if (isWidening(op))
      starts.push_back(op);
  });
  llvm::DenseSet<Operation *> done;
  for (Operation *start : starts) {
    if (done.contains(start))
      continue;
    llvm::SetVector<Operation *> ops, widen, narrow;
    bool ok = growIsland(start, ops, widen, narrow);
    for (Operation *op : widen)
      done.insert(op);
    if (!ok)
      continue;
    for (Operation *op : llvm::concat<Operation *const>(widen.getArrayRef(),
                                                         narrow.getArrayRef()))
      countConverted(counters, op);
    retypeIsland(ops, widen, narrow);
  }
}
