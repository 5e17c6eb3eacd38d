//===- Gathers.cpp - tensor.extract in linalg bodies to doppler.gather ----===//
//
// torch-mlir lowers `aten.embedding`, `index_select` and advanced indexing
// to a parallel linalg.generic whose body yields `tensor.extract %table[..]`
// of a tensor from outside the body. Two forms become one doppler.gather:
//
// - One axis read at integer data: one index of the extract is an input
//   element (`index_cast`, also through torch-mlir's `select(i < 0, i + N,
//   i)` wrap, N the table's extent: an index in range reads the same; a
//   negative one is an error where the gather runs; or `fptosi` of a float
//   element: an index computed from data, IntegerCarriers.cpp), every
//   other index a loop (`linalg.index`) over the table's whole extent. The
//   gather takes
//   the table and that input (its unit dims dropped) along the axis; an
//   identity einsum puts the result's dims in the output's order.
// - Every index computed from constants and loops only (as_strided views,
//   positions from `arange`): the flat position of every output element is
//   computed now into an i64 constant, and the table, reshaped to one dim,
//   is gathered along it.
//
//===----------------------------------------------------------------------===//

#include "BodyEvaluator.h"
#include "Builders.h"
#include "Prepare.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::doppler;
using namespace mlir::doppler::linalg_to_doppler;

namespace {

/// The extract a gather's body yields, if the table is from outside.
tensor::ExtractOp yieldedExtract(linalg::GenericOp op) {
  if (op->getNumResults() != 1 ||
      op.getNumParallelLoops() != op.getNumLoops() ||
      !op.hasPureTensorSemantics())
    return nullptr;
  Value yielded = op.getBody()->getTerminator()->getOperand(0);
  auto extract = yielded.getDefiningOp<tensor::ExtractOp>();
  if (!extract || extract->getBlock() != op.getBody())
    return nullptr;
  auto table = dyn_cast<RankedTensorType>(extract.getTensor().getType());
  Type element = table ? table.getElementType() : Type();
  if (!table || !table.hasStaticShape() ||
      extract.getTensor().getParentBlock() == op.getBody() ||
      !(isa<FloatType>(element) || element.isInteger(32) ||
        element.isInteger(64)))
    return nullptr;
  return extract;
}

/// The block argument `index` casts (through the negative-index wrap by
/// `extent`), or null.
BlockArgument castArgument(Value index, int64_t extent) {
  auto cast = index.getDefiningOp<arith::IndexCastOp>();
  if (!cast)
    return nullptr;
  Value v = cast.getIn();
  if (auto select = v.getDefiningOp<arith::SelectOp>()) {
    auto cmp = select.getCondition().getDefiningOp<arith::CmpIOp>();
    auto add = select.getTrueValue().getDefiningOp<arith::AddIOp>();
    IntegerAttr zero, n;
    if (!cmp || cmp.getPredicate() != arith::CmpIPredicate::slt || !add ||
        cmp.getLhs() != select.getFalseValue() ||
        !matchPattern(cmp.getRhs(), m_Constant(&zero)) || !zero.getValue().isZero() ||
        add.getLhs() != select.getFalseValue() ||
        !matchPattern(add.getRhs(), m_Constant(&n)) ||
        n.getValue().getSExtValue() != extent)
      return nullptr;
    v = select.getFalseValue();
  }
  // An index computed from data, carried as a float (IntegerCarriers.cpp):
  // doppler.gather reads the float indices, checking they are integers.
  if (auto toInt = v.getDefiningOp<arith::FPToSIOp>())
    v = toInt.getIn();
  return dyn_cast<BlockArgument>(v);
}

/// The single-axis plan: the axis, the index operand and, per table dim
/// and per index dim kept, its loop.
struct AxisGather {
  int64_t axis = -1; ///< in the table without its unit dims read at 0
  SmallVector<int64_t> unitDims; ///< table dims of extent 1 read at 0
  OpOperand *indices = nullptr;
  SmallVector<unsigned> tableLoops; ///< loops of the table dims but `axis`
  SmallVector<unsigned> indexLoops; ///< loops of the index's non-unit dims
  SmallVector<int64_t> indexShape;  ///< the index's shape without unit dims
  /// Batched ("take along") dims: a loop reading both table dim k < axis
  /// and the index dim at position r of indexShape; (k, r) pairs. The
  /// table dims before the axis are then all batched, in order.
  SmallVector<std::pair<int64_t, int64_t>> batch;
};

std::string planAxis(linalg::GenericOp op, tensor::ExtractOp extract,
                     AxisGather &plan) {
  ArrayRef<int64_t> table = extract.getTensor().getType().getShape();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<bool> used(ranges.size(), false);
  int64_t kept = 0; // table dims kept before k
  for (auto [k, index] : llvm::enumerate(extract.getIndices())) {
    APInt zero; // a unit dim read at 0 (torch-mlir's [1, N] buffers)
    if (table[k] == 1 && matchPattern(index, m_ConstantInt(&zero)) &&
        zero.isZero()) {
      plan.unitDims.push_back(k);
      continue;
    }
    ++kept;
    if (auto loop = index.getDefiningOp<linalg::IndexOp>()) {
      unsigned d = loop.getDim();
      if (used[d] || ranges[d] != table[k])
        return "a table dim is read at a loop that is not its whole extent";
      used[d] = true;
      plan.tableLoops.push_back(d);
      continue;
    }
    BlockArgument arg = castArgument(index, table[k]);
    if (!arg || arg.getOwner() != op.getBody() ||
        arg.getArgNumber() >= op.getNumDpsInputs() || plan.axis >= 0)
      return "an index is neither a loop nor one integer input element";
    plan.axis = kept - 1;
    plan.indices = op.getDpsInputOperand(arg.getArgNumber());
  }
  if (plan.axis < 0)
    return "no index is read from an input";
  auto indexType = cast<RankedTensorType>(plan.indices->get().getType());
  Type indexElement = indexType.getElementType();
  if (!indexElement.isInteger(64) && !indexElement.isInteger(32) &&
      !indexElement.isF32() && !indexElement.isF64())
    return "the indices are not i32, i64, f32 or f64";
  AffineMap map = op.getMatchingIndexingMap(plan.indices);
  for (auto [r, expr] : llvm::enumerate(map.getResults())) {
    if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
      unsigned d = dim.getPosition();
      const auto *shared = llvm::find(plan.tableLoops, d);
      int64_t k = shared - plan.tableLoops.begin();
      if (used[d] && (shared == plan.tableLoops.end() || k >= plan.axis))
        return "a loop indexes both the table and the indices";
      if (used[d]) // a batched dim: per index, its own table slice
        plan.batch.push_back({k, static_cast<int64_t>(plan.indexShape.size())});
      used[d] = true;
      plan.indexLoops.push_back(d);
      plan.indexShape.push_back(indexType.getDimSize(r));
      continue;
    }
    auto c = dyn_cast<AffineConstantExpr>(expr);
    if (!c || c.getValue() != 0 || indexType.getDimSize(r) != 1)
      return "the indices' map is not a projected permutation";
  }
  if (llvm::count(used, false))
    return "a loop is read by neither the table nor the indices";
  if (!plan.batch.empty() &&
      static_cast<int64_t>(plan.batch.size()) != plan.axis)
    return "a loop indexes both the table and the indices, and another "
           "table dim before the axis does not";
  return "";
}

