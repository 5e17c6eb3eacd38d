//===- MaskSelects.cpp - where() on masks as the frontend writes it -------===//
//
// The dialect holds no i1 tensor and has no select. The PyTorch frontend
// (python/doppler/ops_attention.py, `_where`) writes `where(mask, a, b)` on
// a mask known before the run as float arithmetic with constant tensors:
// a branch that is a constant becomes a tensor of its values where it is
// selected and 0 elsewhere, added; a computed branch is multiplied by the
// 0/1 mask of where it is selected, unless the other branch is infinite
// wherever that one is selected (x + -inf is -inf and x + 0 is x for
// finite x). rewriteMaskSelects does the same to a linalg body's
// `arith.select` whose condition is an operand holding a constant i1
// tensor (after foldConstants, e.g. a causal mask): the body is rebuilt
// with mulf/addf on new float constant operands, which the patterns
// convert to einsums.
//
//===----------------------------------------------------------------------===//

#include "Builders.h"
#include "ConstantEval.h"
#include "Prepare.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

#include <cmath>

using namespace mlir;
using namespace mlir::doppler;
using namespace mlir::doppler::linalg_to_doppler;

namespace {

SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

/// The element of constant `t` that `map` reads at loop point `point`.
double at(const ConstTensor &t, AffineMap map, ArrayRef<int64_t> point) {
  SmallVector<int64_t> index = map.compose(point);
  SmallVector<int64_t> strides = stridesOf(t.type.getShape());
  int64_t position = 0;
  for (auto [i, s] : llvm::zip(index, strides))
    position += i * s;
  return t.getF(position);
}

/// A branch of a select: a constant (scalar, or a constant tensor operand
/// read through its map) or a computed value.
struct Branch {
  Value value;                        ///< the body value
  std::optional<double> scalar;       ///< a scalar constant
  std::optional<ConstTensor> tensor;  ///< a constant tensor operand
  AffineMap map;                      ///< its map, with `tensor`
  bool known() const { return scalar || tensor; }
  double valueAt(ArrayRef<int64_t> point) const {
    return scalar ? *scalar : at(*tensor, map, point);
  }
};

/// One mask select of a generic's body, and what it needs.
struct MaskSelect {
  arith::SelectOp select;
  ConstTensor mask;
  AffineMap maskMap;
  Branch branches[2];
};

Branch readBranch(linalg::GenericOp op, Value value, int64_t limit) {
  Branch branch;
  branch.value = value;
  if (std::optional<double> c = scalarConstant(value)) {
    branch.scalar = c;
    return branch;
  }
  auto arg = dyn_cast<BlockArgument>(value);
  if (!arg || arg.getOwner() != op.getBody() ||
      arg.getArgNumber() >= op.getNumDpsInputs())
    return branch;
  OpOperand *operand = op.getDpsInputOperand(arg.getArgNumber());
  if (std::optional<ConstTensor> t = readConstant(operand->get(), limit)) {
    branch.tensor = std::move(*t);
    branch.map = op.getMatchingIndexingMap(operand);
  }
  return branch;
}

/// Builds the float constant over the op's loops: at each point, what
/// `value(point, selectedT)` gives.
template <typename Fn>
ConstTensor overLoops(RankedTensorType type, const MaskSelect &s,
                      ArrayRef<int64_t> ranges, Fn value) {
  ConstTensor t;
  t.type = type;
  t.floats.assign(type.getNumElements(), 0.0);
  SmallVector<int64_t> point(ranges.size(), 0);
  for (int64_t k = 0, e = type.getNumElements(); k < e; ++k) {
    bool selectedT = at(s.mask, s.maskMap, point) != 0;
    t.floats[k] = roundTo(type.getElementType(), value(point, selectedT));
    for (int64_t d = static_cast<int64_t>(ranges.size()) - 1; d >= 0; --d) {
      if (++point[d] < ranges[d])
        break;
      point[d] = 0;
    }
  }
  return t;
}

/// Rewrites the generic `op` whose body selects on constant masks. One
/// function of about 150 lines: finding the selects, planning the constants
/// each needs and rebuilding the body share the op's loops, maps and the
/// per-select plan; split, each part would take most of the others' state.
bool rewriteGeneric(linalg::GenericOp op, int64_t limit,
                    LinalgToDopplerCounters *counters) {
  if (op.getNumParallelLoops() != op.getNumLoops() ||
      !op.hasPureTensorSemantics())
    return false;
  SmallVector<MaskSelect, 4> selects;
  for (Operation &bodyOp : op.getBody()->without_terminator()) {
    auto select = dyn_cast<arith::SelectOp>(&bodyOp);
    if (!select || !isa<FloatType>(select.getType()))
      continue;
    auto cond = dyn_cast<BlockArgument>(select.getCondition());
    if (!cond || cond.getOwner() != op.getBody() ||
        cond.getArgNumber() >= op.getNumDpsInputs())
      continue;
    OpOperand *operand = op.getDpsInputOperand(cond.getArgNumber());
    std::optional<ConstTensor> mask = readConstant(operand->get(), limit);
    if (!mask)
      continue;
    MaskSelect s{select, std::move(*mask), op.getMatchingIndexingMap(operand),
                 {readBranch(op, select.getTrueValue(), limit),
                  readBranch(op, select.getFalseValue(), limit)}};
    selects.push_back(std::move(s));
  }
  if (selects.empty())
    return false;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t points = 1;
  for (int64_t r : ranges)
    points = ShapedType::isDynamic(r) ? limit + 1 : points * r;
  if (points > limit)
    return false;
  MLIRContext *context = op.getContext();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(ranges.size(), context);

  // The new operands: the old inputs, then per select the constants it
  // needs (read through the loops' identity, or the mask's own map).
  // An input only the rewritten selects read as their condition goes.
  OpBuilder b(op);
  Block *old = op.getBody();
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  SmallVector<int> newIndex(op.getNumDpsInputs(), -1);
  for (OpOperand *input : op.getDpsInputOperands()) {
    BlockArgument arg = old->getArgument(input->getOperandNumber());
    bool onlyConditions = !arg.use_empty() &&
        llvm::all_of(arg.getUsers(), [&](Operation *user) {
          return llvm::any_of(selects, [&](MaskSelect &s) {
            return s.select.getOperation() == user &&
                   s.select.getTrueValue() != arg &&
                   s.select.getFalseValue() != arg;
          });
        });
    if (onlyConditions)
      continue;
    newIndex[input->getOperandNumber()] = inputs.size();
    inputs.push_back(input->get());
    maps.push_back(op.getMatchingIndexingMap(input));
  }
  struct Plan {
    int addConstant = -1;      ///< input index of the constant added
    int keep[2] = {-1, -1};    ///< input index of each branch's 0/1 mask
  };
  SmallVector<Plan> plans;
  for (MaskSelect &s : selects) {
    Type element = s.select.getType();
    auto loopsType = RankedTensorType::get(ranges, element);
    Plan plan;
    auto addInput = [&](const ConstTensor &t, AffineMap map) {
      inputs.push_back(materialize(b, op.getLoc(), t));
      maps.push_back(map);
      return static_cast<int>(inputs.size() - 1);
    };
    const Branch &t = s.branches[0], &f = s.branches[1];
    if (t.known() || f.known()) {
      plan.addConstant = addInput(
          overLoops(loopsType, s, ranges,
                    [&](ArrayRef<int64_t> point, bool selectedT) {
                      const Branch &chosen = selectedT ? t : f;
                      return chosen.known() ? chosen.valueAt(point) : 0.0;
                    }),
          identity);
    }
    for (int side = 0; side < 2; ++side) {
      const Branch &mine = s.branches[side], &other = s.branches[1 - side];
      if (mine.known())
        continue;
      // Beside a constant that is infinite wherever it is selected, the
      // computed branch is added as it is.
      if (other.known()) {
        bool infinite = true;
        overLoops(loopsType, s, ranges,
                  [&](ArrayRef<int64_t> point, bool selectedT) {
                    if (selectedT == (side == 1) &&
                        !std::isinf(other.valueAt(point)))
                      infinite = false;
                    return 0.0;
                  });
        if (infinite)
          continue;
      }
      ConstTensor keep;
      auto maskType = RankedTensorType::get(s.mask.type.getShape(), element);
      keep.type = maskType;
      for (int64_t k = 0; k < s.mask.size(); ++k)
        keep.floats.push_back((s.mask.ints[k] != 0) == (side == 0) ? 1.0 : 0.0);
      plan.keep[side] = addInput(keep, s.maskMap);
    }
    plans.push_back(plan);
  }
  for (OpOperand &init : op.getDpsInitsMutable())
    maps.push_back(op.getMatchingIndexingMap(&init));

  // The body: the old one, each select replaced by its sum of parts.
  unsigned oldInputs = op.getNumDpsInputs();
  auto generic = linalg::GenericOp::create(
      b, op.getLoc(), op->getResultTypes(), inputs, op.getDpsInits(), maps,
      op.getIteratorTypesArray(),
      [&](OpBuilder &nb, Location loc, ValueRange args) {
        IRMapping mapping;
        for (unsigned i = 0; i < oldInputs; ++i)
          if (newIndex[i] >= 0)
            mapping.map(old->getArgument(i), args[newIndex[i]]);
        for (unsigned i = oldInputs; i < old->getNumArguments(); ++i)
          mapping.map(old->getArgument(i),
                      args[inputs.size() + (i - oldInputs)]);
        for (Operation &bodyOp : *old) {
          auto it = llvm::find_if(selects, [&](MaskSelect &s) {
            return s.select.getOperation() == &bodyOp;
          });
          if (it == selects.end()) {
            nb.clone(bodyOp, mapping);
            continue;
          }
          const Plan &plan = plans[it - selects.begin()];
          Value sum;
          auto add = [&](Value part) {
            sum = sum ? arith::AddFOp::create(nb, loc, sum, part).getResult()
                      : part;
          };
          for (int side = 0; side < 2; ++side) {
            const Branch &branch = it->branches[side];
            if (branch.known())
              continue;
            Value x = mapping.lookupOrDefault(branch.value);
            if (plan.keep[side] >= 0)
              x = arith::MulFOp::create(nb, loc, x, args[plan.keep[side]]);
            add(x);
          }
          if (plan.addConstant >= 0)
            add(args[plan.addConstant]);
          mapping.map(it->select.getResult(), sum);
        }
      });
  countConverted(counters, op);
  op->replaceAllUsesWith(generic->getResults());
  eraseIfDead(op);
  return true;
}

} // namespace

void linalg_to_doppler::rewriteMaskSelects(Operation *function, int64_t limit,
                                           LinalgToDopplerCounters *counters) {
  SmallVector<linalg::GenericOp> generics;
  for (Region &region : function->getRegions())
    for (Block &block : region)
      for (Operation &op : block)
        if (auto generic = dyn_cast<linalg::GenericOp>(&op))
          generics.push_back(generic);
  for (linalg::GenericOp generic : generics)
    rewriteGeneric(generic, limit, counters);
}
