//===- ConvertDopplerToLinalg.cpp - doppler ops to linalg on tensors ------===//
//
// convert-doppler-to-linalg. The scalar bodies compute, in the tensors'
// element type, exactly the expressions of ::doppler::applyJoin and
// ::doppler::applyAgg (lib/Support/EinsumSpec.cpp), in the same order of
// operations, so that the result differs from the reference interpreter
// (which evaluates one op in double and rounds its result) only by the
// rounding of intermediate values and by the order in which a reduction
// adds up.
//
//===----------------------------------------------------------------------===//

#include "Doppler/Conversion/DopplerToLinalg.h"
#include "Doppler/Conversion/Passes.h"
#include "Doppler/Dialect/DopplerDialect.h"
#include "Doppler/Dialect/DopplerOps.h"
#include "Doppler/Dialect/DopplerTypes.h"
#include "Lowering.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"

namespace mlir::doppler {
#define GEN_PASS_DEF_CONVERTDOPPLERTOLINALGPASS
#include "Doppler/Conversion/Passes.h.inc"
} // namespace mlir::doppler

using namespace mlir;
using namespace mlir::doppler;
using namespace mlir::doppler::doppler_to_linalg;

Value doppler_to_linalg::floatConstant(OpBuilder &builder, Location loc,
                                       FloatType type, double value) {
  return arith::ConstantOp::create(builder, loc, type,
                                   builder.getFloatAttr(type, value));
}

namespace {

/// The identity of the aggregation in `type`; infinities for max and min.
TypedAttr aggIdentityAttr(FloatType type, AggKind agg) {
  const llvm::fltSemantics &sem = type.getFloatSemantics();
  switch (agg) {
  case AggKind::Add:
    return FloatAttr::get(type, llvm::APFloat::getZero(sem));
  case AggKind::Mul:
    return FloatAttr::get(type, llvm::APFloat::getOne(sem));
  case AggKind::Max:
    return FloatAttr::get(type, llvm::APFloat::getInf(sem, /*Negative=*/true));
  case AggKind::Min:
    return FloatAttr::get(type, llvm::APFloat::getInf(sem, /*Negative=*/false));
  }
  llvm_unreachable("unknown aggregation");
}

/// The join applied to `a` (and `b` for binary joins), in the order of
/// operations of ::doppler::applyJoin.
Value emitJoin(OpBuilder &b, Location loc, JoinKind join, Value x, Value y,
               double scalar) {
  auto type = cast<FloatType>(x.getType());
  auto cst = [&](double value) { return floatConstant(b, loc, type, value); };
  auto sigmoidDenominator = [&]() { // 1 + exp(-x)
    Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x));
    return arith::AddFOp::create(b, loc, cst(1.0), e).getResult();
  };
  switch (join) {
  case JoinKind::Identity:
    return x;
  case JoinKind::Add:
    return arith::AddFOp::create(b, loc, x, y);
  case JoinKind::Sub:
    return arith::SubFOp::create(b, loc, x, y);
  case JoinKind::Mul:
    return arith::MulFOp::create(b, loc, x, y);
  case JoinKind::Div:
    return arith::DivFOp::create(b, loc, x, y);
  case JoinKind::Max:
    return arith::MaximumFOp::create(b, loc, x, y);
  case JoinKind::Min:
    return arith::MinimumFOp::create(b, loc, x, y);
  case JoinKind::Pow:
    return math::PowFOp::create(b, loc, x, y);
  case JoinKind::Neg:
    return arith::NegFOp::create(b, loc, x);
  case JoinKind::Exp:
    return math::ExpOp::create(b, loc, x);
  case JoinKind::Log:
    return math::LogOp::create(b, loc, x);
  case JoinKind::Sqrt:
    return math::SqrtOp::create(b, loc, x);
  case JoinKind::Rsqrt: // 1 / sqrt(x), as the reference computes it.
    return arith::DivFOp::create(b, loc, cst(1.0),
                                 math::SqrtOp::create(b, loc, x));
  case JoinKind::Reciprocal:
    return arith::DivFOp::create(b, loc, cst(1.0), x);
  case JoinKind::Abs:
    return math::AbsFOp::create(b, loc, x);
  case JoinKind::Relu: { // x > 0 ? x : 0 (NaN gives 0).
    Value zero = cst(0.0);
    Value positive =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, zero);
    return arith::SelectOp::create(b, loc, positive, x, zero);
  }
  case JoinKind::Silu: // x / (1 + exp(-x))
    return arith::DivFOp::create(b, loc, x, sigmoidDenominator());
  case JoinKind::Gelu: {
    // 0.5 * x * (1 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))
    Value cube = arith::MulFOp::create(
        b, loc,
        arith::MulFOp::create(b, loc,
                              arith::MulFOp::create(b, loc, cst(0.044715), x),
                              x),
        x);
    Value inner = arith::MulFOp::create(b, loc, cst(0.7978845608028654),
                                        arith::AddFOp::create(b, loc, x, cube));
    Value onePlus =
        arith::AddFOp::create(b, loc, cst(1.0), math::TanhOp::create(b, loc, inner));
    return arith::MulFOp::create(
        b, loc, arith::MulFOp::create(b, loc, cst(0.5), x), onePlus);
  }
  case JoinKind::Tanh:
    return math::TanhOp::create(b, loc, x);
  case JoinKind::Sigmoid: // 1 / (1 + exp(-x))
    return arith::DivFOp::create(b, loc, cst(1.0), sigmoidDenominator());
  case JoinKind::Square:
    return arith::MulFOp::create(b, loc, x, x);
  case JoinKind::Scale:
    return arith::MulFOp::create(b, loc, x, cst(scalar));
  case JoinKind::Shift:
    return arith::AddFOp::create(b, loc, x, cst(scalar));
  case JoinKind::Erf:
    return math::ErfOp::create(b, loc, x);
  case JoinKind::Eq: // 1.0 where the (ordered) comparison holds, else 0.0
  case JoinKind::Ne: // unordered: true on NaN, as a != b
  case JoinKind::Lt:
  case JoinKind::Le:
  case JoinKind::Gt:
  case JoinKind::Ge: {
    arith::CmpFPredicate predicate =
        join == JoinKind::Eq   ? arith::CmpFPredicate::OEQ
        : join == JoinKind::Ne ? arith::CmpFPredicate::UNE
        : join == JoinKind::Lt ? arith::CmpFPredicate::OLT
        : join == JoinKind::Le ? arith::CmpFPredicate::OLE
        : join == JoinKind::Gt ? arith::CmpFPredicate::OGT
                               : arith::CmpFPredicate::OGE;
    Value holds = arith::CmpFOp::create(b, loc, predicate, x, y);
    return arith::UIToFPOp::create(b, loc, type, holds);
  }
  case JoinKind::Where: { // x != 0 (NaN too) ? y : -0.0
    Value set = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, x,
                                      cst(0.0));
    return arith::SelectOp::create(b, loc, set, y, cst(-0.0));
  }
  }
  llvm_unreachable("unknown join");
}

