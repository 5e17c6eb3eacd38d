//===- Windows.cpp - doppler.conv and doppler.pool to linalg --------------===//
//
// A sliding-window op becomes a tensor.pad of its input (only when it pads:
// zeros, or minus infinity for a max pool), an init filled with the
// combination's identity, and the linalg named op of its layout where
// MLIR has one:
//
//   conv, groups 1          conv_{1d_ncw_fcw, 2d_nchw_fchw, 3d_ncdhw_fcdhw}
//   conv, F == C == groups  depthwise_conv_{1d_ncw_cw, 2d_nchw_chw,
//                           3d_ncdhw_cdhw}, the weight [C, 1, K..]
//                           collapsed to [C, K..]
//   conv, other groups, 2d  conv_2d_ngchw_gfchw on expanded input, weight
//                           and result ([N, G*C, ..] -> [N, G, C, ..])
//   conv, other groups      the same expanded form as a linalg.generic
//   pool, 1d / 2d           pooling_ncw_{max,sum} / pooling_nchw_{max,sum}
//   pool, 3d                a linalg.generic (MLIR's 3-d pools are NDHWC)
//
// with a tensor.empty of the kernel's shape as the pools' window operand;
// an average pool is a sum pool and a linalg.generic dividing by the
// kernel's volume. Every op made keeps the source op's location (its name,
// for the IREE export) and doppler.device.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "Doppler/Dialect/DopplerOps.h"
#include "Doppler/Support/Window.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::doppler;
using namespace mlir::doppler::doppler_to_linalg;

namespace {

/// What the patterns below share for one source op: the rewriter, the
/// location and the placement of everything they make.
struct WindowBuilder {
  WindowBuilder(ConversionPatternRewriter &rewriter, Operation *source)
      : rewriter(rewriter), loc(source->getLoc()), placed(source),
        element(cast<FloatType>(
            cast<RankedTensorType>(source->getResult(0).getType())
                .getElementType())) {}

  RankedTensorType tensorType(ArrayRef<int64_t> shape) const {
    return RankedTensorType::get(shape, element);
  }
  Value constant(double value) {
    return placed(floatConstant(rewriter, loc, element, value).getDefiningOp())
        ->getResult(0);
  }
  Value empty(ArrayRef<int64_t> shape) {
    return placed(tensor::EmptyOp::create(rewriter, loc, shape, element));
  }
  /// A tensor of `shape` filled with `value`.
  Value filled(ArrayRef<int64_t> shape, double value) {
    return placed(linalg::FillOp::create(rewriter, loc, constant(value),
                                         empty(shape)))
        .getResult(0);
  }
  /// `input` padded along its spatial dims (its last ones) by the
  /// geometry's padding with `value`; `input` itself when nothing pads.
  Value pad(Value input, const ::doppler::WindowGeometry &geometry,
            double value);
  /// `value` with its dims `groups` merged or split (a tensor reshape
  /// whose other side is `shape`).
  Value collapse(Value value, ArrayRef<int64_t> shape,
                 ArrayRef<ReassociationIndices> groups) {
    return placed(tensor::CollapseShapeOp::create(rewriter, loc,
                                                  tensorType(shape), value,
                                                  groups));
  }
  Value expand(Value value, ArrayRef<int64_t> shape,
               ArrayRef<ReassociationIndices> groups) {
    return placed(tensor::ExpandShapeOp::create(rewriter, loc,
                                                tensorType(shape), value,
                                                groups));
  }
  /// A linalg.generic with `maps` and `iterators` over `inputs` into
  /// `init`, its body made by `body` from the block arguments.
  Value generic(ValueRange inputs, Value init, ArrayRef<AffineMap> maps,
                ArrayRef<utils::IteratorType> iterators,
                function_ref<Value(OpBuilder &, ValueRange)> body);
  DenseIntElementsAttr i64s(ArrayRef<int64_t> values) {
    return rewriter.getI64TensorAttr(values);
  }

