//===- ScalarBodies.cpp - Scalar ops of linalg bodies as doppler joins ---===//

#include "ScalarBodies.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::doppler;
using namespace mlir::doppler::linalg_to_doppler;

//===----------------------------------------------------------------------===//
// Scalar ops of a body
//===----------------------------------------------------------------------===//

/// The join of a one-operand body op, if it has one.
std::optional<JoinKind> linalg_to_doppler::unaryJoin(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::optional<JoinKind>>(op)
      .Case<arith::NegFOp>([](auto) { return JoinKind::Neg; })
      .Case<math::ExpOp>([](auto) { return JoinKind::Exp; })
      .Case<math::LogOp>([](auto) { return JoinKind::Log; })
      .Case<math::SqrtOp>([](auto) { return JoinKind::Sqrt; })
      .Case<math::RsqrtOp>([](auto) { return JoinKind::Rsqrt; })
      .Case<math::TanhOp>([](auto) { return JoinKind::Tanh; })
      .Case<math::ErfOp>([](auto) { return JoinKind::Erf; })
      .Case<math::AbsFOp>([](auto) { return JoinKind::Abs; })
      .Default([](Operation *) { return std::nullopt; });
}

/// The join of a two-operand body op, if it has one.
std::optional<JoinKind> linalg_to_doppler::binaryJoin(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::optional<JoinKind>>(op)
      .Case<arith::AddFOp>([](auto) { return JoinKind::Add; })
      .Case<arith::SubFOp>([](auto) { return JoinKind::Sub; })
      .Case<arith::MulFOp>([](auto) { return JoinKind::Mul; })
      .Case<arith::DivFOp>([](auto) { return JoinKind::Div; })
      .Case<arith::MaximumFOp, arith::MaxNumFOp>(
          [](auto) { return JoinKind::Max; })
      .Case<arith::MinimumFOp, arith::MinNumFOp>(
          [](auto) { return JoinKind::Min; })
      .Case<math::PowFOp>([](auto) { return JoinKind::Pow; })
      // Comparisons (0/1; the predicates whose NaN behaviour the joins
      // share) and boolean logic on i1, exact on 0/1.
      .Case([](arith::CmpFOp cmp) -> std::optional<JoinKind> {
        switch (cmp.getPredicate()) {
        case arith::CmpFPredicate::OEQ: return JoinKind::Eq;
        case arith::CmpFPredicate::UNE: return JoinKind::Ne;
        case arith::CmpFPredicate::OLT: return JoinKind::Lt;
        case arith::CmpFPredicate::OLE: return JoinKind::Le;
        case arith::CmpFPredicate::OGT: return JoinKind::Gt;
        case arith::CmpFPredicate::OGE: return JoinKind::Ge;
        default: return std::nullopt;
        }
      })
      .Case<arith::AndIOp, arith::OrIOp, arith::XOrIOp>(
          [](Operation *logic) -> std::optional<JoinKind> {
            if (!logic->getResult(0).getType().isInteger(1))
              return std::nullopt;
            return isa<arith::AndIOp>(logic)  ? JoinKind::Mul
                   : isa<arith::OrIOp>(logic) ? JoinKind::Max
                                              : JoinKind::Ne;
          })
      .Default([](Operation *) { return std::nullopt; });
}