/// Why a gather-shaped generic would not convert: std::nullopt when it is
/// not one (no extract yielded), empty when it converts.
std::optional<std::string> whyNotGather(linalg::GenericOp op,
                                        AxisGather *plan, int64_t limit,
                                        bool *flat) {
  tensor::ExtractOp extract = yieldedExtract(op);
  if (!extract)
    return std::nullopt;
  AffineMap out = op.getIndexingMapsArray().back();
  if (!out.isPermutation())
    return std::string("its output map is not a permutation of its loops");
  AxisGather local;
  std::string axisWhy = planAxis(op, extract, plan ? *plan : local);
  *flat = false;
  if (axisWhy.empty())
    return std::string();
  // Every index from constants and loops: positions computed now.
  for (OpOperand *input : op.getDpsInputOperands())
    if (!op.getMatchingBlockArgument(input).use_empty() &&
        !isConstantTensor(input->get()))
      return "a gather (" + axisWhy + ") whose indices are computed from "
             "tensors that are not constants";
  BodyEvaluator body;
  std::string why = body.prepare(*op.getBody(), limit, extract);
  if (!why.empty())
    return "a gather (" + axisWhy + ") whose indices are not constants: " + why;
  int64_t points = 1;
  for (int64_t r : op.getStaticLoopRanges())
    points *= r;
  if (points > limit)
    return "a gather at constant positions over the fold limit (option "
           "fold-limit)";
  *flat = true;
  return std::string();
}

