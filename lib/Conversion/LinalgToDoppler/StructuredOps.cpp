//===- StructuredOps.cpp - linalg structured ops to doppler einsums -------===//
//
// One pattern for every op of the LinalgOp interface (generic, the named
// contractions, elementwise ops, transpose, broadcast, copy, fill, reduce,
// map): the indexing maps give each loop an index letter, and the scalar
// body is compiled into a chain of einsums whose last one writes the
// output's term and aggregates the reduction loops. Analysis and emission
// are separate, so that a failed match changes nothing and the reason it
// failed can be reported for ops left over.
//
//===----------------------------------------------------------------------===//

#include "Builders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::doppler;
using namespace mlir::doppler::linalg_to_doppler;

namespace {

//===----------------------------------------------------------------------===//
// Scalar ops of a body
//===----------------------------------------------------------------------===//

/// The join of a one-operand body op, if it has one.
std::optional<JoinKind> unaryJoin(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::optional<JoinKind>>(op)
      .Case<arith::NegFOp>([](auto) { return JoinKind::Neg; })
      .Case<math::ExpOp>([](auto) { return JoinKind::Exp; })
      .Case<math::LogOp>([](auto) { return JoinKind::Log; })
      .Case<math::SqrtOp>([](auto) { return JoinKind::Sqrt; })
      .Case<math::RsqrtOp>([](auto) { return JoinKind::Rsqrt; })
      .Case<math::TanhOp>([](auto) { return JoinKind::Tanh; })
      .Case<math::AbsFOp>([](auto) { return JoinKind::Abs; })
      .Default([](Operation *) { return std::nullopt; });
}

/// The join of a two-operand body op, if it has one.
std::optional<JoinKind> binaryJoin(Operation *op) {
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
      .Default([](Operation *) { return std::nullopt; });
}

/// `select(cmpf(pred, a, b), a, b)` (or with the arms swapped) as max or
/// min of (a, b).
std::optional<std::pair<JoinKind, std::pair<Value, Value>>>
selectAsMaxMin(Operation *op) {
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
std::optional<AggKind> joinAsAggregation(JoinKind join) {
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

/// If the body value `v` is computed by at least two ops from one block
/// argument and constants only, and equals sigmoid, silu, gelu, relu or abs
/// of it (checked at points from -100 to 100, to 1e-6 relative), that join
/// and argument.
std::optional<std::pair<JoinKind, Value>>
recogniseUnaryFunction(Value v, Block *body,
                       const LinalgToDopplerOptions &options) {
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

bool isPowerOfTwo(double c) {
  int exponent;
  return c != 0 && std::isfinite(c) &&
         std::fabs(std::frexp(c, &exponent)) == 0.5;
}

//===----------------------------------------------------------------------===//
// The plan: a graph of nodes, built without touching the IR
//===----------------------------------------------------------------------===//

struct Node {
  enum Kind { Leaf, Constant, Join } kind;
  std::string term;  ///< the node's index letters
  double constant = 0;
  // Leaf: the operand, and its term with unit letters (constant-0 map
  // results) still in; they are dropped by one einsum.
  Value operand;
  std::string rawTerm;
  // Join: the einsum that makes it from other nodes.
  JoinKind join = JoinKind::Identity;
  std::optional<double> scalar;
  SmallVector<int, 2> operands;
  Value materialised; ///< set once emitted
};

struct Plan {
  std::vector<Node> nodes;
  int root = -1;
  std::string output;            ///< the output's term
  std::optional<AggKind> agg;    ///< set when the op reduces
  bool accumulate = false;       ///< combine the init with the result
  Value init;
  RankedTensorType resultType;
  llvm::DenseMap<char, int64_t> extents;
};

class Analysis {
public:
  Analysis(linalg::LinalgOp op, const LinalgToDopplerOptions &options)
      : op(op), options(options) {}

  /// Builds `plan`, or says why not in `why`.
  LogicalResult run(Plan &plan, std::string &why);

private:
  LogicalResult fail(const Twine &message) {
    why = message.str();
    return failure();
  }
  FailureOr<int> compile(Value v);
  FailureOr<int> leafFor(OpOperand *operand);
  int add(Node node) {
    plan->nodes.push_back(std::move(node));
    return static_cast<int>(plan->nodes.size()) - 1;
  }
  int constant(double value) {
    Node node{Node::Constant, ""};
    node.constant = value;
    return add(std::move(node));
  }
  FailureOr<int> unary(JoinKind join, int x,
                       std::optional<double> scalar = std::nullopt);
  FailureOr<int> binary(JoinKind join, int a, int b);
  std::string unionTerm(const std::string &a, const std::string &b) const;

  linalg::LinalgOp op;
  const LinalgToDopplerOptions &options;
  Plan *plan = nullptr;
  std::string why;
  Block *body = nullptr;
  BlockArgument outArgument;
  bool outAllowed = false;
  llvm::DenseMap<Value, int> memo;
  std::string loopLetters;
};

std::string Analysis::unionTerm(const std::string &a,
                                const std::string &b) const {
  std::string term;
  for (char letter : loopLetters)
    if (a.find(letter) != std::string::npos ||
        b.find(letter) != std::string::npos)
      term += letter;
  return term;
}

FailureOr<int> Analysis::leafFor(OpOperand *operand) {
  Value value = operand->get();
  if (!isa<ShapedType>(value.getType())) {
    if (std::optional<double> c = scalarConstant(value))
      return constant(*c);
    return fail("scalar operand " + Twine(operand->getOperandNumber()) +
                " is not a constant");
  }
  AffineMap map = op.getMatchingIndexingMap(operand);
  Node node{Node::Leaf, ""};
  node.operand = value;
  unsigned nextUnit = op.getNumLoops();
  for (auto [d, expr] : llvm::enumerate(map.getResults())) {
    if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
      node.term += kLetters[dim.getPosition()];
      node.rawTerm += kLetters[dim.getPosition()];
      continue;
    }
    // A constant 0 on a unit dim (torch-mlir's broadcast of size-1 dims).
    if (nextUnit >= kMaxLetters)
      return fail("needs more than " + Twine(kMaxLetters) + " indices");
    node.rawTerm += kLetters[nextUnit++];
  }
  return add(std::move(node));
}

FailureOr<int> Analysis::unary(JoinKind join, int x,
                               std::optional<double> scalar) {
  if (plan->nodes[x].kind == Node::Constant)
    return fail("computes with constants only");
  Node node{Node::Join, plan->nodes[x].term};
  node.join = join;
  node.scalar = scalar;
  node.operands = {x};
  return add(std::move(node));
}

FailureOr<int> Analysis::binary(JoinKind join, int a, int b) {
  const Node &na = plan->nodes[a], &nb = plan->nodes[b];
  bool ca = na.kind == Node::Constant, cb = nb.kind == Node::Constant;
  if (ca && cb)
    return fail("computes with constants only");
  if (ca || cb) {
    double c = ca ? na.constant : nb.constant;
    int x = ca ? b : a;
    switch (join) {
    case JoinKind::Add:
      return unary(JoinKind::Shift, x, c);
    case JoinKind::Sub:
      if (cb)
        return unary(JoinKind::Shift, x, -c);
      if (c == 0)
        return unary(JoinKind::Neg, x);
      {
        FailureOr<int> negated = unary(JoinKind::Neg, x);
        if (failed(negated))
          return failure();
        return unary(JoinKind::Shift, *negated, c);
      }
    case JoinKind::Mul:
      if (c == 1)
        return x;
      if (c == -1)
        return unary(JoinKind::Neg, x);
      return unary(JoinKind::Scale, x, c);
    case JoinKind::Div:
      if (cb && isPowerOfTwo(c)) // x / c == x * (1/c) exactly
        return unary(JoinKind::Scale, x, 1.0 / c);
      if (ca && c == 1)
        return unary(JoinKind::Reciprocal, x);
      break;
    case JoinKind::Max:
      if (c == 0)
        return unary(JoinKind::Relu, x);
      break;
    case JoinKind::Pow:
      if (cb && c == 1)
        return x;
      if (cb && c == 2)
        return unary(JoinKind::Square, x);
      if (cb && c == 0.5)
        return unary(JoinKind::Sqrt, x);
      if (cb && c == -0.5)
        return unary(JoinKind::Rsqrt, x);
      if (cb && c == -1)
        return unary(JoinKind::Reciprocal, x);
      break;
    default:
      break;
    }
    // Otherwise the constant is a rank-0 doppler.fill operand.
  } else if (a == b && join == JoinKind::Mul) {
    return unary(JoinKind::Square, a);
  }
  Node node{Node::Join, unionTerm(na.term, nb.term)};
  node.join = join;
  node.operands = {a, b};
  return add(std::move(node));
}

FailureOr<int> Analysis::compile(Value v) {
  if (auto it = memo.find(v); it != memo.end())
    return it->second;
  FailureOr<int> result = [&]() -> FailureOr<int> {
    if (auto arg = dyn_cast<BlockArgument>(v); arg && arg.getOwner() == body) {
      if (arg == outArgument) {
        if (!outAllowed)
          return fail("the body reads the init outside the reduction's "
                      "combiner");
        return leafFor(op.getDpsInitOperand(0));
      }
      return leafFor(op.getMatchingOpOperand(arg));
    }
    if (std::optional<double> c = scalarConstant(v))
      return constant(*c);
    Operation *def = v.getDefiningOp();
    if (!def || def->getBlock() != body)
      return fail("the body uses a value defined outside it that is not a "
                  "constant");
    if (auto function = recogniseUnaryFunction(v, body, options)) {
      FailureOr<int> x = compile(function->second);
      if (failed(x))
        return failure();
      return unary(function->first, *x);
    }
    if (std::optional<JoinKind> join = unaryJoin(def)) {
      FailureOr<int> x = compile(def->getOperand(0));
      if (failed(x))
        return failure();
      return unary(*join, *x);
    }
    // x ** n with a constant integer n (torch-mlir's gelu writes x ** 3).
    APInt exponent;
    if (auto fpowi = dyn_cast<math::FPowIOp>(def);
        fpowi && matchPattern(fpowi.getRhs(), m_ConstantInt(&exponent))) {
      FailureOr<int> x = compile(fpowi.getLhs());
      if (failed(x))
        return failure();
      return binary(JoinKind::Pow, *x,
                    constant(static_cast<double>(exponent.getSExtValue())));
    }
    std::optional<JoinKind> join = binaryJoin(def);
    Value lhs, rhs;
    if (join) {
      lhs = def->getOperand(0);
      rhs = def->getOperand(1);
    } else if (auto select = selectAsMaxMin(def)) {
      join = select->first;
      lhs = select->second.first;
      rhs = select->second.second;
    } else {
      return fail("the body's '" + def->getName().getStringRef() +
                  "' has no doppler join");
    }
    FailureOr<int> a = compile(lhs);
    if (failed(a))
      return failure();
    FailureOr<int> b = compile(rhs);
    if (failed(b))
      return failure();
    return binary(*join, *a, *b);
  }();
  if (succeeded(result))
    memo[v] = *result;
  return result;
}

LogicalResult Analysis::run(Plan &result, std::string &reason) {
  plan = &result;
  auto done = [&](LogicalResult status) {
    if (failed(status))
      reason = why;
    return status;
  };
  if (!op.hasPureTensorSemantics())
    return done(fail("it works on buffers, not tensors"));
  if (op.getNumDpsInits() != 1 || op->getNumResults() != 1)
    return done(fail("it has " + Twine(op.getNumDpsInits()) +
                     " outputs; one is supported"));
  if (op.hasIndexSemantics())
    return done(fail("its body uses linalg.index"));
  body = op.getBlock();
  if (!body)
    return done(fail("it has no body"));
  plan->resultType = staticFloatTensor(op->getResult(0).getType());
  if (!plan->resultType)
    return done(fail("its result is not a float tensor of static shape"));
  Type element = plan->resultType.getElementType();
  for (OpOperand &operand : op->getOpOperands()) {
    Type type = operand.get().getType();
    if (isa<ShapedType>(type)) {
      auto tensor = staticFloatTensor(type);
      if (!tensor || tensor.getElementType() != element)
        return done(fail("operand " + Twine(operand.getOperandNumber()) +
                         " is not a static " + Twine("tensor of ") +
                         "the result's element type"));
    } else if (type != element) {
      return done(fail("scalar operand " + Twine(operand.getOperandNumber()) +
                       " is not of the result's element type"));
    }
  }
  unsigned loops = op.getNumLoops();
  if (loops > kMaxLetters)
    return done(fail("it has " + Twine(loops) + " loops; at most " +
                     Twine(kMaxLetters) + " are supported"));
  loopLetters = std::string(kLetters, loops);
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  for (unsigned d = 0; d < loops; ++d)
    plan->extents[kLetters[d]] = ranges[d];
  // Maps: projected permutations, constant 0 allowed on unit dims of inputs.
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    bool isInit = op.isDpsInit(&operand);
    if (!map.isProjectedPermutation(/*allowZeroInResults=*/!isInit))
      return done(fail("indexing map " + Twine(operand.getOperandNumber()) +
                       " is not a projected permutation"));
    for (auto [d, expr] : llvm::enumerate(map.getResults()))
      if (isa<AffineConstantExpr>(expr) &&
          cast<ShapedType>(operand.get().getType()).getDimSize(d) != 1)
        return done(fail("indexing map " + Twine(operand.getOperandNumber()) +
                         " has a constant on a dim of size > 1"));
  }
  OpOperand *init = op.getDpsInitOperand(0);
  plan->init = init->get();
  outArgument = op.getMatchingBlockArgument(init);
  for (AffineExpr expr : op.getMatchingIndexingMap(init).getResults())
    plan->output += kLetters[cast<AffineDimExpr>(expr).getPosition()];
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  bool reduces = false;
  for (unsigned d = 0; d < loops; ++d) {
    bool inOutput = plan->output.find(kLetters[d]) != std::string::npos;
    if (inOutput != (iterators[d] == utils::IteratorType::parallel))
      return done(fail("loop " + Twine(d) +
                       (inOutput ? " is in the output but not parallel"
                                 : " is not in the output but parallel")));
    reduces |= !inOutput;
  }
  auto yield = dyn_cast<linalg::YieldOp>(body->getTerminator());
  if (!yield || yield->getNumOperands() != 1)
    return done(fail("its body does not yield one value"));
  Value yielded = yield->getOperand(0);

  if (!reduces) {
    outAllowed = true;
    FailureOr<int> root = compile(yielded);
    if (failed(root))
      return done(failure());
    plan->root = *root;
    return success();
  }

  // A reduction: the yielded value must combine the init with the rest.
  Operation *combiner = yielded.getDefiningOp();
  if (!combiner || combiner->getBlock() != body)
    return done(fail("its reduction body does not combine values"));
  std::optional<JoinKind> join = binaryJoin(combiner);
  Value lhs, rhs;
  if (join) {
    lhs = combiner->getOperand(0);
    rhs = combiner->getOperand(1);
  } else if (auto select = selectAsMaxMin(combiner)) {
    join = select->first;
    lhs = select->second.first;
    rhs = select->second.second;
  }
  std::optional<AggKind> agg = join ? joinAsAggregation(*join) : std::nullopt;
  if (!agg || (lhs != outArgument && rhs != outArgument))
    return done(fail("its reduction combiner is not add, mul, max or min "
                     "of the init and a value"));
  plan->agg = agg;
  FailureOr<int> root = compile(lhs == outArgument ? rhs : lhs);
  if (failed(root))
    return done(failure());
  plan->root = *root;
  const Node &node = plan->nodes[*root];
  if (node.kind == Node::Constant || node.term.size() != loops)
    return done(fail("the reduced value does not depend on every loop"));
  std::optional<double> initValue = constantFillValue(plan->init);
  plan->accumulate =
      !initValue || *initValue != ::doppler::aggIdentity(toSupport(*agg));
  return success();
}

//===----------------------------------------------------------------------===//
// Emission
//===----------------------------------------------------------------------===//

class Emitter {
public:
  Emitter(Plan &plan, DopplerBuilder &builder) : plan(plan), b(builder) {}

  Value emit();

private:
  RankedTensorType typeOf(StringRef term) {
    SmallVector<int64_t> shape;
    for (char letter : term)
      shape.push_back(plan.extents.lookup(letter));
    return RankedTensorType::get(shape, plan.resultType.getElementType());
  }
  /// The node as a tensor of its own term.
  Value materialise(int index);
  /// The einsum that makes join node `index`, writing `output`.
  Value make(int index, StringRef output, std::optional<AggKind> agg);

  Plan &plan;
  DopplerBuilder &b;
};

Value Emitter::materialise(int index) {
  Node &node = plan.nodes[index];
  if (node.materialised)
    return node.materialised;
  switch (node.kind) {
  case Node::Constant:
    node.materialised = b.fill(node.constant, typeOf(""));
    break;
  case Node::Leaf:
    if (node.rawTerm == node.term) {
      node.materialised = node.operand;
    } else {
      // Drop the unit dims: a product over one element is the element.
      std::string spec = node.rawTerm + "->" + node.term;
      node.materialised = b.einsum(spec, JoinKind::Identity, AggKind::Mul,
                                   std::nullopt, node.operand,
                                   typeOf(node.term));
    }
    break;
  case Node::Join:
    node.materialised = make(index, node.term, std::nullopt);
    break;
  }
  return node.materialised;
}

Value Emitter::make(int index, StringRef output, std::optional<AggKind> agg) {
  Node &node = plan.nodes[index];
  std::string spec;
  SmallVector<Value, 2> inputs;
  for (auto [i, operand] : llvm::enumerate(node.operands)) {
    inputs.push_back(materialise(operand));
    spec += (i ? "," : "") + plan.nodes[operand].term;
  }
  spec += "->" + output.str();
  return b.einsum(spec, node.join, agg, node.scalar, inputs, typeOf(output));
}

Value Emitter::emit() {
  Node &root = plan.nodes[plan.root];
  const std::string &output = plan.output;
  Value result;
  if (plan.agg) {
    if (root.kind == Node::Join) {
      result = make(plan.root, output, plan.agg);
    } else {
      Value leaf = materialise(plan.root);
      result = b.einsum(root.term + "->" + output, JoinKind::Identity,
                        plan.agg, std::nullopt, leaf, plan.resultType);
    }
    if (plan.accumulate)
      result = b.einsum(output + "," + output + "->" + output,
                        aggregationJoin(*plan.agg), std::nullopt,
                        std::nullopt, ValueRange{result, plan.init},
                        plan.resultType);
    return result;
  }
  if (root.kind == Node::Constant)
    return b.fill(root.constant, plan.resultType);
  if (root.term.size() == output.size()) {
    // Every output letter is in the root's term.
    if (root.kind == Node::Join)
      return make(plan.root, output, std::nullopt);
    Value leaf = materialise(plan.root);
    if (root.term == output)
      return leaf;
    return b.einsum(root.term + "->" + output, JoinKind::Identity,
                    std::nullopt, std::nullopt, leaf, plan.resultType);
  }
  // A broadcast: add -0.0 (exact: x + -0.0 == x for every x, -0.0 too)
  // along the letters the root lacks.
  std::string missing;
  for (char letter : output)
    if (root.term.find(letter) == std::string::npos)
      missing += letter;
  Value value = materialise(plan.root);
  Value zeros = b.fill(-0.0, typeOf(missing));
  return b.einsum(root.term + "," + missing + "->" + output, JoinKind::Add,
                  std::nullopt, std::nullopt, ValueRange{value, zeros},
                  plan.resultType);
}

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

struct StructuredOpPattern
    : public OpInterfaceRewritePattern<linalg::LinalgOp> {
  StructuredOpPattern(MLIRContext *context,
                      const LinalgToDopplerOptions &options,
                      LinalgToDopplerCounters *counters)
      : OpInterfaceRewritePattern(context), options(options),
        counters(counters) {}

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    Plan plan;
    std::string why;
    if (failed(Analysis(op, options).run(plan, why)))
      return rewriter.notifyMatchFailure(op, why);
    DopplerBuilder builder(rewriter, op.getLoc(), counters);
    Value result = Emitter(plan, builder).emit();
    countConverted(counters, op);
    rewriter.replaceOp(op, result);
    return success();
  }

  LinalgToDopplerOptions options;
  LinalgToDopplerCounters *counters;
};

/// linalg.softmax: max, subtract, exp, sum, divide along `dimension`.
struct SoftmaxPattern : public OpRewritePattern<linalg::SoftmaxOp> {
  SoftmaxPattern(MLIRContext *context, LinalgToDopplerCounters *counters)
      : OpRewritePattern(context), counters(counters) {}