/// acc (+|*|max|min) value, as ::doppler::applyAgg.
Value emitAgg(OpBuilder &b, Location loc, AggKind agg, Value acc, Value value) {
  switch (agg) {
  case AggKind::Add:
    return arith::AddFOp::create(b, loc, acc, value);
  case AggKind::Mul:
    return arith::MulFOp::create(b, loc, acc, value);
  case AggKind::Max:
    return arith::MaximumFOp::create(b, loc, acc, value);
  case AggKind::Min:
    return arith::MinimumFOp::create(b, loc, acc, value);
  }
  llvm_unreachable("unknown aggregation");
}

/// The indexing maps of a generic over `loops` (each a letter of `spec`):
/// one per input term, then the output's.
SmallVector<AffineMap> indexingMaps(const ::doppler::EinsumSpec &spec,
                                    const std::string &loops,
                                    MLIRContext *ctx) {
  auto mapOf = [&](const std::string &term) {
    SmallVector<AffineExpr> exprs;
    for (char index : term)
      exprs.push_back(getAffineDimExpr(loops.find(index), ctx));
    return AffineMap::get(loops.size(), 0, exprs, ctx);
  };
  SmallVector<AffineMap> maps;
  for (const std::string &term : spec.inputs)
    maps.push_back(mapOf(term));
  maps.push_back(mapOf(spec.output));
  return maps;
}

