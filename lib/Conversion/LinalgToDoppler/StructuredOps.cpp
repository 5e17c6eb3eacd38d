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
#include "ScalarBodies.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::doppler;
using namespace mlir::doppler::linalg_to_doppler;


namespace {

std::string typeName(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
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
  /// The output's term with a letter (of extent 1) for each constant 0 of
  /// its map (torch-mlir's keepdim reductions); equal to `output` if none.
  std::string rawOutput;
  unsigned resultIndex = 0;      ///< the result converted (the one used)
  int initLeaf = -1;             ///< the init as a node, when accumulating
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
  /// The inits of the other (unused) results do not matter.
  bool isOtherInit(OpOperand &operand) {
    return op.isDpsInit(&operand) && &operand != init;
  }
  // The steps of run(); each fails with `why` set.
  LogicalResult checkOperands();
  LogicalResult readLoops(bool &reduces);
  LogicalResult readYield(Value &yielded);
  LogicalResult readElementwise(Value yielded);
  LogicalResult readReduction(Value yielded);
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
  /// Whether the body value `v` is computed from a linalg.index.
  bool dependsOnIndex(Value v) const;

  linalg::LinalgOp op;
  const LinalgToDopplerOptions &options;
  Plan *plan = nullptr;
  std::string why;
  Block *body = nullptr;
  /// The init of the converted result.
  OpOperand *init = nullptr;
  BlockArgument outArgument;
  bool outAllowed = false;
  llvm::DenseMap<Value, int> memo;
  std::string loopLetters;
};

bool Analysis::dependsOnIndex(Value v) const {
  SmallVector<Value> stack{v};
  llvm::DenseSet<Value> seen;
  while (!stack.empty()) {
    Operation *def = stack.pop_back_val().getDefiningOp();
    if (!def || def->getBlock() != body || !seen.insert(def->getResult(0)).second)
      continue;
    if (isa<linalg::IndexOp>(def))
      return true;
    llvm::append_range(stack, def->getOperands());
  }
  return false;
}

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
      OpOperand *operand = op.getMatchingOpOperand(arg);
      if (arg == outArgument) {
        if (!outAllowed)
          return fail("the body reads the init outside the reduction's "
                      "combiner");
      } else if (op.isDpsInit(operand)) {
        return fail("the value of the used result reads another result's "
                    "init");
      }
      return leafFor(operand);
    }
    if (std::optional<double> c = scalarConstant(v))
      return constant(*c);
    APInt bit; // an i1 constant: 0/1
    if (v.getType().isInteger(1) && matchPattern(v, m_ConstantInt(&bit)))
      return constant(bit.isZero() ? 0.0 : 1.0);
    Operation *def = v.getDefiningOp();
    if (!def || def->getBlock() != body)
      return fail("the body uses a value defined outside it that is not a "
                  "constant");
    // An i1 as a float: its 0/1 (sitofp: 0/-1).
    if (isa<arith::UIToFPOp, arith::SIToFPOp>(def) &&
        def->getOperand(0).getType().isInteger(1)) {
      FailureOr<int> x = compile(def->getOperand(0));
      if (failed(x) || isa<arith::UIToFPOp>(def))
        return x;
      return unary(JoinKind::Neg, *x);
    }
    if (Value in = castThrough(def, plan->resultType.getElementType()))
      return compile(in);
    if (isa<arith::ExtFOp, arith::TruncFOp>(def))
      return fail("the body casts " + typeName(def->getOperand(0).getType()) +
                  " to " + typeName(def->getResult(0).getType()) +
                  ": doppler einsums compute in one element type (here " +
                  typeName(plan->resultType.getElementType()) + ")");
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
    } else if (auto select = dyn_cast<arith::SelectOp>(def)) {
      // where(c, a) + where(c == 0, b): exact for every a and b (where
      // gives -0.0, the identity of add, where not selected); c ? 1 : 0
      // is c, c ? a : -0.0 where(c, a).
      FailureOr<int> c = compile(select.getCondition());
      FailureOr<int> a = succeeded(c) ? compile(select.getTrueValue()) : c;
      FailureOr<int> b = succeeded(a) ? compile(select.getFalseValue()) : a;
      if (failed(b))
        return failure();
      std::optional<double> t = scalarConstant(select.getTrueValue()),
                            f = scalarConstant(select.getFalseValue());
      if (t && f && *t == 1 && *f == 0)
        return c;
      // where and eq test x != 0 themselves: `x != 0` as the condition is x.
      auto cmp = select.getCondition().getDefiningOp<arith::CmpFOp>();
      std::optional<double> zero = cmp ? scalarConstant(cmp.getRhs()) : std::nullopt;
      if (cmp && cmp->getBlock() == body &&
          cmp.getPredicate() == arith::CmpFPredicate::UNE && zero && *zero == 0)
        c = compile(cmp.getLhs());
      if (failed(c))
        return failure();
      if (f && *f == 0 && std::signbit(*f))
        return binary(JoinKind::Where, *c, *a);
      FailureOr<int> taken = binary(JoinKind::Where, *c, *a);
      FailureOr<int> notC = binary(JoinKind::Eq, *c, constant(0.0));
      FailureOr<int> other =
          succeeded(notC) ? binary(JoinKind::Where, *notC, *b) : notC;
      if (failed(taken) || failed(other))
        return failure();
      return binary(JoinKind::Add, *taken, *other);
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
  bool reduces = false;
  Value yielded;
  LogicalResult status = checkOperands();
  if (succeeded(status))
    status = readLoops(reduces);
  if (succeeded(status))
    status = readYield(yielded);
  if (succeeded(status))
    status = reduces ? readReduction(yielded) : readElementwise(yielded);
  if (failed(status))
    reason = why;
  return status;
}