/// A batched gather (`out[b, t] = table[b, idx[b, t]]`, torch-mlir's
/// position ids of a batch) as a plain one: the table's batch dims and
/// axis merged into one, the indices made f64 (a conversion einsum when
/// integers) and offset by each batch position times its stride (exact in
/// f64), so that the gather reads along the merged axis. An index outside
/// [0, extent) becomes -1, so that it fails where the gather runs (as any
/// bad index does) instead of reading a neighbouring batch's row.
std::pair<Value, Value> flattenBatch(DopplerBuilder &b, const AxisGather &plan,
                                     Value table, Value indices) {
  auto tableType = cast<RankedTensorType>(table.getType());
  ArrayRef<int64_t> shape = tableType.getShape();
  SmallVector<int64_t> flat{1};
  for (int64_t k = 0; k <= plan.axis; ++k)
    flat[0] *= shape[k];
  flat.append(shape.begin() + plan.axis + 1, shape.end());
  table = b.reshape(table,
                    RankedTensorType::get(flat, tableType.getElementType()));
  auto indexType = cast<RankedTensorType>(indices.getType());
  Type f64 = b.rewriter.getF64Type();
  auto f64Type = indexType.clone(f64);
  std::string term(kLetters, indexType.getRank());
  if (indexType.getElementType() != f64)
    indices = b.einsum(term + "->" + term, JoinKind::Identity, std::nullopt,
                       std::nullopt, {indices}, f64Type);
  int64_t stride = shape[plan.axis];
  auto scalar = RankedTensorType::get({}, f64);
  auto compare = [&](JoinKind join, Value x, double bound) {
    return b.einsum(term + ",->" + term, join, std::nullopt, std::nullopt,
                    {x, b.fill(bound, scalar)}, f64Type);
  };
  std::string two = term + "," + term + "->" + term;
  Value valid = b.einsum(two, JoinKind::Mul, std::nullopt, std::nullopt,
                         {compare(JoinKind::Ge, indices, 0),
                          compare(JoinKind::Lt, indices, stride)},
                         f64Type);
  for (auto [k, r] : llvm::reverse(plan.batch)) {
    SmallVector<APFloat> offsets;
    for (int64_t i = 0; i < shape[k]; ++i)
      offsets.push_back(APFloat(static_cast<double>(i * stride)));
    Value offset = arith::ConstantOp::create(
        b.rewriter, b.loc,
        DenseElementsAttr::get(RankedTensorType::get({shape[k]}, f64),
                               offsets));
    indices = b.einsum(term + "," + term[r] + "->" + term, JoinKind::Add,
                       std::nullopt, std::nullopt, {indices, offset}, f64Type);
    stride *= shape[k];
  }
  // where(valid, flat) + where(!valid, -1): exact either way.
  Value invalid = compare(JoinKind::Eq, valid, 0);
  Value bad = b.einsum(term + ",->" + term, JoinKind::Where, std::nullopt,
                       std::nullopt, {invalid, b.fill(-1, scalar)}, f64Type);
  indices = b.einsum(two, JoinKind::Where, std::nullopt, std::nullopt,
                     {valid, indices}, f64Type);
  indices = b.einsum(two, JoinKind::Add, std::nullopt, std::nullopt,
                     {indices, bad}, f64Type);
  return {table, indices};
}