/// doppler.einsum -> linalg.generic. Loops: the output's indices (parallel)
/// then the contracted ones (reduction), the order the interpreter visits.
struct EinsumLowering : OpConversionPattern<EinsumOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(EinsumOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    PlacementCopier placed(op);
    ::doppler::EinsumSpec spec = op.getParsedSpec();
    std::string loops = spec.output + spec.contractedIndices();
    MLIRContext *ctx = op.getContext();
    unsigned numLoops = loops.size();
    SmallVector<AffineMap> maps = indexingMaps(spec, loops, ctx);
    SmallVector<utils::IteratorType> iterators(numLoops,
                                               utils::IteratorType::parallel);
    for (unsigned d = spec.output.size(); d < numLoops; ++d)
      iterators[d] = utils::IteratorType::reduction;

    auto resultType = cast<RankedTensorType>(op.getType());
    auto elementType = cast<FloatType>(resultType.getElementType());
    Value init = placed(tensor::EmptyOp::create(
        rewriter, loc, resultType.getShape(), elementType));
    std::optional<AggKind> agg = op.getAggregation();
    if (agg) {
      Value identity = placed(arith::ConstantOp::create(
          rewriter, loc, aggIdentityAttr(elementType, *agg)));
      init = placed(linalg::FillOp::create(rewriter, loc, identity, init))
                 .getResult(0);
    }

    JoinKind join = op.getJoin();
    double scalar = op.getScalar() ? op.getScalar()->convertToDouble() : 0.0;
    auto generic = placed(linalg::GenericOp::create(
        rewriter, loc, TypeRange{resultType}, adaptor.getInputs(),
        ValueRange{init}, maps, iterators,
        [&](OpBuilder &b, Location bodyLoc, ValueRange args) {
          Value x = args[0];
          Value y = adaptor.getInputs().size() > 1 ? args[1] : Value();
          Value value = emitJoin(b, bodyLoc, join, x, y, scalar);
          // A conversion (identity to another element type): sitofp from
          // an integer, extf/truncf between floats.
          if (Type from = value.getType(); from != elementType) {
            if (isa<IntegerType>(from))
              value = arith::SIToFPOp::create(b, bodyLoc, elementType, value);
            else if (from.getIntOrFloatBitWidth() < elementType.getWidth())
              value = arith::ExtFOp::create(b, bodyLoc, elementType, value);
            else
              value = arith::TruncFOp::create(b, bodyLoc, elementType, value);
          }
          if (agg)
            value = emitAgg(b, bodyLoc, *agg, args.back(), value);
          linalg::YieldOp::create(b, bodyLoc, value);
        }));
    // The body's arguments default to their operands' locations, which
    // name other ops: they belong to this one.
    for (BlockArgument arg : generic.getRegion().front().getArguments())
      arg.setLoc(loc);
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

/// doppler.fused -> one linalg.generic over the output's indices (all
/// parallel) whose body applies the program's steps with the einsum's
/// per-join builder, so a fused chain stays one loop nest (and one IREE
/// dispatch) with its intermediates in registers. The steps compute in the
/// element type, as the einsums they came from did.
struct FusedLowering : OpConversionPattern<FusedOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(FusedOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    PlacementCopier placed(op);
    ::doppler::EinsumSpec spec = op.getParsedSpec();
    ::doppler::JoinProgram program = op.getParsedProgram();
    // The dialect's join for each step (the names are shared).
    SmallVector<JoinKind> joins;
    for (const ::doppler::JoinStep &step : program.steps) {
      std::optional<JoinKind> join =
          symbolizeJoinKind(::doppler::joinKindName(step.join));
      if (!join)
        return rewriter.notifyMatchFailure(op, "join without a dialect kind");
      joins.push_back(*join);
    }
    MLIRContext *ctx = op.getContext();
    const std::string &loops = spec.output;
    unsigned numLoops = loops.size();
    SmallVector<AffineMap> maps = indexingMaps(spec, loops, ctx);
    SmallVector<utils::IteratorType> iterators(numLoops,
                                               utils::IteratorType::parallel);

    auto resultType = cast<RankedTensorType>(op.getType());
    Value init = placed(tensor::EmptyOp::create(
        rewriter, loc, resultType.getShape(), resultType.getElementType()));
    auto generic = placed(linalg::GenericOp::create(
        rewriter, loc, TypeRange{resultType}, adaptor.getInputs(),
        ValueRange{init}, maps, iterators,
        [&](OpBuilder &b, Location bodyLoc, ValueRange args) {
          SmallVector<Value> results;
          auto operandValue = [&](const ::doppler::JoinOperand &operand) {
            return operand.isStep ? results[operand.index]
                                  : args[operand.index];
          };
          for (auto [step, join] : llvm::zip_equal(program.steps, joins)) {
            Value x = operandValue(step.operands[0]);
            Value y = step.operands.size() > 1
                          ? operandValue(step.operands[1])
                          : Value();
            results.push_back(emitJoin(b, bodyLoc, join, x, y, step.scalar));
          }
          linalg::YieldOp::create(b, bodyLoc, results.back());
        }));
    for (BlockArgument arg : generic.getRegion().front().getArguments())
      arg.setLoc(loc);
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

/// doppler.slice -> tensor.extract_slice (unit strides).
struct SliceLowering : OpConversionPattern<SliceOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(SliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    PlacementCopier placed(op);
    auto resultType = cast<RankedTensorType>(op.getType());
    SmallVector<int64_t> strides(resultType.getRank(), 1);
    auto slice = placed(tensor::ExtractSliceOp::create(
        rewriter, op.getLoc(), resultType, adaptor.getInput(), ValueRange{},
        ValueRange{}, ValueRange{}, op.getOffsets(), resultType.getShape(),
        strides));
    rewriter.replaceOp(op, slice.getResult());
    return success();
  }
};

/// doppler.reshape -> tensor.collapse_shape or tensor.expand_shape where it
/// merges or splits groups of dims (a flatten, a head split, unit dims),
/// else a collapse to one dim and an expand from it ([6, 4] -> [4, 6]): all
/// static, which upstream passes and IREE take as views.
struct ReshapeLowering : OpConversionPattern<ReshapeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ReshapeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    PlacementCopier placed(op);
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto from = cast<RankedTensorType>(input.getType());
    RankedTensorType to = op.getType();
    if (from == to) {
      rewriter.replaceOp(op, input);
      return success();
    }
    auto all = [](int64_t rank) {
      ReassociationIndices group;
      for (int64_t d = 0; d < rank; ++d)
        group.push_back(d);
      return SmallVector<ReassociationIndices>{group};
    };
    if (from.getRank() >= to.getRank())
      if (auto groups =
              getReassociationIndicesForCollapse(from.getShape(), to.getShape())) {
        rewriter.replaceOp(op, placed(tensor::CollapseShapeOp::create(
                                   rewriter, loc, to, input, *groups))
                                   .getResult());
        return success();
      }
    if (from.getRank() <= to.getRank())
      if (auto groups =
              getReassociationIndicesForCollapse(to.getShape(), from.getShape())) {
        rewriter.replaceOp(op, placed(tensor::ExpandShapeOp::create(
                                   rewriter, loc, to, input, *groups))
                                   .getResult());
        return success();
      }
    // Neither: both ranks are at least 1 here (a rank-0 side has one
    // element, and every shape collapses into it).
    Value flat = input;
    if (from.getRank() > 1)
      flat = placed(tensor::CollapseShapeOp::create(
          rewriter, loc,
          RankedTensorType::get({from.getNumElements()}, to.getElementType()),
          input, all(from.getRank())));
    Value result = flat;
    if (to.getRank() > 1)
      result = placed(tensor::ExpandShapeOp::create(rewriter, loc, to, flat,
                                                    all(to.getRank())));
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// doppler.assemble -> tensor.empty, then one tensor.insert_slice per block
/// at its offsets (blocks tile the result, so every element is written); or,
/// with `useConcat`, nested tensor.concat ops (innermost grid dimension
/// first).
struct AssembleLowering : OpConversionPattern<AssembleOp> {
  AssembleLowering(MLIRContext *ctx, bool useConcat)
      : OpConversionPattern(ctx), useConcat(useConcat) {}

  LogicalResult
  matchAndRewrite(AssembleOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    PlacementCopier placed(op);
    auto resultType = cast<RankedTensorType>(op.getType());
    if (useConcat && resultType.getRank() > 0) {
      SmallVector<Value> blocks(adaptor.getBlocks().begin(),
                                adaptor.getBlocks().end());
      ArrayRef<int64_t> grid = op.getGrid();
      // Blocks are in row-major grid order: concatenating runs of
      // grid[d] consecutive values along d, from the last dimension to the
      // first, leaves one value.
      for (int64_t d = static_cast<int64_t>(grid.size()) - 1; d >= 0; --d) {
        if (grid[d] == 1)
          continue;
        SmallVector<Value> merged;
        for (size_t i = 0; i < blocks.size(); i += grid[d]) {
          ValueRange run(ArrayRef<Value>(blocks).slice(i, grid[d]));
          merged.push_back(
              placed(tensor::ConcatOp::create(rewriter, loc, d, run)));
        }
        blocks = std::move(merged);
      }
      rewriter.replaceOp(op, blocks.front());
      return success();
    }
    Value result = placed(tensor::EmptyOp::create(
        rewriter, loc, resultType.getShape(), resultType.getElementType()));
    for (auto [i, block] : llvm::enumerate(adaptor.getBlocks())) {
      auto blockType = cast<RankedTensorType>(block.getType());
      SmallVector<int64_t> strides(blockType.getRank(), 1);
      result = placed(tensor::InsertSliceOp::create(
          rewriter, loc, block, result, ValueRange{}, ValueRange{},
          ValueRange{}, op.getBlockOffsets(i), blockType.getShape(),
          strides));
    }
    rewriter.replaceOp(op, result);
    return success();
  }

private:
  bool useConcat;
};

/// doppler.fill -> linalg.fill of a tensor.empty.
struct FillLowering : OpConversionPattern<FillOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(FillOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    PlacementCopier placed(op);
    auto resultType = cast<RankedTensorType>(op.getType());
    auto elementType = cast<FloatType>(resultType.getElementType());
    Value empty = placed(tensor::EmptyOp::create(
        rewriter, loc, resultType.getShape(), elementType));
    Value value = placed(arith::ConstantOp::create(
        rewriter, loc,
        FloatAttr::get(elementType, op.getValue().convertToDouble())));
    auto fill = placed(linalg::FillOp::create(rewriter, loc, value, empty));
    rewriter.replaceOp(op, fill.getResults());
    return success();
  }
};

