//===- ConstantFolding.cpp - Ops on constants only, computed once ---------===//
//
// An op whose operands are all constants computes the same tensor on every
// run: iota (`linalg.index`), `arange`, comparisons and boolean logic on
// positions (causal masks), integer index arithmetic, i1/i64 fills,
// gathers and scans (`tm_tensor.scan`, torch-mlir's cumsum) of such
// tensors, casts, RoPE's sin/cos tables. They are evaluated here, at
// conversion time, into one constant each (ConstantEval.h), in program
// order so that chains fold whole. Results over the size limit are not
// folded (their op is converted as usual, or left with that reason).
//
//===----------------------------------------------------------------------===//

#include "BodyEvaluator.h"
#include "Builders.h"
#include "Prepare.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::doppler;
using namespace mlir::doppler::linalg_to_doppler;

namespace {

/// Most points an op's loops may have to be evaluated (a reduction visits
/// more points than it has results).
constexpr int64_t kMaxPoints = int64_t(1) << 24;

SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

int64_t linearIndex(ArrayRef<int64_t> index, ArrayRef<int64_t> strides) {
  int64_t position = 0;
  for (auto [i, s] : llvm::zip(index, strides))
    position += i * s;
  return position;
}

/// Advances the row-major odometer `index` over `shape`; false past the end.
bool advance(SmallVectorImpl<int64_t> &index, ArrayRef<int64_t> shape) {
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    if (++index[d] < shape[d])
      return true;
    index[d] = 0;
  }
  return false;
}

Scalar elementOf(const ConstTensor &t, int64_t i) {
  Scalar s;
  if (t.isFloat())
    s.f = t.floats[i];
  else
    s.i = t.ints[i];
  return s;
}

void setElement(ConstTensor &t, int64_t i, Scalar s) {
  if (t.isFloat())
    t.floats[i] = roundTo(t.type.getElementType(), s.f);
  else
    t.ints[i] = wrapTo(t.type.getElementType(), s.i);
}

//===----------------------------------------------------------------------===//
// Whole ops
//===----------------------------------------------------------------------===//

/// A tensor operand's constant value, or the reason there is none.
struct Operands {
  std::vector<ConstTensor> values;
  std::string why;
  bool notConstant = false;
};

Operands readOperands(Operation *op, ValueRange operands, int64_t limit,
                      ArrayRef<bool> mayBeEmpty = {}) {
  Operands result;
  for (auto [i, operand] : llvm::enumerate(operands)) {
    // A scalar operand (linalg.fill's value): a rank-0 tensor, read through
    // the op's map with no results.
    Attribute scalar;
    if (operand.getType().isIntOrIndexOrFloat() &&
        matchPattern(operand, m_Constant(&scalar))) {
      ConstTensor t = zeroTensor(RankedTensorType::get({}, operand.getType()));
      if (auto f = dyn_cast<FloatAttr>(scalar))
        t.floats[0] = f.getValueAsDouble();
      else if (auto n = dyn_cast<IntegerAttr>(scalar))
        t.ints[0] = wrapTo(operand.getType(), n.getValue().getSExtValue());
      result.values.push_back(std::move(t));
      continue;
    }
    auto type = dyn_cast<RankedTensorType>(operand.getType());
    if (!type || !type.hasStaticShape()) {
      result.why = "an operand is not a tensor of static shape";
      result.notConstant = true;
      return result;
    }
    if (i < mayBeEmpty.size() && mayBeEmpty[i] &&
        operand.getDefiningOp<tensor::EmptyOp>()) {
      result.values.push_back(zeroTensor(type));
      continue;
    }
    if (!isConstantTensor(operand)) {
      result.notConstant = true;
      result.why = "an operand is not a constant";
      return result;
    }
    std::optional<ConstTensor> value = readConstant(operand, limit);
    if (!value) {
      result.why = "a constant operand is over the fold limit or unreadable";
      return result;
    }
    result.values.push_back(std::move(*value));
  }
  (void)op;
  return result;
}