/// `select(cmpf(pred, a, b), a, b)` (or with the arms swapped) as max or
/// min of (a, b).
std::optional<std::pair<JoinKind, std::pair<Value, Value>>>
linalg_to_doppler::selectAsMaxMin(Operation *op) {
  auto select = dyn_cast<arith::SelectOp>(op);
  if (!select)
    return std::nullopt;
  auto cmp = select.getCondition().getDefiningOp<arith::CmpFOp>();
  if (!cmp)
    return std::nullopt;
  Value a = cmp.getLhs(), b = cmp.getRhs();
  bool greater;
  switch (cmp.getPredicate()) {
  case arith::CmpFPredicate::OGT: case arith::CmpFPredicate::OGE:
  case arith::CmpFPredicate::UGT: case arith::CmpFPredicate::UGE:
    greater = true;
    break;
  case arith::CmpFPredicate::OLT: case arith::CmpFPredicate::OLE:
  case arith::CmpFPredicate::ULT: case arith::CmpFPredicate::ULE:
    greater = false;
    break;
  default:
    return std::nullopt;
  }
  Value t = select.getTrueValue(), f = select.getFalseValue();
  if (t == a && f == b) // a > b ? a : b
    return std::make_pair(greater ? JoinKind::Max : JoinKind::Min,
                          std::make_pair(a, b));
  if (t == b && f == a) // a > b ? b : a
    return std::make_pair(greater ? JoinKind::Min : JoinKind::Max,
                          std::make_pair(a, b));
  return std::nullopt;
}

/// The aggregation a reduction body's combiner computes.
std::optional<AggKind> linalg_to_doppler::joinAsAggregation(JoinKind join) {
  switch (join) {
  case JoinKind::Add: return AggKind::Add;
  case JoinKind::Mul: return AggKind::Mul;
  case JoinKind::Max: return AggKind::Max;
  case JoinKind::Min: return AggKind::Min;
  default: return std::nullopt;
  }
}

//===----------------------------------------------------------------------===//
// Recognising one-input scalar functions (sigmoid, silu, gelu, relu, abs)
//===----------------------------------------------------------------------===//

namespace {

/// Evaluates the body value `v` as a function of the block argument `x`
/// set to `at`, in double. Fails on anything it does not know.
std::optional<double> evaluate(Value v, Value x, double at,
                               llvm::DenseMap<Value, double> &memo) {
  if (v == x)
    return at;
  if (auto it = memo.find(v); it != memo.end())
    return it->second;
  if (std::optional<double> c = scalarConstant(v))
    return *c;
  APInt integer;
  if (matchPattern(v, m_ConstantInt(&integer))) // fpowi's exponent
    return static_cast<double>(integer.getSExtValue());
  Operation *op = v.getDefiningOp();
  if (!op || op->getNumResults() != 1)
    return std::nullopt;
  SmallVector<double, 3> args;
  for (Value operand : op->getOperands()) {
    std::optional<double> a = evaluate(operand, x, at, memo);
    if (!a)
      return std::nullopt;
    args.push_back(*a);
  }
  std::optional<double> result;
  if (std::optional<JoinKind> join = unaryJoin(op); join && args.size() == 1)
    result = ::doppler::applyJoin(toSupport(*join), args[0], 0, 0);
  else if (std::optional<JoinKind> join = binaryJoin(op);
           join && args.size() == 2)
    result = ::doppler::applyJoin(toSupport(*join), args[0], args[1], 0);
  else if (isa<math::FPowIOp>(op) && args.size() == 2)
    result = std::pow(args[0], args[1]);
  else if (isa<arith::ExtFOp, arith::TruncFOp>(op) && args.size() == 1)
    result = args[0]; // computed through (see castThrough)
  else if (isa<math::ErfOp>(op) && args.size() == 1)
    result = std::erf(args[0]);
  else if (isa<arith::SelectOp>(op) && args.size() == 3)
    result = args[0] != 0 ? args[1] : args[2];
  else if (auto cmp = dyn_cast<arith::CmpFOp>(op); cmp && args.size() == 2) {
    double a = args[0], b = args[1];
    switch (cmp.getPredicate()) {
    case arith::CmpFPredicate::OGT: case arith::CmpFPredicate::UGT:
      result = a > b; break;
    case arith::CmpFPredicate::OGE: case arith::CmpFPredicate::UGE:
      result = a >= b; break;
    case arith::CmpFPredicate::OLT: case arith::CmpFPredicate::ULT:
      result = a < b; break;
    case arith::CmpFPredicate::OLE: case arith::CmpFPredicate::ULE:
      result = a <= b; break;
    case arith::CmpFPredicate::OEQ: case arith::CmpFPredicate::UEQ:
      result = a == b; break;
    case arith::CmpFPredicate::ONE: case arith::CmpFPredicate::UNE:
      result = a != b; break;
    default: return std::nullopt;
    }
  }
  if (result)
    memo[v] = *result;
  return result;
}

/// The erf form of gelu, 0.5 x (1 + erf(x / sqrt 2)).
double erfGelu(double x) { return 0.5 * x * (1.0 + std::erf(x * M_SQRT1_2)); }

} // namespace

