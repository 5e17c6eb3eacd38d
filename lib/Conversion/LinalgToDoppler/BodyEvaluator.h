//===- BodyEvaluator.h - The scalar evaluator of linalg bodies ------------===//
//
// Internal to lib/Conversion/LinalgToDoppler (ConstantFolding.cpp): runs the
// scalar body of a linalg op or a tm_tensor.scan at one point (arith, math,
// linalg.index, tensor.extract of constant tensors), integers wrapped to
// their width and floats rounded to their type after every op.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_LIB_CONVERSION_LINALGTODOPPLER_BODYEVALUATOR_H
#define DOPPLER_LIB_CONVERSION_LINALGTODOPPLER_BODYEVALUATOR_H

#include "ConstantEval.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

namespace mlir::doppler::linalg_to_doppler {

/// A scalar: a double for floats, an int64 (sign-extended) for integers.
struct Scalar {
  double f = 0;
  int64_t i = 0;
};

//===----------------------------------------------------------------------===//
// The scalar evaluator of a body (linalg, tm_tensor.scan)
//===----------------------------------------------------------------------===//

class BodyEvaluator {
public:
  /// Checks that every op of `block` is known and that the values it uses
  /// from outside are scalar constants or constant tensors (tensor.extract).
  /// With `stopAt` (an op of the body), the ops before it are evaluated and
  /// `run` gives the values of its operands instead of the yielded ones.
  std::string prepare(Block &block, int64_t limit,
                      Operation *stopAt = nullptr) {
    for (BlockArgument arg : block.getArguments())
      slotOf(arg);
    // The last op yields (a tm_tensor.yield is unregistered: not known to
    // be a terminator).
    for (Operation &op : block) {
      if (&op == stopAt || &op == &block.back())
        break;
      if (op.getNumResults() != 1 || op.getNumRegions() != 0)
        return "its body's '" + op.getName().getStringRef().str() +
               "' is not a single-result scalar op";
      if (!known(&op))
        return "its body's '" + op.getName().getStringRef().str() +
               "' is not one the constant evaluator knows";
      for (Value operand : op.getOperands())
        if (std::string why = external(operand, block, limit); !why.empty())
          return why;
      slotOf(op.getResult(0));
      ops.push_back(&op);
    }
    terminator = stopAt ? stopAt : &block.back();
    for (Value operand : terminator->getOperands()) {
      if (stopAt && isa<ShapedType>(operand.getType()))
        continue; // the table a stopping tensor.extract reads
      if (std::string why = external(operand, block, limit); !why.empty())
        return why;
    }
    return "";
  }

  /// Runs the body on its block arguments `args`; `loopIndex` answers
  /// linalg.index. Returns false on an index out of range (tensor.extract).
  bool run(ArrayRef<Scalar> args, ArrayRef<int64_t> loopIndex,
           SmallVectorImpl<Scalar> &results) {
    for (auto [i, arg] : llvm::enumerate(args))
      values[i] = arg;
    for (Operation *op : ops) {
      std::optional<Scalar> value = eval(op, loopIndex);
      if (!value)
        return false;
      values[slots[op->getResult(0)]] = *value;
    }
    results.clear();
    for (Value operand : terminator->getOperands())
      if (!isa<ShapedType>(operand.getType()))
        results.push_back(values[slots[operand]]);
    return true;
  }

private:
  unsigned slotOf(Value value) {
    auto [it, inserted] = slots.try_emplace(value, values.size());
    if (inserted)
      values.emplace_back();
    return it->second;
  }

  std::string external(Value value, Block &block, int64_t limit) {
    if (slots.count(value))
      return "";
    Operation *def = value.getDefiningOp();
    if (isa<RankedTensorType>(value.getType())) {
      std::optional<ConstTensor> t = readConstant(value, limit);
      if (!t)
        return "its body reads a tensor that is not a constant";
      tensors.try_emplace(value, std::move(*t));
      return "";
    }
    Attribute attr;
    if (!def || !matchPattern(value, m_Constant(&attr)))
      return "its body uses a value defined outside that is not a constant";
    Scalar s;
    if (auto f = dyn_cast<FloatAttr>(attr))
      s.f = f.getValueAsDouble();
    else if (auto i = dyn_cast<IntegerAttr>(attr))
      s.i = wrapTo(value.getType(), i.getValue().getSExtValue());
    else
      return "its body uses a constant that is not a number";
    values[slotOf(value)] = s;
    (void)block;
    return "";
  }