/// Evaluates a structured op at every point of its loops, in row-major
/// order (a reduction combines into its output element as linalg does).
EvalResult evalLinalg(linalg::LinalgOp op, int64_t limit) {
  EvalResult out;
  if (!op.hasPureTensorSemantics() || !op.getBlock()) {
    out.why = "it does not have tensor semantics";
    return out;
  }
  // An init may be a tensor.empty when its block argument is not read.
  SmallVector<bool> mayBeEmpty;
  for (OpOperand &operand : op->getOpOperands())
    mayBeEmpty.push_back(op.isDpsInit(&operand) &&
                         !op.payloadUsesValueFromOperand(&operand));
  Operands operands =
      readOperands(op, op->getOperands(), limit, mayBeEmpty);
  if (!operands.why.empty()) {
    out.why = operands.why;
    out.notConstant = operands.notConstant;
    return out;
  }
  for (Type type : op->getResultTypes())
    if (cast<RankedTensorType>(type).getNumElements() > limit) {
      out.why = "its result has " +
                std::to_string(cast<RankedTensorType>(type).getNumElements()) +
                " elements, over the fold limit of " + std::to_string(limit) +
                " (option fold-limit)";
      return out;
    }
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t points = 1;
  for (int64_t r : ranges) {
    if (ShapedType::isDynamic(r)) {
      out.why = "its loops are dynamic";
      return out;
    }
    points *= r;
    if (points > kMaxPoints) {
      out.why = "it has over 2^24 loop points to evaluate";
      return out;
    }
  }
  BodyEvaluator body;
  if (std::string why = body.prepare(*op.getBlock(), limit); !why.empty()) {
    out.why = why;
    return out;
  }
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  unsigned numInputs = op.getNumDpsInputs();
  std::vector<ConstTensor> results;
  for (unsigned r = 0; r < op->getNumResults(); ++r)
    results.push_back(operands.values[numInputs + r]);
  SmallVector<SmallVector<int64_t>> strides;
  for (const ConstTensor &t : operands.values)
    strides.push_back(stridesOf(t.type.getShape()));
  SmallVector<int64_t> point(ranges.size(), 0);
  SmallVector<Scalar> args(operands.values.size()), yielded;
  SmallVector<int64_t> positions(operands.values.size());
  if (points > 0)
    do {
      for (auto [i, map] : llvm::enumerate(maps)) {
        positions[i] = linearIndex(map.compose(point), strides[i]);
        args[i] = i < numInputs ? elementOf(operands.values[i], positions[i])
                                : elementOf(results[i - numInputs],
                                            positions[i]);
      }
      if (!body.run(args, point, yielded)) {
        out.why = "an index is out of range or a division by zero";
        return out;
      }
      for (unsigned r = 0; r < results.size(); ++r)
        setElement(results[r], positions[numInputs + r], yielded[r]);
    } while (advance(point, ranges));
  out.results = std::move(results);
  return out;
}