  LogicalResult matchAndRewrite(linalg::SoftmaxOp op,
                                PatternRewriter &rewriter) const override {
    std::string why = whyNot(op);
    if (!why.empty())
      return rewriter.notifyMatchFailure(op, why);
    auto type = cast<RankedTensorType>(op.getInput().getType());
    int64_t dim = static_cast<int64_t>(op.getDimension());
    std::string all(kLetters, type.getRank()), reduced;
    SmallVector<int64_t> reducedShape;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (d != dim) {
        reduced += all[d];
        reducedShape.push_back(type.getDimSize(d));
      }
    auto reducedType =
        RankedTensorType::get(reducedShape, type.getElementType());
    DopplerBuilder b(rewriter, op.getLoc(), counters);
    std::string reduce = all + "->" + reduced,
                broadcast = all + "," + reduced + "->" + all;
    Value max = b.einsum(reduce, JoinKind::Identity, AggKind::Max,
                         std::nullopt, op.getInput(), reducedType);
    Value shifted = b.einsum(broadcast, JoinKind::Sub, std::nullopt,
                             std::nullopt, ValueRange{op.getInput(), max},
                             type);
    Value exp = b.einsum(all + "->" + all, JoinKind::Exp, std::nullopt,
                         std::nullopt, shifted, type);
    Value sum = b.einsum(reduce, JoinKind::Identity, AggKind::Add,
                         std::nullopt, exp, reducedType);
    Value result = b.einsum(broadcast, JoinKind::Div, std::nullopt,
                            std::nullopt, ValueRange{exp, sum}, type);
    countConverted(counters, op);
    rewriter.replaceOp(op, result);
    return success();
  }