  static bool known(Operation *op) {
    return isa<arith::ConstantOp, linalg::IndexOp, tensor::ExtractOp,
               arith::AddIOp, arith::SubIOp, arith::MulIOp, arith::DivSIOp,
               arith::DivUIOp, arith::RemSIOp, arith::RemUIOp,
               arith::FloorDivSIOp, arith::CeilDivSIOp, arith::AndIOp,
               arith::OrIOp, arith::XOrIOp, arith::MaxSIOp, arith::MinSIOp,
               arith::MaxUIOp, arith::MinUIOp, arith::CmpIOp, arith::CmpFOp,
               arith::SelectOp, arith::IndexCastOp, arith::IndexCastUIOp,
               arith::ExtSIOp, arith::ExtUIOp, arith::TruncIOp,
               arith::SIToFPOp, arith::UIToFPOp, arith::FPToSIOp,
               arith::FPToUIOp, arith::ExtFOp, arith::TruncFOp, arith::AddFOp,
               arith::SubFOp, arith::MulFOp, arith::DivFOp, arith::RemFOp,
               arith::NegFOp, arith::MaximumFOp, arith::MinimumFOp,
               arith::MaxNumFOp, arith::MinNumFOp, math::ExpOp, math::LogOp,
               math::SqrtOp, math::RsqrtOp, math::TanhOp, math::SinOp,
               math::CosOp, math::ErfOp, math::AbsFOp, math::PowFOp,
               math::FPowIOp, math::FloorOp, math::CeilOp, math::AbsIOp,
               math::Exp2Op, math::Log2Op>(op);
  }

  Scalar in(Operation *op, unsigned i) { return values[slots[op->getOperand(i)]]; }

  static bool predicate(arith::CmpIPredicate p, int64_t a, int64_t b,
                        Type type) {
    uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
    unsigned width = isa<IndexType>(type) ? 64 : type.getIntOrFloatBitWidth();
    if (width < 64) {
      ua &= (uint64_t(1) << width) - 1;
      ub &= (uint64_t(1) << width) - 1;
    }
    switch (p) {
    case arith::CmpIPredicate::eq: return a == b;
    case arith::CmpIPredicate::ne: return a != b;
    case arith::CmpIPredicate::slt: return a < b;
    case arith::CmpIPredicate::sle: return a <= b;
    case arith::CmpIPredicate::sgt: return a > b;
    case arith::CmpIPredicate::sge: return a >= b;
    case arith::CmpIPredicate::ult: return ua < ub;
    case arith::CmpIPredicate::ule: return ua <= ub;
    case arith::CmpIPredicate::ugt: return ua > ub;
    case arith::CmpIPredicate::uge: return ua >= ub;
    }
    return false;
  }

  static bool predicate(arith::CmpFPredicate p, double a, double b) {
    bool unordered = std::isnan(a) || std::isnan(b);
    using P = arith::CmpFPredicate;
    switch (p) {
    case P::AlwaysFalse: return false;
    case P::AlwaysTrue: return true;
    case P::OEQ: return !unordered && a == b;
    case P::OGT: return !unordered && a > b;
    case P::OGE: return !unordered && a >= b;
    case P::OLT: return !unordered && a < b;
    case P::OLE: return !unordered && a <= b;
    case P::ONE: return !unordered && a != b;
    case P::ORD: return !unordered;
    case P::UEQ: return unordered || a == b;
    case P::UGT: return unordered || a > b;
    case P::UGE: return unordered || a >= b;
    case P::ULT: return unordered || a < b;
    case P::ULE: return unordered || a <= b;
    case P::UNE: return unordered || a != b;
    case P::UNO: return unordered;
    }
    return false;
  }

  static uint64_t unsignedOf(int64_t v, Type type) {
    unsigned width = isa<IndexType>(type) ? 64 : type.getIntOrFloatBitWidth();
    uint64_t u = static_cast<uint64_t>(v);
    return width < 64 ? (u & ((uint64_t(1) << width) - 1)) : u;
  }