/// torch-mlir's tm_tensor.scan (cumsum): operands input, output init,
/// accumulator init; attributes `dimension` and `inclusive`; the body
/// combines (previous output, input).
EvalResult evalScan(Operation *op, int64_t limit) {
  EvalResult out;
  // An unregistered op (doppler-opt does not load TMTensor) keeps its
  // properties as a dictionary.
  auto properties =
      dyn_cast_or_null<DictionaryAttr>(op->getPropertiesAsAttribute());
  auto lookup = [&](StringRef name) -> Attribute {
    if (Attribute attr = op->getAttr(name))
      return attr;
    return properties ? properties.get(name) : Attribute();
  };
  auto dimAttr = dyn_cast_or_null<IntegerAttr>(lookup("dimension"));
  auto inclusiveAttr = dyn_cast_or_null<BoolAttr>(lookup("inclusive"));
  if (op->getNumOperands() != 3 || op->getNumResults() != 2 || !dimAttr ||
      !inclusiveAttr || op->getNumRegions() != 1 ||
      !op->getRegion(0).hasOneBlock()) {
    out.why = "it is not a scan of one input";
    return out;
  }
  Operands operands = readOperands(op, op->getOperands(), limit, {false, true});
  if (!operands.why.empty()) {
    out.why = operands.why;
    out.notConstant = operands.notConstant;
    return out;
  }
  BodyEvaluator body;
  Block &block = op->getRegion(0).front();
  if (std::string why = body.prepare(block, limit); !why.empty()) {
    out.why = why;
    return out;
  }
  const ConstTensor &input = operands.values[0];
  ConstTensor output = operands.values[1], acc = operands.values[2];
  if (input.size() > limit) {
    out.why = "its result is over the fold limit (option fold-limit)";
    return out;
  }
  ArrayRef<int64_t> shape = input.type.getShape();
  int64_t dim = dimAttr.getInt();
  if (dim < 0 || dim >= static_cast<int64_t>(shape.size())) {
    out.why = "its dimension is out of range";
    return out;
  }
  bool inclusive = inclusiveAttr.getValue();
  SmallVector<int64_t> strides = stridesOf(shape);
  SmallVector<int64_t> accShape;
  for (auto [d, e] : llvm::enumerate(shape))
    if (static_cast<int64_t>(d) != dim)
      accShape.push_back(e);
  SmallVector<int64_t> accStrides = stridesOf(accShape);
  SmallVector<int64_t> index(shape.size(), 0);
  SmallVector<Scalar> yielded;
  if (input.size() > 0)
    do {
      int64_t position = linearIndex(index, strides);
      SmallVector<int64_t> accIndex;
      for (auto [d, i] : llvm::enumerate(index))
        if (static_cast<int64_t>(d) != dim)
          accIndex.push_back(i);
      int64_t accPosition = linearIndex(accIndex, accStrides);
      Scalar value;
      if (index[dim] == 0) {
        value = inclusive ? elementOf(input, position)
                          : elementOf(acc, accPosition);
      } else {
        Scalar args[2] = {elementOf(output, position - strides[dim]),
                          elementOf(input, inclusive ? position
                                                     : position - strides[dim])};
        if (!body.run(args, {}, yielded) || yielded.size() != 1) {
          out.why = "its body could not be evaluated";
          return out;
        }
        value = yielded[0];
      }
      setElement(output, position, value);
      setElement(acc, accPosition, value);
    } while (advance(index, shape));
  out.results = {std::move(output), std::move(acc)};
  return out;
}

/// The strided box of `big` at `offsets` (sizes, steps: full rank of
/// `big`) and the row-major elements of `box`: box[k] = big[...] when
/// `intoBox`, else big[...] = box[k].
void copyStrided(ConstTensor &big, ConstTensor &box, ArrayRef<int64_t> offsets,
                 ArrayRef<int64_t> sizes, ArrayRef<int64_t> steps,
                 bool intoBox) {
  SmallVector<int64_t> strides = stridesOf(big.type.getShape());
  SmallVector<int64_t> index(sizes.size(), 0);
  int64_t count = 1;
  for (int64_t s : sizes)
    count *= s;
  for (int64_t k = 0; k < count; ++k) {
    int64_t position = 0;
    for (size_t d = 0; d < sizes.size(); ++d)
      position += (offsets[d] + index[d] * steps[d]) * strides[d];
    if (intoBox)
      setElement(box, k, elementOf(big, position));
    else
      setElement(big, position, elementOf(box, k));
    advance(index, sizes);
  }
}

/// Whether a slice op's offsets, sizes and strides are all static (what
/// copyStrided needs).
bool hasStaticBox(OffsetSizeAndStrideOpInterface op) {
  return !llvm::any_of(llvm::concat<const int64_t>(op.getStaticOffsets(),
                                                   op.getStaticSizes(),
                                                   op.getStaticStrides()),
                       ShapedType::isDynamic);
}