/// If the body value `v` is computed by at least two ops from one block
/// argument and constants only, and equals sigmoid, silu, gelu, relu or abs
/// of it (checked at points from -100 to 100, to 1e-6 relative), that join
/// and argument.
std::optional<std::pair<JoinKind, Value>>
linalg_to_doppler::recogniseUnaryFunction(
    Value v, Block *body, const LinalgToDopplerOptions &options) {
  // The ops of the expression and its block arguments.
  SmallVector<Value> stack{v};
  llvm::DenseSet<Value> seen;
  Value argument;
  unsigned ops = 0;
  while (!stack.empty()) {
    Value u = stack.pop_back_val();
    if (!seen.insert(u).second)
      continue;
    if (auto arg = dyn_cast<BlockArgument>(u)) {
      if (arg.getOwner() != body || (argument && argument != u))
        return std::nullopt;
      argument = u;
      continue;
    }
    APInt integer;
    if (scalarConstant(u) || matchPattern(u, m_ConstantInt(&integer)))
      continue;
    Operation *op = u.getDefiningOp();
    if (!op || op->getBlock() != body || ++ops > 32)
      return std::nullopt;
    llvm::append_range(stack, op->getOperands());
  }
  if (!argument || ops < 2)
    return std::nullopt;
  static constexpr double kPoints[] = {-100, -7.5, -3, -1.25, -0.5, -0.125,
                                       0.0625, 0.375, 0.875, 1.5, 2.75, 6,
                                       100};
  auto matches = [&](auto reference) {
    for (double at : kPoints) {
      llvm::DenseMap<Value, double> memo;
      std::optional<double> got = evaluate(v, argument, at, memo);
      double want = reference(at);
      if (!got || !(std::fabs(*got - want) <=
                    1e-6 * std::max(1.0, std::fabs(want))))
        return false;
    }
    return true;
  };
  for (JoinKind join : {JoinKind::Sigmoid, JoinKind::Silu, JoinKind::Gelu,
                        JoinKind::Relu, JoinKind::Abs})
    if (matches([join](double at) {
          return ::doppler::applyJoin(toSupport(join), at, 0, 0);
        }))
      return std::make_pair(join, argument);
  if (options.erfGeluAsTanh && matches(erfGelu))
    return std::make_pair(JoinKind::Gelu, argument);
  return std::nullopt;
}

bool linalg_to_doppler::isPowerOfTwo(double c) {
  int exponent;
  return c != 0 && std::isfinite(c) &&
         std::fabs(std::frexp(c, &exponent)) == 0.5;
}

// Float casts inside a body. The op's tensors all have its element type E
// (checked before the body is compiled), so a computed value enters the
// body at E: `arith.extf` from E makes a wider copy, and `arith.truncf` to
// E rounds a wider value back. Both are computed through, i.e. the einsums
// compute at E (what a wider intermediate would have rounded at the end is
// rounded at each step instead). A cast to a type narrower than E (a
// deliberate rounding) is not: the op is left. Casts of constants are
// folded by scalarConstant.
Value linalg_to_doppler::castThrough(Operation *op, Type elementType) {
  if (auto ext = dyn_cast<arith::ExtFOp>(op);
      ext && ext.getIn().getType() == elementType)
    return ext.getIn();
  if (auto trunc = dyn_cast<arith::TruncFOp>(op);
      trunc && trunc.getType() == elementType)
    return trunc.getIn();
  return nullptr;
}