struct GatherPattern : public OpRewritePattern<linalg::GenericOp> {
  GatherPattern(MLIRContext *context, int64_t limit,
                LinalgToDopplerCounters *counters)
      : OpRewritePattern(context, /*benefit=*/2), limit(limit),
        counters(counters) {}

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    AxisGather plan;
    bool flat = false;
    std::optional<std::string> why = whyNotGather(op, &plan, limit, &flat);
    if (!why || !why->empty())
      return rewriter.notifyMatchFailure(op, why ? *why : "not a gather");
    tensor::ExtractOp extract = yieldedExtract(op);
    Value table = extract.getTensor();
    auto tableType = cast<RankedTensorType>(table.getType());
    Type element = tableType.getElementType();
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    DopplerBuilder b(rewriter, op.getLoc(), counters);
    SmallVector<unsigned> loops; // the gather's dims, as loops
    Value gathered;
    if (flat) {
      SmallVector<int64_t> ranges = op.getStaticLoopRanges();
      std::optional<ConstTensor> positions = flatPositions(op, extract);
      if (!positions)
        return rewriter.notifyMatchFailure(op, "an index is out of range");
      Value flatTable = b.reshape(
          table, RankedTensorType::get({tableType.getNumElements()}, element));
      Value indices = materialize(rewriter, op.getLoc(), *positions);
      gathered = GatherOp::create(rewriter, op.getLoc(),
                                  RankedTensorType::get(ranges, element),
                                  flatTable, indices,
                                  rewriter.getI64IntegerAttr(0));
      for (unsigned d = 0; d < ranges.size(); ++d)
        loops.push_back(d);
    } else {
      if (!plan.unitDims.empty()) { // the table without them
        SmallVector<int64_t> kept;
        for (auto [k, extent] : llvm::enumerate(tableType.getShape()))
          if (!llvm::is_contained(plan.unitDims, static_cast<int64_t>(k)))
            kept.push_back(extent);
        tableType = RankedTensorType::get(kept, element);
        table = b.reshape(table, tableType);
      }
      auto indexType = cast<RankedTensorType>(plan.indices->get().getType());
      Value indices = b.reshape(
          plan.indices->get(),
          RankedTensorType::get(plan.indexShape, indexType.getElementType()));
      if (!plan.batch.empty()) {
        std::tie(table, indices) = flattenBatch(b, plan, table, indices);
        tableType = cast<RankedTensorType>(table.getType());
        plan.tableLoops.erase(plan.tableLoops.begin(),
                              plan.tableLoops.begin() + plan.axis);
        plan.axis = 0;
      }
      SmallVector<int64_t> shape;
      ArrayRef<int64_t> tableShape = tableType.getShape();
      for (int64_t k = 0; k < plan.axis; ++k)
        shape.push_back(tableShape[k]);
      shape.append(plan.indexShape.begin(), plan.indexShape.end());
      for (int64_t k = plan.axis + 1; k < tableType.getRank(); ++k)
        shape.push_back(tableShape[k]);
      loops.append(plan.tableLoops.begin(),
                   plan.tableLoops.begin() + plan.axis);
      loops.append(plan.indexLoops.begin(), plan.indexLoops.end());
      loops.append(plan.tableLoops.begin() + plan.axis, plan.tableLoops.end());
      gathered = GatherOp::create(rewriter, op.getLoc(),
                                  RankedTensorType::get(shape, element), table,
                                  indices, rewriter.getI64IntegerAttr(plan.axis));
    }
    // The output's dims in its map's order.
    AffineMap out = op.getIndexingMapsArray().back();
    std::string from, to;
    for (unsigned d : loops)
      from += kLetters[d];
    for (AffineExpr expr : out.getResults())
      to += kLetters[cast<AffineDimExpr>(expr).getPosition()];
    Value result = gathered;
    if (from != to) {
      if (!isa<FloatType>(element) || loops.size() > kMaxLetters)
        return rewriter.notifyMatchFailure(
            op, "an integer gather whose dims are not in the output's order");
      result = b.einsum(from + "->" + to, JoinKind::Identity, std::nullopt,
                        std::nullopt, ValueRange{gathered}, resultType);
    }
    result = b.reshape(result, resultType);
    countConverted(counters, op);
    rewriter.replaceOp(op, result);
    return success();
  }

  /// The row-major position in the table of every loop point's element.
  std::optional<ConstTensor> flatPositions(linalg::GenericOp op,
                                           tensor::ExtractOp extract) const {
    BodyEvaluator body;
    if (!body.prepare(*op.getBody(), limit, extract).empty())
      return std::nullopt;
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    ArrayRef<int64_t> table = extract.getTensor().getType().getShape();
    ConstTensor positions;
    positions.type =
        RankedTensorType::get(ranges, IntegerType::get(op.getContext(), 64));
    SmallVector<int64_t> point(ranges.size(), 0);
    SmallVector<Scalar> args(op.getBody()->getNumArguments()), indices;
    SmallVector<std::optional<ConstTensor>> inputs;
    for (OpOperand *input : op.getDpsInputOperands())
      inputs.push_back(readConstant(input->get(), limit));
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    for (int64_t k = 0, e = positions.type.getNumElements(); k < e; ++k) {
      for (unsigned i = 0; i < inputs.size(); ++i) {
        if (!inputs[i])
          continue; // not read by the index computation (prepare checked)
        SmallVector<int64_t> at = maps[i].compose(point);
        int64_t p = 0;
        for (auto [x, n] : llvm::zip(at, inputs[i]->type.getShape()))
          p = p * n + x;
        args[i].f = inputs[i]->isFloat() ? inputs[i]->floats[p] : 0;
        args[i].i = inputs[i]->isFloat() ? 0 : inputs[i]->ints[p];
      }
      if (!body.run(args, point, indices))
        return std::nullopt;
      int64_t position = 0;
      for (auto [x, n] : llvm::zip(indices, table)) {
        if (x.i < 0 || x.i >= n)
          return std::nullopt;
        position = position * n + x.i;
      }
      positions.ints.push_back(position);
      for (int64_t d = static_cast<int64_t>(ranges.size()) - 1; d >= 0; --d) {
        if (++point[d] < ranges[d])
          break;
        point[d] = 0;
      }
    }
    return positions;
  }

  int64_t limit;
  LinalgToDopplerCounters *counters;
};

} // namespace

void linalg_to_doppler::populateGatherPatterns(
    RewritePatternSet &patterns, int64_t limit,
    LinalgToDopplerCounters *counters) {
  patterns.add<GatherPattern>(patterns.getContext(), limit, counters);
}

std::optional<std::string> linalg_to_doppler::explainGather(Operation *op,
                                                            int64_t limit) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic)
    return std::nullopt;
  bool flat = false;
  return whyNotGather(generic, nullptr, limit, &flat);
}