EvalResult evalTensorOp(Operation *op, int64_t limit) {
  EvalResult out;
  auto resultType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (op->getNumResults() != 1 || !resultType ||
      !resultType.hasStaticShape()) {
    out.why = "its result is not a tensor of static shape";
    return out;
  }
  ValueRange tensorOperands = op->getOperands();
  if (auto pad = dyn_cast<tensor::PadOp>(op))
    tensorOperands = pad.getSource();
  if (auto reshape = dyn_cast<tensor::ReshapeOp>(op))
    tensorOperands = reshape.getSource();
  Operands operands = readOperands(op, tensorOperands, limit);
  if (!operands.why.empty()) {
    out.why = operands.why;
    out.notConstant = operands.notConstant;
    return out;
  }
  if (resultType.getNumElements() > limit) {
    out.why = "its result has " + std::to_string(resultType.getNumElements()) +
              " elements, over the fold limit of " + std::to_string(limit) +
              " (option fold-limit)";
    return out;
  }
  ConstTensor result = zeroTensor(resultType);
  bool ok = true;
  llvm::TypeSwitch<Operation *>(op)
      .Case<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::ReshapeOp>(
          [&](Operation *) {
            result = operands.values[0];
            result.type = resultType;
          })
      .Case([&](tensor::ExtractSliceOp slice) {
        if (!hasStaticBox(slice)) {
          ok = false;
          return;
        }
        copyStrided(operands.values[0], result, slice.getStaticOffsets(),
                    slice.getStaticSizes(), slice.getStaticStrides(), true);
      })
      .Case([&](tensor::InsertSliceOp insert) {
        if (!hasStaticBox(insert)) {
          ok = false;
          return;
        }
        result = operands.values[1];
        result.type = resultType;
        copyStrided(result, operands.values[0], insert.getStaticOffsets(),
                    insert.getStaticSizes(), insert.getStaticStrides(), false);
      })
      .Case([&](tensor::ConcatOp concat) {
        int64_t dim = concat.getDim(), offset = 0;
        for (const ConstTensor &part : operands.values) {
          SmallVector<int64_t> offsets(resultType.getRank(), 0);
          offsets[dim] = offset;
          SmallVector<int64_t> steps(resultType.getRank(), 1);
          ConstTensor copy = part;
          copyStrided(result, copy, offsets, part.type.getShape(), steps,
                      false);
          offset += part.type.getDimSize(dim);
        }
      })
      .Case([&](tensor::PadOp pad) {
        Value padding = pad.getConstantPaddingValue();
        Attribute attr;
        if (!padding || !matchPattern(padding, m_Constant(&attr)) ||
            llvm::any_of(llvm::concat<const int64_t>(pad.getStaticLow(),
                                                     pad.getStaticHigh()),
                         ShapedType::isDynamic)) {
          ok = false;
          return;
        }
        Scalar fill;
        if (auto f = dyn_cast<FloatAttr>(attr))
          fill.f = f.getValueAsDouble();
        else if (auto i = dyn_cast<IntegerAttr>(attr))
          fill.i = i.getValue().getSExtValue();
        for (int64_t k = 0; k < result.size(); ++k)
          setElement(result, k, fill);
        // The source at `low` in the result: a box with unit steps.
        ConstTensor &source = operands.values[0];
        SmallVector<int64_t> steps(resultType.getRank(), 1);
        copyStrided(result, source, pad.getStaticLow(),
                    source.type.getShape(), steps, false);
      })
      .Default([&](Operation *) { ok = false; });
  if (!ok) {
    out.why = "it has dynamic offsets or padding, or is not a tensor op the "
              "constant evaluator knows";
    return out;
  }
  out.results.push_back(std::move(result));
  return out;
}

} // namespace