  ConversionPatternRewriter &rewriter;
  Location loc;
  PlacementCopier placed;
  FloatType element;
};

Value WindowBuilder::pad(Value input,
                         const ::doppler::WindowGeometry &geometry,
                         double value) {
  if (llvm::all_of(geometry.padLow, [](int64_t p) { return p == 0; }) &&
      llvm::all_of(geometry.padHigh, [](int64_t p) { return p == 0; }))
    return input;
  auto type = cast<RankedTensorType>(input.getType());
  unsigned first = type.getRank() - geometry.spatialDims();
  SmallVector<int64_t> shape(type.getShape());
  SmallVector<OpFoldResult> low(first, rewriter.getIndexAttr(0)),
      high(first, rewriter.getIndexAttr(0));
  for (unsigned j = 0; j < geometry.spatialDims(); ++j) {
    shape[first + j] += geometry.padLow[j] + geometry.padHigh[j];
    low.push_back(rewriter.getIndexAttr(geometry.padLow[j]));
    high.push_back(rewriter.getIndexAttr(geometry.padHigh[j]));
  }
  return placed(tensor::PadOp::create(rewriter, loc, tensorType(shape), input,
                                      low, high, constant(value)));
}

Value WindowBuilder::generic(ValueRange inputs, Value init,
                             ArrayRef<AffineMap> maps,
                             ArrayRef<utils::IteratorType> iterators,
                             function_ref<Value(OpBuilder &, ValueRange)> body) {
  auto op = placed(linalg::GenericOp::create(
      rewriter, loc, TypeRange{init.getType()}, inputs, ValueRange{init},
      maps, iterators, [&](OpBuilder &b, Location bodyLoc, ValueRange args) {
        linalg::YieldOp::create(b, bodyLoc, body(b, args));
      }));
  // The body's arguments default to their operands' locations, which name
  // other ops: they belong to this one.
  for (BlockArgument arg : op.getRegion().front().getArguments())
    arg.setLoc(loc);
  return op.getResult(0);
}

/// Loop dims of a window generic: `dims` then, per spatial dim j, the
/// output position o_j (parallel) and after them the reductions.
struct WindowLoops {
  MLIRContext *ctx;
  unsigned numLoops;
  AffineExpr dim(unsigned d) const { return getAffineDimExpr(d, ctx); }
  AffineMap map(ArrayRef<AffineExpr> exprs) const {
    return AffineMap::get(numLoops, 0, exprs, ctx);
  }
};

/// The named window op `OpT` with the geometry's strides and dilations.
/// Its body gets the op's location too (the region builder leaves it
/// unknown), so that the body keeps the name when the op is generalised.
template <typename OpT>
Value namedWindowOp(WindowBuilder &b, ValueRange inputs, Value init,
                    const ::doppler::WindowGeometry &geometry) {
  auto op = b.placed(OpT::create(b.rewriter, b.loc, TypeRange{init.getType()},
                                 inputs, ValueRange{init},
                                 b.i64s(geometry.strides),
                                 b.i64s(geometry.dilations)));
  Block &body = op->getRegion(0).front();
  for (BlockArgument arg : body.getArguments())
    arg.setLoc(b.loc);
  for (Operation &inner : body)
    inner.setLoc(b.loc);
  return op->getResult(0);
}

SmallVector<ReassociationIndices> groupsMerging(unsigned rank, unsigned at) {
  // [0], .., [at, at + 1], [at + 2], .. for a result of rank `rank - 1`.
  SmallVector<ReassociationIndices> groups;
  for (unsigned d = 0; d + 1 < rank; ++d) {
    if (d < at)
      groups.push_back({int64_t(d)});
    else if (d == at)
      groups.push_back({int64_t(d), int64_t(d + 1)});
    else
      groups.push_back({int64_t(d + 1)});
  }
  return groups;
}

/// A grouped convolution on the expanded layouts input [N, G, C, S..],
/// weight [G, F, C, K..], result [N, G, F, O..]: conv_2d_ngchw_gfchw for 2
/// spatial dims, else a linalg.generic with the same maps.
Value groupedConv(WindowBuilder &b, Value input, Value weight, Value init,
                  const ::doppler::WindowGeometry &geometry) {
  unsigned k = geometry.spatialDims();
  if (k == 2)
    return namedWindowOp<linalg::Conv2DNgchwGfchwOp>(
        b, ValueRange{input, weight}, init, geometry);
  // Loops: n, g, f, o_1..o_k (parallel), c, k_1..k_k (reduction).
  WindowLoops loops{b.rewriter.getContext(), 4 + 2 * k};
  unsigned n = 0, g = 1, f = 2, c = 3 + k;
  SmallVector<AffineExpr> in{loops.dim(n), loops.dim(g), loops.dim(c)},
      w{loops.dim(g), loops.dim(f), loops.dim(c)},
      out{loops.dim(n), loops.dim(g), loops.dim(f)};
  for (unsigned j = 0; j < k; ++j) {
    AffineExpr o = loops.dim(3 + j), kk = loops.dim(4 + k + j);
    in.push_back(o * geometry.strides[j] + kk * geometry.dilations[j]);
    w.push_back(kk);
    out.push_back(o);
  }
  SmallVector<utils::IteratorType> iterators(3 + k,
                                             utils::IteratorType::parallel);
  iterators.append(1 + k, utils::IteratorType::reduction);
  return b.generic(ValueRange{input, weight}, init,
                   {loops.map(in), loops.map(w), loops.map(out)}, iterators,
                   [&](OpBuilder &builder, ValueRange args) -> Value {
                     Value product =
                         arith::MulFOp::create(builder, b.loc, args[0], args[1]);
                     return arith::AddFOp::create(builder, b.loc, args[2],
                                                  product);
                   });
}

/// doppler.conv -> [tensor.pad] + the named convolution of its groups and
/// spatial dims (file comment), into a zero-filled init.
struct ConvLowering : OpConversionPattern<ConvOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ConvOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    WindowBuilder b(rewriter, op);
    ::doppler::WindowGeometry geometry = op.getGeometry();
    unsigned k = geometry.spatialDims();
    Value input = adaptor.getInput();
    Value weight = adaptor.getWeight();
    auto inputType = cast<RankedTensorType>(input.getType());
    auto weightType = cast<RankedTensorType>(weight.getType());
    RankedTensorType resultType = op.getType();
    int64_t groups = op.getGroups();
    int64_t channels = inputType.getDimSize(1),
            filters = weightType.getDimSize(0);
    Value result;
    if (groups == 1) {
      SmallVector<Value, 2> operands{b.pad(input, geometry, 0.0), weight};
      Value init = b.filled(resultType.getShape(), 0.0);
      result = k == 1   ? namedWindowOp<linalg::Conv1DNcwFcwOp>(b, operands,
                                                                init, geometry)
               : k == 2 ? namedWindowOp<linalg::Conv2DNchwFchwOp>(
                              b, operands, init, geometry)
                        : namedWindowOp<linalg::Conv3DNcdhwFcdhwOp>(
                              b, operands, init, geometry);
    } else if (groups == channels && filters == channels) {
      // Depthwise: the weight [C, 1, K..] as [C, K..].
      SmallVector<int64_t> shape{channels};
      llvm::append_range(shape, weightType.getShape().drop_front(2));
      Value kernel =
          b.collapse(weight, shape, groupsMerging(weightType.getRank(), 0));
      Value init = b.filled(resultType.getShape(), 0.0);
      SmallVector<Value, 2> depthwise{b.pad(input, geometry, 0.0), kernel};
      result = k == 1 ? namedWindowOp<linalg::DepthwiseConv1DNcwCwOp>(
                            b, depthwise, init, geometry)
               : k == 2 ? namedWindowOp<linalg::DepthwiseConv2DNchwChwOp>(
                              b, depthwise, init, geometry)
                        : namedWindowOp<linalg::DepthwiseConv3DNcdhwCdhwOp>(
                              b, depthwise, init, geometry);
    } else {
      // [N, G*C, S..] -> [N, G, C, S..] (then padded, so that the pad
      // feeds the convolution); [G*F, C, K..] -> [G, F, C, K..]; the
      // result [N, G, F, O..] -> [N, G*F, O..].
      auto split = [](ArrayRef<int64_t> shape, unsigned at, int64_t outer) {
        SmallVector<int64_t> result(shape);
        result[at] = shape[at] / outer;
        result.insert(result.begin() + at, outer);
        return result;
      };
      Value groupedInput = b.pad(
          b.expand(input, split(inputType.getShape(), 1, groups),
                   groupsMerging(inputType.getRank() + 1, 1)),
          geometry, 0.0);
      Value groupedWeight =
          b.expand(weight, split(weightType.getShape(), 0, groups),
                   groupsMerging(weightType.getRank() + 1, 0));
      SmallVector<int64_t> outShape =
          split(resultType.getShape(), 1, groups);
      Value init = b.filled(outShape, 0.0);
      Value grouped = groupedConv(b, groupedInput, groupedWeight, init,
                                  geometry);
      result = b.collapse(grouped, resultType.getShape(),
                          groupsMerging(outShape.size(), 1));
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// A 3-d pool as a linalg.generic: loops n, c, o_1..o_3, k_1..k_3.
Value genericPool(WindowBuilder &b, Value input, Value window, Value init,
                  const ::doppler::WindowGeometry &geometry, bool max) {
  unsigned k = geometry.spatialDims();
  WindowLoops loops{b.rewriter.getContext(), 2 + 2 * k};
  SmallVector<AffineExpr> in{loops.dim(0), loops.dim(1)}, win,
      out{loops.dim(0), loops.dim(1)};
  for (unsigned j = 0; j < k; ++j) {
    AffineExpr o = loops.dim(2 + j), kk = loops.dim(2 + k + j);
    in.push_back(o * geometry.strides[j] + kk * geometry.dilations[j]);
    win.push_back(kk);
    out.push_back(o);
  }
  SmallVector<utils::IteratorType> iterators(2 + k,
                                             utils::IteratorType::parallel);
  iterators.append(k, utils::IteratorType::reduction);
  return b.generic(ValueRange{input, window}, init,
                   {loops.map(in), loops.map(win), loops.map(out)}, iterators,
                   [&](OpBuilder &builder, ValueRange args) -> Value {
                     if (max)
                       return arith::MaximumFOp::create(builder, b.loc,
                                                        args[2], args[0]);
                     return arith::AddFOp::create(builder, b.loc, args[2],
                                                  args[0]);
                   });
}

/// doppler.pool -> [tensor.pad] + pooling_ncw/nchw_max/sum (a generic in
/// 3-d) into an init of the identity, then for avg a linalg.generic
/// dividing by the kernel's volume.
struct PoolLowering : OpConversionPattern<PoolOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(PoolOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    WindowBuilder b(rewriter, op);
    ::doppler::WindowGeometry geometry = op.getGeometry();
    unsigned k = geometry.spatialDims();
    bool max = op.getKind() == PoolKind::Max;
    double identity = max ? -std::numeric_limits<double>::infinity() : 0.0;
    Value input = b.pad(adaptor.getInput(), geometry, identity);
    RankedTensorType resultType = op.getType();
    Value window = b.empty(geometry.kernel);
    Value init = b.filled(resultType.getShape(), identity);
    SmallVector<Value, 2> operands{input, window};
    Value result;
    if (k == 1)
      result = max ? namedWindowOp<linalg::PoolingNcwMaxOp>(b, operands, init,
                                                            geometry)
                   : namedWindowOp<linalg::PoolingNcwSumOp>(b, operands, init,
                                                            geometry);
    else if (k == 2)
      result = max ? namedWindowOp<linalg::PoolingNchwMaxOp>(b, operands,
                                                             init, geometry)
                   : namedWindowOp<linalg::PoolingNchwSumOp>(b, operands,
                                                             init, geometry);
    else
      result = genericPool(b, input, window, init, geometry, max);
    if (!max) {
      double volume = 1;
      for (int64_t extent : geometry.kernel)
        volume *= double(extent);
      unsigned rank = resultType.getRank();
      AffineMap identityMap =
          AffineMap::getMultiDimIdentityMap(rank, rewriter.getContext());
      SmallVector<utils::IteratorType> iterators(rank,
                                                 utils::IteratorType::parallel);
      Value divisor = b.constant(volume);
      result = b.generic(ValueRange{result}, b.empty(resultType.getShape()),
                         {identityMap, identityMap}, iterators,
                         [&](OpBuilder &builder, ValueRange args) -> Value {
                           return arith::DivFOp::create(builder, b.loc,
                                                        args[0], divisor);
                         });
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void doppler_to_linalg::populateWindowLoweringPatterns(
    RewritePatternSet &patterns) {
  patterns.add<ConvLowering, PoolLowering>(patterns.getContext());
}
