//===- Windows.cpp - linalg convolutions and pooling to doppler.conv/pool -===//
//
// One pattern for every structured op that slides a window: the named
// convolutions and pools of any layout (conv_2d_nchw_fchw, conv_2d_nhwc_hwcf,
// depthwise_conv_*, conv_2d_ngchw_gfchw, pooling_nchw_max, pooling_nhwc_sum,
// ...) and linalg.generic ops with the same maps and bodies, read from their
// indexing maps, not their names:
//
//   - one input (the image) has results `o * stride + k * dilation`, one per
//     spatial dim, o a parallel loop of the output and k a reduction loop of
//     the other input (the weight; for a pool, the shape-only window);
//   - every other loop is a batch dim (image and output), a group dim
//     (image, weight and output), an output-channel dim (weight and output)
//     or an input-channel dim (image and weight, reduced);
//   - the body is `acc + image * weight` (a convolution), `max(acc, image)`
//     (a max pool) or `acc + image` (a sum pool).
//
// The op becomes one doppler.conv or doppler.pool in the channels-first
// layout, with identity-join einsums (transposes) and doppler.reshapes
// around it where the layout differs (NHWC, grouped [N, G, C, ..], depthwise
// [C, K..] weights, missing batch or channel dims). A tensor.pad of the
// image with the op's padding value (0; -inf for a max pool) and zero
// padding on its non-spatial dims becomes the op's padding. A sum pool
// whose only user divides it by the kernel's volume becomes one average
// pool; any other sum pool is an average pool scaled by the volume where
// that is exact (a power of two), else a depthwise convolution with a
// weight of ones. An init other than the combination's identity is
// combined with the result by one more einsum. WindowAnalysis.cpp reads the
// op (WindowPlan.h); this file emits the doppler ops.
//
//===----------------------------------------------------------------------===//

#include "Builders.h"
#include "ScalarBodies.h"
#include "WindowPlan.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::doppler;
using namespace mlir::doppler::linalg_to_doppler;

namespace {

/// `value` rounded to the float type `type`.
double roundedTo(double value, Type type) {
  APFloat converted(value);
  bool losesInfo = false;
  converted.convert(cast<FloatType>(type).getFloatSemantics(),
                    APFloat::rmNearestTiesToEven, &losesInfo);
  return converted.convertToDouble();
}

//===----------------------------------------------------------------------===//
// Emission
//===----------------------------------------------------------------------===//

class WindowEmitter {
public:
  WindowEmitter(WindowPlan &plan, DopplerBuilder &b) : plan(plan), b(b) {}

  /// The op's result; for a sum pool with `divided`, the average instead.
  Value emit(bool divided);

private:
  RankedTensorType typeOf(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, plan.resultType.getElementType());
  }
  /// `value` with result dim i its dim perm[i] (an identity einsum).
  Value transpose(Value value, ArrayRef<unsigned> perm);
  /// `value` reshaped to `shape`, reading through a reshape from it.
  Value reshapeTo(Value value, ArrayRef<int64_t> shape);
  /// The image as [N, C, S..] (its batch loops as N..., then `channels`).
  Value canonicalImage(ArrayRef<unsigned> leading,
                       ArrayRef<int64_t> leadingShape);
  /// `result` [N, C, O..] back to the output's layout: dims `leading`
  /// (loops) then the spatial outputs.
  Value toOutput(Value result, ArrayRef<unsigned> leading);
  Value emitConv();
  Value emitPool(bool divided);

  WindowPlan &plan;
  DopplerBuilder &b;
};

Value WindowEmitter::transpose(Value value, ArrayRef<unsigned> perm) {
  bool identity = true;
  for (auto [i, p] : llvm::enumerate(perm))
    identity &= p == i;
  if (identity)
    return value;
  auto type = cast<RankedTensorType>(value.getType());
  std::string from(kLetters, perm.size()), to;
  SmallVector<int64_t> shape;
  for (unsigned p : perm) {
    to += from[p];
    shape.push_back(type.getDimSize(p));
  }
  return b.einsum(from + "->" + to, JoinKind::Identity, std::nullopt,
                  std::nullopt, value, typeOf(shape));
}