EvalResult linalg_to_doppler::evaluateConstantOp(Operation *op,
                                                 int64_t limit) {
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    return evalLinalg(linalgOp, limit);
  if (op->getName().getStringRef() == "tm_tensor.scan")
    return evalScan(op, limit);
  if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::ReshapeOp,
          tensor::ExtractSliceOp, tensor::InsertSliceOp, tensor::ConcatOp,
          tensor::PadOp>(op))
    return evalTensorOp(op, limit);
  EvalResult out;
  out.why = "not an op the constant evaluator knows";
  out.notConstant = true;
  return out;
}

//===----------------------------------------------------------------------===//
// The driver
//===----------------------------------------------------------------------===//

namespace {

/// Ops folded when their operands are all constants. A float linalg.fill
/// is not: it converts to doppler.fill, or folds into the init it fills.
bool isFoldCandidate(Operation *op) {
  if (auto fill = dyn_cast<linalg::FillOp>(op))
    return !isa<FloatType>(
        cast<ShapedType>(fill->getResult(0).getType()).getElementType());
  // Nor is a generalised one (a parallel op yielding a constant): the
  // patterns drop it into the init it fills.
  if (isa<linalg::LinalgOp>(op) && op->getNumResults() == 1 &&
      isa<FloatType>(getElementTypeOrSelf(op->getResult(0).getType())) &&
      constantFillValue(op->getResult(0)))
    return false;
  return isa<linalg::LinalgOp, tensor::ExpandShapeOp, tensor::CollapseShapeOp,
             tensor::ReshapeOp, tensor::ExtractSliceOp, tensor::InsertSliceOp,
             tensor::ConcatOp, tensor::PadOp>(op) ||
         op->getName().getStringRef() == "tm_tensor.scan";
}

} // namespace

void linalg_to_doppler::foldConstants(Operation *function, int64_t limit,
                                      LinalgToDopplerCounters *counters) {
  SmallVector<Operation *> candidates;
  for (Region &region : function->getRegions())
    for (Block &block : region)
      for (Operation &op : block)
        if (isFoldCandidate(&op))
          candidates.push_back(&op);
  for (Operation *op : candidates) {
    EvalResult result = evaluateConstantOp(op, limit);
    if (!result.why.empty())
      continue;
    OpBuilder builder(op);
    for (auto [value, tensor] : llvm::zip(op->getResults(), result.results))
      value.replaceAllUsesWith(materialize(builder, op->getLoc(), tensor));
    countConverted(counters, op);
    eraseIfDead(op);
  }
}

void linalg_to_doppler::eraseIfDead(Operation *op) {
  SmallVector<Operation *> work{op};
  while (!work.empty()) {
    Operation *next = work.pop_back_val();
    if (!next->use_empty() || next->getNumRegions() > 1 ||
        !(isa<linalg::LinalgOp, arith::ConstantOp, FillOp>(next) ||
          isa_and_nonnull<tensor::TensorDialect>(next->getDialect()) ||
          next->getName().getStringRef() == "tm_tensor.scan"))
      continue;
    SmallVector<Operation *> producers;
    for (Value operand : next->getOperands())
      if (Operation *def = operand.getDefiningOp())
        if (!llvm::is_contained(producers, def))
          producers.push_back(def);
    next->erase();
    work.append(producers.begin(), producers.end());
  }
}

std::optional<std::string>
linalg_to_doppler::explainConstantOp(Operation *op, int64_t limit) {
  if (!isFoldCandidate(op) ||
      llvm::any_of(op->getResultTypes(), [](Type type) {
        auto tensor = dyn_cast<RankedTensorType>(type);
        return !tensor || !tensor.hasStaticShape();
      }))
    return std::nullopt;
  EvalResult result = evaluateConstantOp(op, limit);
  if (result.notConstant || result.why.empty())
    return std::nullopt;
  return "its operands are all constants, but it was not folded: " +
         result.why;
}
