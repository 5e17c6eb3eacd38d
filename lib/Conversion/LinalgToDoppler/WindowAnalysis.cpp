//===- WindowAnalysis.cpp - Reading a linalg op as a convolution or pool -===//
//
// The maps and the body of a structured op, read as a sliding window (see
// Windows.cpp for the forms): no IR is changed, so that a failed match
// changes nothing and its reason can be reported for an op left over.
//
//===----------------------------------------------------------------------===//

#include "Builders.h"
#include "ScalarBodies.h"
#include "WindowPlan.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/AffineExpr.h"

#include <limits>

using namespace mlir;
using namespace mlir::doppler;
using namespace mlir::doppler::linalg_to_doppler;

namespace {

/// `e` as a sum of loops times positive constants, appended to `terms`.
bool linearTerms(AffineExpr e,
                 SmallVector<std::pair<unsigned, int64_t>> &terms) {
  if (auto dim = dyn_cast<AffineDimExpr>(e)) {
    terms.push_back({dim.getPosition(), 1});
    return true;
  }
  auto binary = dyn_cast<AffineBinaryOpExpr>(e);
  if (!binary)
    return false;
  if (e.getKind() == AffineExprKind::Add)
    return linearTerms(binary.getLHS(), terms) &&
           linearTerms(binary.getRHS(), terms);
  if (e.getKind() != AffineExprKind::Mul)
    return false;
  auto dim = dyn_cast<AffineDimExpr>(binary.getLHS());
  auto factor = dyn_cast<AffineConstantExpr>(binary.getRHS());
  if (!dim || !factor) {
    dim = dyn_cast<AffineDimExpr>(binary.getRHS());
    factor = dyn_cast<AffineConstantExpr>(binary.getLHS());
  }
  if (!dim || !factor || factor.getValue() < 1)
    return false;
  terms.push_back({dim.getPosition(), factor.getValue()});
  return true;
}

} // namespace

unsigned linalg_to_doppler::positionIn(AffineMap map, unsigned loop) {
  for (auto [i, expr] : llvm::enumerate(map.getResults()))
    if (auto dim = dyn_cast<AffineDimExpr>(expr);
        dim && dim.getPosition() == loop)
      return i;
  llvm_unreachable("loop not in map");
}

namespace {

class WindowAnalysis {
public:
  explicit WindowAnalysis(linalg::LinalgOp op) : op(op) {}

  /// Builds `plan`, or says why not in `why`.
  LogicalResult run(WindowPlan &plan, std::string &why);

private:
  LogicalResult fail(const Twine &message) {
    why = message.str();
    return failure();
  }
  LogicalResult checkOperands();
  LogicalResult readBody();
  LogicalResult readImageMap(SmallVector<int> &spatialOf,
                             SmallVector<bool> &isKernel);
  LogicalResult classifyLoops();
  void foldPad();
  LogicalResult readGeometry();

  linalg::LinalgOp op;
  WindowPlan *plan = nullptr;
  std::string why;
};

LogicalResult WindowAnalysis::run(WindowPlan &result, std::string &reason) {
  plan = &result;
  LogicalResult status = checkOperands();
  if (succeeded(status))
    status = readBody();
  if (succeeded(status))
    status = classifyLoops();
  if (succeeded(status)) {
    foldPad();
    status = readGeometry();
  }
  if (failed(status))
    reason = why;
  return status;
}

/// Two inputs and one init, static float tensors of the result's element
/// type.
LogicalResult WindowAnalysis::checkOperands() {
  if (!op.hasPureTensorSemantics())
    return fail("it works on buffers, not tensors");
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op->getNumResults() != 1)
    return fail("a convolution or pooling takes two inputs and one init");
  plan->resultType = staticFloatTensor(op->getResult(0).getType());
  if (!plan->resultType)
    return fail("its result is not a float tensor of static shape");
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = staticFloatTensor(operand.get().getType());
    if (!type || type.getElementType() != plan->resultType.getElementType())
      return fail("operand " + Twine(operand.getOperandNumber()) +
                  " is not a static tensor of the result's element type");
  }
  plan->init = op.getDpsInitOperand(0)->get();
  plan->outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  plan->ranges = op.getStaticLoopRanges();
  return success();
}