  /// One op at one point. Integer results are wrapped to their width, float
  /// results rounded to their type. Over 120 lines: one TypeSwitch case per
  /// arith/math op, a table that reads best in one place.
  std::optional<Scalar> eval(Operation *op, ArrayRef<int64_t> loopIndex) {
    Type type = op->getResult(0).getType();
    Type operandType =
        op->getNumOperands() ? op->getOperand(0).getType() : type;
    Scalar r;
    auto a = [&] { return in(op, 0); };
    auto b = [&] { return in(op, 1); };
    auto f1 = [&](double (*fn)(double)) { r.f = fn(a().f); };
    bool ok = true;
    llvm::TypeSwitch<Operation *>(op)
        .Case([&](arith::ConstantOp c) {
          if (auto f = dyn_cast<FloatAttr>(c.getValue()))
            r.f = f.getValueAsDouble();
          else if (auto i = dyn_cast<IntegerAttr>(c.getValue()))
            r.i = i.getValue().getSExtValue();
          else
            ok = false;
        })
        .Case([&](linalg::IndexOp index) {
          r.i = loopIndex[index.getDim()];
        })
        .Case([&](tensor::ExtractOp extract) {
          const ConstTensor &t = tensors.find(extract.getTensor())->second;
          ArrayRef<int64_t> shape = t.type.getShape();
          int64_t position = 0;
          for (auto [d, index] : llvm::enumerate(extract.getIndices())) {
            int64_t i = values[slots[index]].i;
            if (i < 0 || i >= shape[d]) {
              ok = false;
              return;
            }
            position = position * shape[d] + i;
          }
          if (t.isFloat())
            r.f = t.floats[position];
          else
            r.i = t.ints[position];
        })
        .Case([&](arith::AddIOp) { r.i = a().i + b().i; })
        .Case([&](arith::SubIOp) { r.i = a().i - b().i; })
        .Case([&](arith::MulIOp) { r.i = a().i * b().i; })
        .Case<arith::DivSIOp, arith::RemSIOp, arith::FloorDivSIOp,
              arith::CeilDivSIOp>([&](Operation *) {
          int64_t x = a().i, y = b().i;
          if (y == 0) {
            ok = false;
            return;
          }
          int64_t q = x / y, m = x % y;
          if (isa<arith::RemSIOp>(op))
            r.i = m;
          else if (isa<arith::FloorDivSIOp>(op))
            r.i = (m != 0 && ((m < 0) != (y < 0))) ? q - 1 : q;
          else if (isa<arith::CeilDivSIOp>(op))
            r.i = (m != 0 && ((m < 0) == (y < 0))) ? q + 1 : q;
          else
            r.i = q;
        })
        .Case<arith::DivUIOp, arith::RemUIOp>([&](Operation *) {
          uint64_t x = unsignedOf(a().i, type), y = unsignedOf(b().i, type);
          if (y == 0) {
            ok = false;
            return;
          }
          r.i = static_cast<int64_t>(isa<arith::DivUIOp>(op) ? x / y : x % y);
        })
        .Case([&](arith::AndIOp) { r.i = a().i & b().i; })
        .Case([&](arith::OrIOp) { r.i = a().i | b().i; })
        .Case([&](arith::XOrIOp) { r.i = a().i ^ b().i; })
        .Case([&](arith::MaxSIOp) { r.i = std::max(a().i, b().i); })
        .Case([&](arith::MinSIOp) { r.i = std::min(a().i, b().i); })
        .Case([&](arith::MaxUIOp) {
          r.i = unsignedOf(a().i, type) >= unsignedOf(b().i, type) ? a().i
                                                                   : b().i;
        })
        .Case([&](arith::MinUIOp) {
          r.i = unsignedOf(a().i, type) <= unsignedOf(b().i, type) ? a().i
                                                                   : b().i;
        })
        .Case([&](math::AbsIOp) { r.i = a().i < 0 ? -a().i : a().i; })
        .Case([&](arith::CmpIOp cmp) {
          r.i = predicate(cmp.getPredicate(), a().i, b().i, operandType) ? -1
                                                                         : 0;
        })
        .Case([&](arith::CmpFOp cmp) {
          r.i = predicate(cmp.getPredicate(), a().f, b().f) ? -1 : 0;
        })
        .Case([&](arith::SelectOp) {
          r = in(op, 0).i ? in(op, 1) : in(op, 2);
        })
        .Case<arith::IndexCastOp, arith::ExtSIOp, arith::TruncIOp>(
            [&](Operation *) { r.i = a().i; })
        .Case<arith::IndexCastUIOp, arith::ExtUIOp>([&](Operation *) {
          r.i = static_cast<int64_t>(unsignedOf(a().i, operandType));
        })
        .Case([&](arith::SIToFPOp) { r.f = static_cast<double>(a().i); })
        .Case([&](arith::UIToFPOp) {
          r.f = static_cast<double>(unsignedOf(a().i, operandType));
        })
        .Case<arith::FPToSIOp, arith::FPToUIOp>([&](Operation *) {
          double x = std::trunc(a().f);
          if (!std::isfinite(x) || std::fabs(x) >= 9.2e18) {
            ok = false;
            return;
          }
          r.i = static_cast<int64_t>(x);
        })
        .Case<arith::ExtFOp, arith::TruncFOp>([&](Operation *) { r.f = a().f; })
        .Case([&](arith::AddFOp) { r.f = a().f + b().f; })
        .Case([&](arith::SubFOp) { r.f = a().f - b().f; })
        .Case([&](arith::MulFOp) { r.f = a().f * b().f; })
        .Case([&](arith::DivFOp) { r.f = a().f / b().f; })
        .Case([&](arith::RemFOp) { r.f = std::fmod(a().f, b().f); })
        .Case([&](arith::NegFOp) { r.f = -a().f; })
        .Case([&](arith::MaximumFOp) {
          r.f = (std::isnan(a().f) || std::isnan(b().f))
                    ? std::nan("")
                    : std::max(a().f, b().f);
        })
        .Case([&](arith::MinimumFOp) {
          r.f = (std::isnan(a().f) || std::isnan(b().f))
                    ? std::nan("")
                    : std::min(a().f, b().f);
        })
        .Case([&](arith::MaxNumFOp) { r.f = std::fmax(a().f, b().f); })
        .Case([&](arith::MinNumFOp) { r.f = std::fmin(a().f, b().f); })
        .Case([&](math::ExpOp) { f1(std::exp); })
        .Case([&](math::Exp2Op) { f1(std::exp2); })
        .Case([&](math::LogOp) { f1(std::log); })
        .Case([&](math::Log2Op) { f1(std::log2); })
        .Case([&](math::SqrtOp) { f1(std::sqrt); })
        .Case([&](math::RsqrtOp) { r.f = 1.0 / std::sqrt(a().f); })
        .Case([&](math::TanhOp) { f1(std::tanh); })
        .Case([&](math::SinOp) { f1(std::sin); })
        .Case([&](math::CosOp) { f1(std::cos); })
        .Case([&](math::ErfOp) { f1(std::erf); })
        .Case([&](math::AbsFOp) { f1(std::fabs); })
        .Case([&](math::FloorOp) { f1(std::floor); })
        .Case([&](math::CeilOp) { f1(std::ceil); })
        .Case([&](math::PowFOp) { r.f = std::pow(a().f, b().f); })
        .Case([&](math::FPowIOp) {
          r.f = std::pow(a().f, static_cast<double>(b().i));
        })
        .Default([&](Operation *) { ok = false; });
    if (!ok)
      return std::nullopt;
    if (isa<FloatType>(type))
      r.f = roundTo(type, r.f);
    else
      r.i = wrapTo(type, r.i);
    return r;
  }

  llvm::DenseMap<Value, unsigned> slots;
  std::vector<Scalar> values;
  SmallVector<Operation *> ops;
  Operation *terminator = nullptr;
  llvm::DenseMap<Value, ConstTensor> tensors;
};

} // namespace mlir::doppler::linalg_to_doppler

#endif // DOPPLER_LIB_CONVERSION_LINALGTODOPPLER_BODYEVALUATOR_H