  static std::string whyNot(linalg::SoftmaxOp op) {
    auto type = staticFloatTensor(op.getInput().getType());
    if (!type || op->getNumResults() != 1 ||
        op->getResult(0).getType() != type)
      return "it is not on float tensors of static shape";
    if (type.getRank() > kMaxLetters)
      return "its rank is above " + std::to_string(kMaxLetters);
    return "";
  }

  LinalgToDopplerCounters *counters;
};

} // namespace

namespace mlir::doppler::linalg_to_doppler {

void populateStructuredOpPatterns(RewritePatternSet &patterns,
                                  const LinalgToDopplerOptions &options,
                                  LinalgToDopplerCounters *counters) {
  patterns.add<StructuredOpPattern>(patterns.getContext(), options, counters);
  patterns.add<SoftmaxPattern>(patterns.getContext(), counters);
}

std::string explainStructuredOp(Operation *op,
                                const LinalgToDopplerOptions &options) {
  if (auto softmax = dyn_cast<linalg::SoftmaxOp>(op))
    return SoftmaxPattern::whyNot(softmax);
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp)
    return "it has no doppler form";
  Plan plan;
  std::string why;
  if (succeeded(Analysis(linalgOp, options).run(plan, why)))
    return "";
  return why;
}

} // namespace mlir::doppler::linalg_to_doppler