/// doppler.gather -> a linalg.generic over the result's dims that reads the
/// indices at the result's index dims and the table by tensor.extract. The
/// index is cast to `index` and clamped to [0, extent - 1]: linalg cannot
/// fail, and a read out of bounds would be undefined, so an out-of-range
/// index (an error in the interpreter and the runtime) reads the nearest
/// slice. A table empty along the axis is refused before conversion.
struct GatherLowering : OpConversionPattern<GatherOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(GatherOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    PlacementCopier placed(op);
    MLIRContext *ctx = rewriter.getContext();
    auto resultType = cast<RankedTensorType>(op.getType());
    auto tableType = cast<RankedTensorType>(adaptor.getTable().getType());
    auto indicesType = cast<RankedTensorType>(adaptor.getIndices().getType());
    int64_t axis = op.getAxis();
    int64_t rank = resultType.getRank();
    int64_t indexRank = indicesType.getRank();
    int64_t last = tableType.getDimSize(axis) - 1;
    SmallVector<AffineExpr> indexDims;
    for (int64_t d = 0; d < indexRank; ++d)
      indexDims.push_back(getAffineDimExpr(axis + d, ctx));
    SmallVector<AffineMap> maps = {AffineMap::get(rank, 0, indexDims, ctx),
                                   rewriter.getMultiDimIdentityMap(rank)};
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    Value init = placed(tensor::EmptyOp::create(
        rewriter, loc, resultType.getShape(), resultType.getElementType()));
    Value table = adaptor.getTable();
    auto generic = placed(linalg::GenericOp::create(
        rewriter, loc, TypeRange{resultType},
        ValueRange{adaptor.getIndices()}, ValueRange{init}, maps, iterators,
        [&](OpBuilder &b, Location l, ValueRange args) {
          // Float indices (integers carried as floats) truncate; the
          // runtime checks they are integers, this export clamps as below.
          Value index = args[0];
          if (isa<FloatType>(index.getType()))
            index = arith::FPToSIOp::create(b, l, b.getI64Type(), index);
          Value position =
              arith::IndexCastOp::create(b, l, b.getIndexType(), index);
          position = arith::MaxSIOp::create(
              b, l, position, arith::ConstantIndexOp::create(b, l, 0));
          position = arith::MinSIOp::create(
              b, l, position, arith::ConstantIndexOp::create(b, l, last));
          SmallVector<Value> coords;
          for (int64_t d = 0; d < axis; ++d)
            coords.push_back(linalg::IndexOp::create(b, l, d));
          coords.push_back(position);
          for (int64_t d = axis + 1; d < tableType.getRank(); ++d)
            coords.push_back(linalg::IndexOp::create(b, l, d - 1 + indexRank));
          Value element = tensor::ExtractOp::create(b, l, table, coords);
          linalg::YieldOp::create(b, l, element);
        }));
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

/// Why a value cannot be a linalg tensor, or an empty string.
std::string unsupportedType(Type type) {
  if (isa<ValueType>(type))
    return "is an opaque !doppler.value";
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return isa<TensorType>(type) ? "is an unranked tensor" : "";
  if (!tensor.hasStaticShape())
    return "has a dynamic shape";
  return "";
}

/// Offload is a runtime's concern: IREE (and linalg on tensors) manage
/// their own memory, so an evict and its reloads fold to the evicted value.
/// The users of a reload then read that value where it was produced; a
/// reload onto another device becomes a use across devices, which the IREE
/// export turns into a flow.tensor.transfer like any other.
struct EvictLowering : OpConversionPattern<EvictOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(EvictOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, adaptor.getInput());
    return success();
  }
};