/// Results, operands and their types: tensors of static shape, of the
/// result's element type; one used result.
LogicalResult Analysis::checkOperands() {
  if (!op.hasPureTensorSemantics())
    return fail("it works on buffers, not tensors");
  if (op->getNumResults() == 0 || op->getNumResults() != op.getNumDpsInits())
    return fail("it has no tensor result");
  // The result converted: the only one used (torch's max with indices
  // often has a dead index result).
  unsigned used = 0;
  for (OpResult result : op->getResults())
    if (!result.use_empty()) {
      plan->resultIndex = result.getResultNumber();
      ++used;
    }
  if (used > 1)
    return fail("it has " + Twine(used) +
                     " used results; one is supported");
  init = op.getDpsInitOperand(plan->resultIndex);
  body = op.getBlock();
  if (!body)
    return fail("it has no body");
  plan->resultType =
      staticFloatTensor(op->getResult(plan->resultIndex).getType());
  if (!plan->resultType)
    return fail("its result is not a float tensor of static shape");
  Type element = plan->resultType.getElementType();
  for (OpOperand &operand : op->getOpOperands()) {
    if (isOtherInit(operand))
      continue;
    Type type = operand.get().getType();
    if (isa<ShapedType>(type)) {
      auto tensor = staticFloatTensor(type);
      if (!tensor || tensor.getElementType() != element)
        return fail("operand " + Twine(operand.getOperandNumber()) +
                         " is not a static " + Twine("tensor of ") +
                         "the result's element type");
    } else if (type != element) {
      return fail("scalar operand " + Twine(operand.getOperandNumber()) +
                       " is not of the result's element type");
    }
  }
  return success();
}

/// Loop letters and extents, the maps (projected permutations), the output
/// letters; whether some loop reduces.
LogicalResult Analysis::readLoops(bool &reduces) {
  unsigned loops = op.getNumLoops();
  if (loops > kMaxLetters)
    return fail("it has " + Twine(loops) + " loops; at most " +
                     Twine(kMaxLetters) + " are supported");
  loopLetters = std::string(kLetters, loops);
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  for (unsigned d = 0; d < loops; ++d)
    plan->extents[kLetters[d]] = ranges[d];
  // Maps: projected permutations, constant 0 allowed on unit dims.
  for (OpOperand &operand : op->getOpOperands()) {
    if (isOtherInit(operand))
      continue;
    AffineMap map = op.getMatchingIndexingMap(&operand);
    if (!map.isProjectedPermutation(/*allowZeroInResults=*/true))
      return fail("indexing map " + Twine(operand.getOperandNumber()) +
                       " is not a projected permutation");
    for (auto [d, expr] : llvm::enumerate(map.getResults()))
      if (isa<AffineConstantExpr>(expr) &&
          cast<ShapedType>(operand.get().getType()).getDimSize(d) != 1)
        return fail("indexing map " + Twine(operand.getOperandNumber()) +
                         " has a constant on a dim of size > 1");
  }
  plan->init = init->get();
  outArgument = op.getMatchingBlockArgument(init);
  unsigned nextUnit = loops;
  for (AffineExpr expr : op.getMatchingIndexingMap(init).getResults()) {
    if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
      plan->output += kLetters[dim.getPosition()];
      plan->rawOutput += kLetters[dim.getPosition()];
      continue;
    }
    if (nextUnit >= kMaxLetters)
      return fail("needs more than " + Twine(kMaxLetters) + " indices");
    plan->extents[kLetters[nextUnit]] = 1;
    plan->rawOutput += kLetters[nextUnit++];
  }
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  reduces = false;
  for (unsigned d = 0; d < loops; ++d) {
    bool inOutput = plan->output.find(kLetters[d]) != std::string::npos;
    if (inOutput != (iterators[d] == utils::IteratorType::parallel))
      return fail("loop " + Twine(d) +
                       (inOutput ? " is in the output but not parallel"
                                 : " is not in the output but parallel"));
    reduces |= !inOutput;
  }
  return success();
}