Value WindowEmitter::reshapeTo(Value value, ArrayRef<int64_t> shape) {
  RankedTensorType type = typeOf(shape);
  if (Operation *def = value.getDefiningOp();
      def && isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp,
                 tensor::ReshapeOp, ReshapeOp>(def) &&
      def->getOperand(0).getType() == type)
    return def->getOperand(0);
  return b.reshape(value, type);
}

Value WindowEmitter::canonicalImage(ArrayRef<unsigned> leading,
                                    ArrayRef<int64_t> leadingShape) {
  SmallVector<unsigned> perm;
  for (unsigned loop : leading)
    perm.push_back(positionIn(plan.imageMap, loop));
  SmallVector<int64_t> shape(leadingShape), cut(leadingShape);
  bool trims = false;
  for (const SpatialDim &s : plan.spatial) {
    perm.push_back(s.imagePos);
    shape.push_back(s.extent);
    cut.push_back(s.extent - s.trim);
    trims |= s.trim > 0;
  }
  Value image = reshapeTo(transpose(plan.image, perm), shape);
  if (trims)
    image = b.slice(image, SmallVector<int64_t>(shape.size(), 0), typeOf(cut));
  return image;
}

Value WindowEmitter::toOutput(Value result, ArrayRef<unsigned> leading) {
  SmallVector<unsigned> loops(leading);
  SmallVector<int64_t> shape;
  for (unsigned loop : leading)
    shape.push_back(plan.ranges[loop]);
  for (const SpatialDim &s : plan.spatial) {
    loops.push_back(s.out);
    shape.push_back(plan.ranges[s.out]);
  }
  Value value = reshapeTo(result, shape);
  SmallVector<unsigned> perm;
  for (AffineExpr expr : plan.outMap.getResults())
    perm.push_back(llvm::find(loops, cast<AffineDimExpr>(expr).getPosition()) -
                   loops.begin());
  return transpose(value, perm);
}

Value WindowEmitter::emitConv() {
  ::doppler::WindowGeometry geometry = plan.geometry();
  int64_t n = 1;
  for (unsigned loop : plan.batch)
    n *= plan.ranges[loop];
  int64_t groups = plan.extent(plan.group), c = plan.extent(plan.channel),
          f = plan.extent(plan.filter);
  // Image [batch.., group, channel, S..] -> [N, G*C, S..].
  SmallVector<unsigned> imageLoops(plan.batch);
  if (plan.group)
    imageLoops.push_back(*plan.group);
  if (plan.channel)
    imageLoops.push_back(*plan.channel);
  Value image = canonicalImage(imageLoops, {n, groups * c});
  // Weight [group, filter, channel, K..] -> [G*F, C, K..].
  SmallVector<unsigned> perm;
  for (std::optional<unsigned> loop : {plan.group, plan.filter, plan.channel})
    if (loop)
      perm.push_back(positionIn(plan.otherMap, *loop));
  SmallVector<int64_t> weightShape{groups * f, c}, resultShape{n, groups * f};
  for (const SpatialDim &s : plan.spatial) {
    perm.push_back(positionIn(plan.otherMap, s.kernel));
    weightShape.push_back(plan.ranges[s.kernel]);
    resultShape.push_back(plan.ranges[s.out]);
  }
  Value weight = reshapeTo(transpose(plan.other, perm), weightShape);
  SmallVector<int64_t> padding(geometry.padLow.begin(), geometry.padLow.end());
  llvm::append_range(padding, geometry.padHigh);
  Value result = ConvOp::create(b.rewriter, b.loc, typeOf(resultShape), image,
                                weight, geometry.strides, geometry.dilations,
                                padding, uint64_t(groups))
                     .getResult();
  SmallVector<unsigned> outLoops(plan.batch);
  if (plan.group)
    outLoops.push_back(*plan.group);
  if (plan.filter)
    outLoops.push_back(*plan.filter);
  return toOutput(result, outLoops);
}