/// The kind, from the body: acc + a * b, max(acc, a) or acc + a.
LogicalResult WindowAnalysis::readBody() {
  Block *body = op.getBlock();
  Type element = plan->resultType.getElementType();
  auto strip = [&](Value v) {
    while (Operation *def = v.getDefiningOp()) {
      Value in = def->getBlock() == body ? castThrough(def, element) : Value();
      if (!in)
        break;
      v = in;
    }
    return v;
  };
  auto inputOf = [&](Value v) -> int {
    auto arg = dyn_cast<BlockArgument>(strip(v));
    return arg && arg.getOwner() == body && arg.getArgNumber() < 2
               ? int(arg.getArgNumber())
               : -1;
  };
  const char *notWindow = "its body is not a multiply-accumulate (a "
                          "convolution) nor a max or sum (a pooling)";
  auto yield = dyn_cast<linalg::YieldOp>(body->getTerminator());
  Operation *combiner =
      yield && yield->getNumOperands() == 1
          ? yield->getOperand(0).getDefiningOp()
          : nullptr;
  if (!combiner || combiner->getBlock() != body)
    return fail(notWindow);
  BlockArgument acc = body->getArgument(2);
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
  if (!join || (lhs != acc && rhs != acc))
    return fail(notWindow);
  Value value = lhs == acc ? rhs : lhs;
  if (*join == JoinKind::Max || *join == JoinKind::Add) {
    if (int input = inputOf(value); input >= 0) {
      plan->kind =
          *join == JoinKind::Max ? WindowKind::MaxPool : WindowKind::SumPool;
      plan->imageIndex = input;
      return success();
    }
  }
  auto mul = strip(value).getDefiningOp<arith::MulFOp>();
  if (*join != JoinKind::Add || !mul || mul->getBlock() != body)
    return fail(notWindow);
  int a = inputOf(mul.getLhs()), b = inputOf(mul.getRhs());
  if (a < 0 || b < 0 || a == b)
    return fail(notWindow);
  plan->kind = WindowKind::Conv;
  // The image is the input whose map slides.
  auto slides = [&](unsigned input) {
    return !op.getMatchingIndexingMap(op.getDpsInputOperand(input))
                .isProjectedPermutation();
  };
  if (slides(0) == slides(1))
    return fail("not exactly one input of its multiply-accumulate is read "
                "through a sliding window");
  plan->imageIndex = slides(0) ? 0 : 1;
  return success();
}

/// The image map's results: loops, and `o * stride + k * dilation` (for
/// each, `spatialOf[o]` is its spatial index and `isKernel[k]` is set).
LogicalResult WindowAnalysis::readImageMap(SmallVector<int> &spatialOf,
                                           SmallVector<bool> &isKernel) {
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (auto [pos, expr] : llvm::enumerate(plan->imageMap.getResults())) {
    SmallVector<std::pair<unsigned, int64_t>> terms;
    if (!linearTerms(expr, terms) || terms.empty() || terms.size() > 2 ||
        (terms.size() == 1 && terms[0].second != 1))
      return fail("the image's index " + Twine(pos) +
                  " is not a loop nor `o * stride + k * dilation`");
    if (terms.size() == 1)
      continue;
    if (iterators[terms[0].first] != utils::IteratorType::parallel)
      std::swap(terms[0], terms[1]);
    auto [out, stride] = terms[0];
    auto [kernel, dilation] = terms[1];
    if (iterators[out] != utils::IteratorType::parallel ||
        iterators[kernel] != utils::IteratorType::reduction ||
        spatialOf[out] >= 0 || isKernel[kernel])
      return fail("the image's index " + Twine(pos) +
                  " does not combine an output loop and a kernel loop");
    spatialOf[out] = plan->spatial.size();
    isKernel[kernel] = true;
    SpatialDim dim;
    dim.out = out;
    dim.kernel = kernel;
    dim.imagePos = pos;
    dim.stride = stride;
    dim.dilation = dilation;
    plan->spatial.push_back(dim);
  }
  return success();
}

/// Every loop is a spatial output, a kernel, batch, group, output-channel
/// or input-channel loop (pools: spatial, kernel or batch).
LogicalResult WindowAnalysis::classifyLoops() {
  plan->imageMap =
      op.getMatchingIndexingMap(op.getDpsInputOperand(plan->imageIndex));
  plan->otherMap =
      op.getMatchingIndexingMap(op.getDpsInputOperand(1 - plan->imageIndex));
  plan->image = op.getDpsInputOperand(plan->imageIndex)->get();
  plan->other = op.getDpsInputOperand(1 - plan->imageIndex)->get();
  if (!plan->outMap.isProjectedPermutation() ||
      !plan->otherMap.isProjectedPermutation())
    return fail("its output or " +
                Twine(plan->kind == WindowKind::Conv ? "weight" : "window") +
                " map is not a projected permutation");
  unsigned loops = op.getNumLoops();
  SmallVector<int> spatialOf(loops, -1);
  SmallVector<bool> isKernel(loops, false);
  if (failed(readImageMap(spatialOf, isKernel)))
    return failure();
  if (plan->spatial.empty() ||
      plan->spatial.size() > ::doppler::kMaxWindowSpatialDims)
    return fail("it slides over " + Twine(plan->spatial.size()) +
                " dims; doppler.conv and doppler.pool take 1 to 3");
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  bool conv = plan->kind == WindowKind::Conv;
  for (unsigned d = 0; d < loops; ++d) {
    AffineExpr dim = getAffineDimExpr(d, op.getContext());
    bool inImage = llvm::is_contained(plan->imageMap.getResults(), dim);
    bool inOther = plan->otherMap.isFunctionOfDim(d);
    bool inOut = plan->outMap.isFunctionOfDim(d);
    bool parallel = iterators[d] == utils::IteratorType::parallel;
    if (inOut != parallel)
      return fail("loop " + Twine(d) +
                  (inOut ? " is in the output but not parallel"
                         : " is not in the output but parallel"));
    // At most one loop of each channel kind.
    auto claim = [&](std::optional<unsigned> &slot) {
      if (slot)
        return false;
      slot = d;
      return true;
    };
    bool ok = false;
    if (spatialOf[d] >= 0) {
      ok = inOut && !inImage && !inOther;
    } else if (isKernel[d]) {
      ok = inOther && !inImage;
    } else if (inImage && !inOther && inOut) {
      plan->batch.push_back(d);
      ok = true;
    } else if (conv) {
      if (inImage && inOther && inOut)
        ok = claim(plan->group);
      else if (!inImage && inOther && inOut)
        ok = claim(plan->filter);
      else if (inImage && inOther && !inOut)
        ok = claim(plan->channel);
    }
    if (!ok)
      return fail("loop " + Twine(d) + " is not a batch, channel, group, " +
                  "spatial or kernel loop of a " +
                  (conv ? "convolution" : "pooling"));
  }
  // Batch loops in the output's order.
  llvm::sort(plan->batch, [&](unsigned a, unsigned b) {
    return positionIn(plan->outMap, a) < positionIn(plan->outMap, b);
  });
  return success();
}

