//===- Builders.cpp - Helpers shared by the linalg-to-doppler patterns ----===//

#include "Builders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::doppler;
using namespace mlir::doppler::linalg_to_doppler;

RankedTensorType linalg_to_doppler::staticFloatTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape() ||
      !isa<FloatType>(tensor.getElementType()))
    return nullptr;
  return tensor;
}

std::optional<double> linalg_to_doppler::scalarConstant(Value value) {
  FloatAttr attr;
  if (!value || !isa<FloatType>(value.getType()))
    return std::nullopt;
  if (matchPattern(value, m_Constant(&attr)))
    return attr.getValueAsDouble();
  // A float cast of a constant (torch-mlir writes `arith.truncf %c : f64 to
  // f32` for scalar arguments): the constant rounded to the cast's type.
  Operation *castOp = value.getDefiningOp();
  if (isa_and_nonnull<arith::TruncFOp, arith::ExtFOp>(castOp) &&
      matchPattern(castOp->getOperand(0), m_Constant(&attr))) {
    APFloat converted = attr.getValue();
    bool losesInfo = false;
    converted.convert(cast<FloatType>(value.getType()).getFloatSemantics(),
                      APFloat::rmNearestTiesToEven, &losesInfo);
    return converted.convertToDouble();
  }
  return std::nullopt;
}

std::optional<double> linalg_to_doppler::constantFillValue(Value value) {
  if (!value)
    return std::nullopt;
  if (auto fill = value.getDefiningOp<FillOp>())
    return fill.getValue().convertToDouble();
  if (auto fill = value.getDefiningOp<linalg::FillOp>()) {
    if (fill.getInputs().size() == 1)
      return scalarConstant(fill.getInputs()[0]);
    return std::nullopt;
  }
  DenseFPElementsAttr dense;
  if (matchPattern(value, m_Constant(&dense)) && dense.isSplat())
    return dense.getSplatValue<APFloat>().convertToDouble();
  // A parallel structured op whose body yields a constant, or the value of
  // a scalar constant operand: a linalg.fill generalised
  // (linalg-generalize-named-ops), whose converted form would be a fill.
  auto op = value.getDefiningOp<linalg::LinalgOp>();
  if (!op || op->getNumResults() != 1 || !op.hasPureTensorSemantics() ||
      op.getNumParallelLoops() != op.getNumLoops() || !op.getBlock())
    return std::nullopt;
  Operation *yield = op.getBlock()->getTerminator();
  if (yield->getNumOperands() != 1)
    return std::nullopt;
  Value yielded = yield->getOperand(0);
  if (auto arg = dyn_cast<BlockArgument>(yielded)) {
    if (arg.getOwner() != op.getBlock() ||
        arg.getArgNumber() >= op.getNumDpsInputs())
      return std::nullopt;
    yielded = op.getDpsInputOperand(arg.getArgNumber())->get();
  }
  return scalarConstant(yielded);
}

JoinKind linalg_to_doppler::aggregationJoin(AggKind agg) {
  switch (agg) {
  case AggKind::Add: return JoinKind::Add;
  case AggKind::Mul: return JoinKind::Mul;
  case AggKind::Max: return JoinKind::Max;
  case AggKind::Min: return JoinKind::Min;
  }
  return JoinKind::Add;
}

void linalg_to_doppler::countConverted(LinalgToDopplerCounters *counters,
                                       Operation *op) {
  if (counters)
    ++counters->converted[op->getName().getStringRef()];
}

Value DopplerBuilder::einsum(StringRef spec, JoinKind join,
                             std::optional<AggKind> agg,
                             std::optional<double> scalar, ValueRange inputs,
                             RankedTensorType resultType) {
  MLIRContext *context = rewriter.getContext();
  auto op = EinsumOp::create(
      rewriter, loc, resultType, rewriter.getStringAttr(spec),
      JoinKindAttr::get(context, join),
      agg ? AggKindAttr::get(context, *agg) : AggKindAttr(),
      scalar ? rewriter.getF64FloatAttr(*scalar) : FloatAttr(), inputs);
  if (counters)
    ++counters->einsums;
  return op.getResult();
}

Value DopplerBuilder::fill(double value, RankedTensorType type) {
  return FillOp::create(rewriter, loc, type, rewriter.getF64FloatAttr(value))
      .getResult();
}

Value DopplerBuilder::slice(Value input, ArrayRef<int64_t> offsets,
                            RankedTensorType resultType) {
  return SliceOp::create(rewriter, loc, resultType, input,
                         rewriter.getDenseI64ArrayAttr(offsets))
      .getResult();
}

Value DopplerBuilder::reshape(Value input, RankedTensorType resultType) {
  if (input.getType() == resultType)
    return input;
  return ReshapeOp::create(rewriter, loc, resultType, input).getResult();
}

Value DopplerBuilder::block(Value value, ArrayRef<int64_t> offsets,
                            ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getShape() == shape)
    return value;
  auto blockType = RankedTensorType::get(shape, type.getElementType());
  if (std::optional<double> constant = constantFillValue(value);
      constant && isa<FloatType>(type.getElementType()))
    return fill(*constant, blockType);
  return slice(value, offsets, blockType);
}

Value DopplerBuilder::assemble(ArrayRef<int64_t> grid, ValueRange blocks,
                               RankedTensorType resultType) {
  if (blocks.size() == 1)
    return blocks.front();
  return AssembleOp::create(rewriter, loc, resultType,
                            rewriter.getDenseI64ArrayAttr(grid), blocks)
      .getResult();
}

Value DopplerBuilder::insert(Value source, Value dest,
                             ArrayRef<int64_t> offsets) {
  auto destType = cast<RankedTensorType>(dest.getType());
  auto sourceType = cast<RankedTensorType>(source.getType());
  int64_t rank = destType.getRank();
  // Per dimension, the pieces [0, off), [off, off + size), [off + size, D)
  // that are not empty, and which of them is the source's.
  SmallVector<SmallVector<std::pair<int64_t, int64_t>>> pieces(rank);
  SmallVector<int64_t> sourcePiece(rank);
  SmallVector<int64_t> grid(rank);
  for (int64_t d = 0; d < rank; ++d) {
    int64_t lo = offsets[d], size = sourceType.getDimSize(d),
            extent = destType.getDimSize(d);
    if (lo > 0)
      pieces[d].push_back({0, lo});
    sourcePiece[d] = pieces[d].size();
    pieces[d].push_back({lo, size});
    if (lo + size < extent)
      pieces[d].push_back({lo + size, extent - lo - size});
    grid[d] = pieces[d].size();
  }
  // Blocks in row-major grid order.
  SmallVector<Value> blocks;
  SmallVector<int64_t> index(rank, 0);
  while (true) {
    bool isSource = true;
    SmallVector<int64_t> blockOffsets, blockShape;
    for (int64_t d = 0; d < rank; ++d) {
      isSource &= index[d] == sourcePiece[d];
      blockOffsets.push_back(pieces[d][index[d]].first);
      blockShape.push_back(pieces[d][index[d]].second);
    }
    blocks.push_back(isSource ? source
                              : block(dest, blockOffsets, blockShape));
    int64_t d = rank - 1;
    while (d >= 0 && ++index[d] == grid[d])
      index[d--] = 0;
    if (d < 0)
      break;
  }
  return assemble(grid, blocks, destType);
}