Value WindowEmitter::emitPool(bool divided) {
  ::doppler::WindowGeometry geometry = plan.geometry();
  // Batch loops e_1..e_m as [e_1 * .. * e_{m-1}, e_m].
  int64_t n = 1, c = 1;
  for (auto [i, loop] : llvm::enumerate(plan.batch))
    (i + 1 == plan.batch.size() ? c : n) *= plan.ranges[loop];
  Value image = canonicalImage(plan.batch, {n, c});
  SmallVector<int64_t> padding(geometry.padLow.begin(), geometry.padLow.end()),
      resultShape{n, c};
  llvm::append_range(padding, geometry.padHigh);
  for (const SpatialDim &s : plan.spatial)
    resultShape.push_back(plan.ranges[s.out]);
  RankedTensorType resultType = typeOf(resultShape);
  auto pool = [&](PoolKind kind) {
    return PoolOp::create(b.rewriter, b.loc, resultType, kind, image,
                          geometry.kernel, geometry.strides,
                          geometry.dilations, padding)
        .getResult();
  };
  Value result;
  double volume = plan.volume();
  if (plan.kind == WindowKind::MaxPool) {
    result = pool(PoolKind::Max);
  } else if (divided) {
    result = pool(PoolKind::Avg);
  } else if (isPowerOfTwo(volume)) {
    // avg * 2^k is the sum exactly.
    std::string all(kLetters, resultShape.size());
    result = b.einsum(all + "->" + all, JoinKind::Scale, std::nullopt, volume,
                      pool(PoolKind::Avg), resultType);
  } else {
    // The sum as a depthwise convolution with a weight of ones: exact.
    SmallVector<int64_t> onesShape{c, 1};
    llvm::append_range(onesShape, geometry.kernel);
    Value ones = b.fill(1.0, typeOf(onesShape));
    result = ConvOp::create(b.rewriter, b.loc, resultType, image, ones,
                            geometry.strides, geometry.dilations, padding,
                            uint64_t(c))
                 .getResult();
  }
  return toOutput(result, plan.batch);
}

Value WindowEmitter::emit(bool divided) {
  Value result = plan.kind == WindowKind::Conv ? emitConv() : emitPool(divided);
  if (!plan.accumulate) // never with `divided`
    return result;
  std::string all(kLetters, plan.resultType.getRank());
  JoinKind join =
      plan.kind == WindowKind::MaxPool ? JoinKind::Max : JoinKind::Add;
  return b.einsum(all + "," + all + "->" + all, join, std::nullopt,
                  std::nullopt, ValueRange{result, plan.init},
                  plan.resultType);
}

//===----------------------------------------------------------------------===//
// The division of a sum pool by its volume
//===----------------------------------------------------------------------===//

/// Whether `divisor` (of `kind`: div by it, or scale/mul by it) divides by
/// `volume` exactly as an average pool does.
bool dividesByVolume(bool isDivision, double divisor, double volume,
                     Type element) {
  if (isDivision)
    return divisor == roundedTo(volume, element);
  // x * (1 / V) == x / V for V a power of two only.
  return isPowerOfTwo(volume) && divisor == 1.0 / volume;
}