struct ReloadLowering : OpConversionPattern<ReloadOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ReloadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, adaptor.getStash());
    return success();
  }
};

struct ConvertDopplerToLinalgPass
    : mlir::doppler::impl::ConvertDopplerToLinalgPassBase<ConvertDopplerToLinalgPass> {
  using Base::Base;

  void runOnOperation() override {
    DopplerToLinalgOptions options;
    options.assembleWithConcat = assembleWithConcat;
    if (failed(convertDopplerToLinalg(getOperation(), options)))
      signalPassFailure();
  }
};

} // namespace

void mlir::doppler::populateDopplerToLinalgPatterns(
    RewritePatternSet &patterns, const DopplerToLinalgOptions &options) {
  patterns.add<EinsumLowering, FusedLowering, SliceLowering, ReshapeLowering,
               FillLowering, EvictLowering, ReloadLowering, GatherLowering>(
      patterns.getContext());
  patterns.add<AssembleLowering>(patterns.getContext(),
                                 options.assembleWithConcat);
  populateWindowLoweringPatterns(patterns);
}

void mlir::doppler::configureDopplerToLinalgTarget(ConversionTarget &target) {
  target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect,
                         math::MathDialect, tensor::TensorDialect>();
  target.addIllegalOp<EinsumOp, FusedOp, SliceOp, AssembleOp, ReshapeOp,
                      FillOp, ConvOp, PoolOp, EvictOp, ReloadOp, TaskOp,
                      GatherOp>();
  target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
}