/// The value the body yields for the converted result.
LogicalResult Analysis::readYield(Value &yielded) {
  auto yield = dyn_cast<linalg::YieldOp>(body->getTerminator());
  if (!yield || yield->getNumOperands() != op->getNumResults())
    return fail("its body does not yield a value per result");
  yielded = yield->getOperand(plan->resultIndex);
  if (dependsOnIndex(yielded))
    return fail("its body uses linalg.index (an iota or mask: no "
                     "doppler op computes from element positions)");
  return success();
}

LogicalResult Analysis::readElementwise(Value yielded) {
  outAllowed = true;
  FailureOr<int> root = compile(yielded);
  if (failed(root))
    return failure();
  plan->root = *root;
  return success();
}

/// A reduction: the yielded value must combine the init with the rest.
LogicalResult Analysis::readReduction(Value yielded) {
  Operation *combiner = yielded.getDefiningOp();
  if (!combiner || combiner->getBlock() != body)
    return fail("its reduction body does not combine values");
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
    return fail("its reduction combiner is not add, mul, max or min "
                     "of the init and a value");
  plan->agg = agg;
  FailureOr<int> root = compile(lhs == outArgument ? rhs : lhs);
  if (failed(root))
    return failure();
  plan->root = *root;
  const Node &node = plan->nodes[*root];
  if (node.kind == Node::Constant || node.term.size() != loopLetters.size())
    return fail("the reduced value does not depend on every loop");
  std::optional<double> initValue = constantFillValue(plan->init);
  plan->accumulate =
      !initValue || *initValue != ::doppler::aggIdentity(toSupport(*agg));
  if (plan->accumulate) {
    FailureOr<int> leaf = leafFor(init);
    if (failed(leaf))
      return failure();
    plan->initLeaf = *leaf;
  }
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
  /// The result without the output map's constant-0 dims.
  Value emitCore();
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
  Value result = emitCore();
  if (plan.rawOutput == plan.output)
    return result;
  // The output map's constant-0 dims: broadcast over them by adding -0.0
  // (exact).
  std::string units;
  for (char letter : plan.rawOutput)
    if (plan.output.find(letter) == std::string::npos)
      units += letter;
  return b.einsum(plan.output + "," + units + "->" + plan.rawOutput,
                  JoinKind::Add, std::nullopt, std::nullopt,
                  ValueRange{result, b.fill(-0.0, typeOf(units))},
                  plan.resultType);
}

Value Emitter::emitCore() {
  Node &root = plan.nodes[plan.root];
  const std::string &output = plan.output;
  RankedTensorType type = typeOf(output);
  Value result;
  if (plan.agg) {
    if (root.kind == Node::Join) {
      result = make(plan.root, output, plan.agg);
    } else {
      Value leaf = materialise(plan.root);
      result = b.einsum(root.term + "->" + output, JoinKind::Identity,
                        plan.agg, std::nullopt, leaf, type);
    }
    if (plan.accumulate)
      result = b.einsum(output + "," + output + "->" + output,
                        aggregationJoin(*plan.agg), std::nullopt,
                        std::nullopt,
                        ValueRange{result, materialise(plan.initLeaf)}, type);
    return result;
  }
  if (root.kind == Node::Constant)
    return b.fill(root.constant, type);
  if (root.term.size() == output.size()) {
    // Every output letter is in the root's term.
    if (root.kind == Node::Join)
      return make(plan.root, output, std::nullopt);
    Value leaf = materialise(plan.root);
    if (root.term == output)
      return leaf;
    return b.einsum(root.term + "->" + output, JoinKind::Identity,
                    std::nullopt, std::nullopt, leaf, type);
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
                  std::nullopt, std::nullopt, ValueRange{value, zeros}, type);
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
    // The other results are unused (Analysis checked).
    rewriter.replaceAllUsesWith(op->getResult(plan.resultIndex), result);
    rewriter.eraseOp(op);
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