/// The only user of a sum pool's result when it divides every element by
/// the kernel's volume and nothing else: a linalg.generic whose body is
/// that division (or multiplication by 1/V), or the einsum the structured
/// op pattern made of one. Null otherwise.
Operation *volumeDivision(Value sum, const WindowPlan &plan) {
  if (!sum.hasOneUse())
    return nullptr;
  Operation *user = *sum.getUsers().begin();
  Type element = plan.resultType.getElementType();
  double volume = plan.volume();
  if (auto einsum = dyn_cast<EinsumOp>(user)) {
    ::doppler::EinsumSpec spec = einsum.getParsedSpec();
    if (einsum.getAggregation() || spec.inputs[0] != spec.output ||
        einsum.getInputs()[0] != sum)
      return nullptr;
    if (einsum.getJoin() == JoinKind::Scale && spec.inputs.size() == 1)
      return dividesByVolume(false, einsum.getScalar()->convertToDouble(),
                             volume, element)
                 ? user
                 : nullptr;
    auto fill = spec.inputs.size() == 2 && spec.inputs[1].empty()
                    ? einsum.getInputs()[1].getDefiningOp<FillOp>()
                    : FillOp();
    return einsum.getJoin() == JoinKind::Div && fill &&
                   dividesByVolume(true, fill.getValue().convertToDouble(),
                                   volume, element)
               ? user
               : nullptr;
  }
  auto generic = dyn_cast<linalg::GenericOp>(user);
  if (!generic || generic.getNumDpsInputs() != 1 ||
      generic->getNumResults() != 1 || generic.getNumParallelLoops() !=
                                           generic.getNumLoops() ||
      !llvm::all_of(generic.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }))
    return nullptr;
  Block *body = generic.getBlock();
  Operation *def = body->getTerminator()->getOperand(0).getDefiningOp();
  if (!def || def->getBlock() != body ||
      !isa<arith::DivFOp, arith::MulFOp>(def))
    return nullptr;
  BlockArgument in = body->getArgument(0);
  Value lhs = def->getOperand(0), rhs = def->getOperand(1);
  if (isa<arith::MulFOp>(def) && rhs == in)
    std::swap(lhs, rhs);
  std::optional<double> divisor = scalarConstant(rhs);
  return lhs == in && divisor &&
                 dividesByVolume(isa<arith::DivFOp>(def), *divisor, volume,
                                 element)
             ? user
             : nullptr;
}

//===----------------------------------------------------------------------===//
// The pattern
//===----------------------------------------------------------------------===//

struct WindowOpPattern : public OpInterfaceRewritePattern<linalg::LinalgOp> {
  WindowOpPattern(MLIRContext *context, LinalgToDopplerCounters *counters)
      : OpInterfaceRewritePattern(context, /*benefit=*/2),
        counters(counters) {}

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    WindowPlan plan;
    std::string why;
    if (failed(analyseWindowOp(op, plan, why)))
      return rewriter.notifyMatchFailure(op, why);
    Operation *division =
        plan.kind == WindowKind::SumPool && !plan.accumulate
            ? volumeDivision(op->getResult(0), plan)
            : nullptr;
    DopplerBuilder builder(rewriter, op.getLoc(), counters);
    Value result = WindowEmitter(plan, builder).emit(division != nullptr);
    countConverted(counters, op);
    if (division) {
      if (!isa<EinsumOp>(division))
        countConverted(counters, division);
      // The divisor (a doppler.fill of the einsum form) may die with it.
      // Its producers are collected before anything is erased (one of the
      // division's operands is `op`'s own result) and each is erased once.
      llvm::SetVector<Operation *> producers;
      for (Value operand : division->getOperands())
        if (Operation *def = operand.getDefiningOp();
            def && def != op.getOperation() && def != plan.pad.getOperation())
          producers.insert(def);
      rewriter.replaceOp(division, result);
      rewriter.eraseOp(op);
      for (Operation *def : producers)
        if (isOpTriviallyDead(def))
          rewriter.eraseOp(def);
    } else {
      rewriter.replaceOp(op, result);
    }
    if (plan.pad && plan.pad->use_empty())
      rewriter.eraseOp(plan.pad);
    return success();
  }

  LinalgToDopplerCounters *counters;
};

} // namespace

namespace mlir::doppler::linalg_to_doppler {

void populateWindowPatterns(RewritePatternSet &patterns,
                            LinalgToDopplerCounters *counters) {
  patterns.add<WindowOpPattern>(patterns.getContext(), counters);
}

} // namespace mlir::doppler::linalg_to_doppler