LogicalResult mlir::doppler::checkDopplerToLinalgSupported(Operation *root) {
  bool ok = true;
  root->walk([&](Operation *op) {
    if (!isa_and_nonnull<DopplerDialect>(op->getDialect()))
      return;
    if (isa<TaskOp>(op)) {
      op->emitOpError()
          << "is a cost-only op on opaque values; it has no tensor "
             "semantics to lower to linalg";
      ok = false;
      return;
    }
    if (auto gather = dyn_cast<GatherOp>(op)) {
      auto table = cast<RankedTensorType>(gather.getTable().getType());
      auto result = cast<RankedTensorType>(gather.getType());
      if (table.hasStaticShape() && result.hasStaticShape() &&
          table.getDimSize(gather.getAxis()) == 0 &&
          result.getNumElements() > 0) {
        op->emitOpError() << "gathers from a table empty along axis "
                          << gather.getAxis()
                          << ": every index is out of range, which linalg "
                             "cannot report";
        ok = false;
        return;
      }
    }
    auto check = [&](Value value, StringRef what, unsigned index) {
      std::string why = unsupportedType(value.getType());
      if (why.empty())
        return true;
      op->emitOpError() << "cannot be lowered to linalg: " << what << " "
                        << index << " " << why << " (" << value.getType()
                        << "); linalg on tensors needs static shapes";
      return false;
    };
    for (auto [i, operand] : llvm::enumerate(op->getOperands()))
      if (!check(operand, "operand", i)) {
        ok = false;
        return;
      }
    for (auto [i, result] : llvm::enumerate(op->getResults()))
      if (!check(result, "result", i)) {
        ok = false;
        return;
      }
  });
  return success(ok);
}

LogicalResult
mlir::doppler::convertDopplerToLinalg(Operation *root,
                                      const DopplerToLinalgOptions &options) {
  if (failed(checkDopplerToLinalgSupported(root)))
    return failure();
  MLIRContext *ctx = root->getContext();
  ConversionTarget target(*ctx);
  configureDopplerToLinalgTarget(target);
  RewritePatternSet patterns(ctx);
  populateDopplerToLinalgPatterns(patterns, options);
  return applyPartialConversion(root, target, std::move(patterns));
}