/// A tensor.pad of the image with the op's padding value, on its spatial
/// dims only, becomes the op's padding.
void WindowAnalysis::foldPad() {
  auto pad = plan->image.getDefiningOp<tensor::PadOp>();
  if (!pad || !pad.getLow().empty() || !pad.getHigh().empty() ||
      !staticFloatTensor(pad.getSourceType()))
    return;
  Value padValue = pad.getConstantPaddingValue();
  std::optional<double> value =
      padValue ? scalarConstant(padValue) : std::nullopt;
  double identity = plan->kind == WindowKind::MaxPool
                        ? -std::numeric_limits<double>::infinity()
                        : 0.0;
  if (!value || *value != identity)
    return;
  ArrayRef<int64_t> low = pad.getStaticLow(), high = pad.getStaticHigh();
  for (unsigned pos = 0; pos < low.size(); ++pos) {
    bool spatial = llvm::any_of(plan->spatial, [&](const SpatialDim &s) {
      return s.imagePos == pos;
    });
    if (low[pos] < 0 || high[pos] < 0 ||
        (!spatial && (low[pos] != 0 || high[pos] != 0)))
      return;
  }
  plan->pad = pad;
  plan->image = pad.getSource();
  for (SpatialDim &s : plan->spatial) {
    s.padLow = low[s.imagePos];
    s.padHigh = high[s.imagePos];
  }
}

/// Extents. Where the padded image holds a stride or more past the last
/// window (doppler would slide once more), the fewest elements that leave
/// less are cut: first from the high padding, then from the image.
LogicalResult WindowAnalysis::readGeometry() {
  auto imageType = cast<RankedTensorType>(plan->image.getType());
  for (SpatialDim &s : plan->spatial) {
    s.extent = imageType.getDimSize(s.imagePos);
    int64_t padded = s.extent + s.padLow + s.padHigh;
    int64_t needed = (plan->ranges[s.out] - 1) * s.stride +
                     (plan->ranges[s.kernel] - 1) * s.dilation + 1;
    if (padded < needed)
      return fail("its windows read past the image");
    int64_t excess = padded - needed;
    int64_t cut = excess >= s.stride ? excess - (s.stride - 1) : 0;
    int64_t fromPad = std::min(cut, s.padHigh);
    s.padHigh -= fromPad;
    s.trim = cut - fromPad;
  }
  std::string problem;
  if (!plan->geometry().validate(&problem))
    return fail("its window is out of doppler's range: " + problem);
  std::optional<double> initValue = constantFillValue(plan->init);
  double identity = plan->kind == WindowKind::MaxPool
                        ? -std::numeric_limits<double>::infinity()
                        : 0.0;
  plan->accumulate = !initValue || *initValue != identity;
  return success();
}

} // namespace

LogicalResult linalg_to_doppler::analyseWindowOp(linalg::LinalgOp op,
                                                 WindowPlan &plan,
                                                 std::string &why) {
  return WindowAnalysis(op).run(plan, why);
}

namespace mlir::doppler::linalg_to_doppler {

std::optional<std::string> explainWindowOp(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp ||
      llvm::all_of(linalgOp.getIndexingMapsArray(), [](AffineMap map) {
        return map.isProjectedPermutation(/*allowZeroInResults=*/true);
      }))
    return std::nullopt;
  WindowPlan plan;
  std::string why;
  if (succeeded(analyseWindowOp(linalgOp, plan, why)))
    return std::string();
  return "it is not a convolution or pooling doppler can take: " + why;
}

bool foldsIntoWindowOps(Operation *pad) {
  if (!isa<tensor::PadOp>(pad) || pad->use_empty())
    return false;
  for (Operation *user : pad->getUsers()) {
    auto linalgOp = dyn_cast<linalg::LinalgOp>(user);
    WindowPlan plan;
    std::string why;
    if (!linalgOp || failed(analyseWindowOp(linalgOp, plan, why)) ||
        plan.pad.getOperation() != pad)
      return false;
  }
  return true;
}

} // namespace mlir::doppler::linalg_to_doppler
