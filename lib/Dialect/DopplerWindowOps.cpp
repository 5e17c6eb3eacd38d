//===- DopplerWindowOps.cpp - doppler.conv and doppler.pool ---------------===//
//
// Verifiers and work models of the sliding-window ops. The geometry and the
// shape rule are the shared ones of include/Doppler/Support/Window.h, so the
// verifier, the decomposition and the runtime agree on every shape.
//
//===----------------------------------------------------------------------===//

#include "Doppler/Dialect/DopplerOps.h"
#include "DopplerOpsSupport.h"
#include "Doppler/Support/CheckedSize.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::doppler;
using namespace mlir::doppler::detail;

namespace {

/// The geometry an op's attributes spell, once its `padding` has two
/// entries per spatial dim (low ones first); else an error on `op`.
FailureOr<::doppler::WindowGeometry>
geometryOf(Operation *op, ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
           ArrayRef<int64_t> dilations, ArrayRef<int64_t> padding) {
  size_t k = kernel.size();
  if (padding.size() != 2 * k)
    return op->emitOpError()
           << "padding " << listText(padding) << " must have " << 2 * k
           << " entries (the low padding of each of the " << k
           << " spatial dims, then the high padding of each)";
  ::doppler::WindowGeometry geometry;
  geometry.kernel = toVector(kernel);
  geometry.strides = toVector(strides);
  geometry.dilations = toVector(dilations);
  geometry.padLow = toVector(padding.take_front(k));
  geometry.padHigh = toVector(padding.drop_front(k));
  return geometry;
}

/// Static shapes of one element type for every operand and the result.
LogicalResult requireStaticShapes(Operation *op) {
  Type element;
  for (Value operand : op->getOperands()) {
    if (failed(requireStatic(op, operand.getType(), "operand")))
      return failure();
    Type type = cast<RankedTensorType>(operand.getType()).getElementType();
    if (element && type != element)
      return op->emitOpError() << "operands have element types " << element
                               << " and " << type << "; they must agree";
    element = type;
  }
  Type result = op->getResult(0).getType();
  if (failed(requireStatic(op, result, "result")))
    return failure();
  if (cast<RankedTensorType>(result).getElementType() != element)
    return op->emitOpError() << "result element type "
                             << cast<RankedTensorType>(result).getElementType()
                             << " differs from the input's " << element;
  return success();
}

LogicalResult checkResultShape(Operation *op,
                               const std::optional<std::vector<int64_t>> &shape,
                               const std::string &problem) {
  if (!shape)
    return op->emitOpError() << problem;
  auto result = cast<RankedTensorType>(op->getResult(0).getType());
  if (result.getShape() != ArrayRef<int64_t>(*shape))
    return op->emitOpError() << "result shape " << listText(result.getShape())
                             << " differs from the inferred "
                             << listText(*shape);
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// ConvOp
//===----------------------------------------------------------------------===//

LogicalResult ConvOp::verify() {
  if (failed(requireStaticShapes(*this)))
    return failure();
  auto weightType = cast<RankedTensorType>(getWeight().getType());
  size_t spatial = getStrides().size();
  if (weightType.getRank() < 3 || weightType.getRank() > 5 ||
      size_t(weightType.getRank()) != spatial + 2)
    return emitOpError() << "weight of rank " << weightType.getRank()
                         << " with " << spatial
                         << " strides: a convolution over k = 1 to 3 spatial "
                            "dims takes a weight of rank 2 + k and k strides";
  FailureOr<::doppler::WindowGeometry> geometry =
      geometryOf(*this, weightType.getShape().drop_front(2), getStrides(),
                 getDilations(), getPadding());
  if (failed(geometry))
    return failure();
  std::string problem;
  std::optional<std::vector<int64_t>> shape = ::doppler::convolutionResultShape(
      toVector(cast<RankedTensorType>(getInput().getType()).getShape()),
      toVector(weightType.getShape()), getGroups(), *geometry, &problem);
  return checkResultShape(*this, shape, problem);
}

::doppler::WindowGeometry ConvOp::getGeometry() {
  auto weightType = cast<RankedTensorType>(getWeight().getType());
  return *geometryOf(*this, weightType.getShape().drop_front(2), getStrides(),
                     getDilations(), getPadding());
}

double ConvOp::getFlops() {
  auto shapeOf = [](Value value) {
    return toVector(cast<RankedTensorType>(value.getType()).getShape());
  };
  return 2 * ::doppler::convolutionMultiplyAdds(
                 shapeOf(getInput()), shapeOf(getWeight()), getGroups(),
                 shapeOf(getResult()));
}

double ConvOp::getBytesRead() {
  return tensorBytes(getInput().getType()) + tensorBytes(getWeight().getType());
}

double ConvOp::getBytesWritten() { return tensorBytes(getType()); }

//===----------------------------------------------------------------------===//
// PoolOp
//===----------------------------------------------------------------------===//

LogicalResult PoolOp::verify() {
  if (failed(requireStaticShapes(*this)))
    return failure();
  FailureOr<::doppler::WindowGeometry> geometry = geometryOf(
      *this, getKernel(), getStrides(), getDilations(), getPadding());
  if (failed(geometry))
    return failure();
  std::string problem;
  std::optional<std::vector<int64_t>> shape = ::doppler::poolResultShape(
      toVector(cast<RankedTensorType>(getInput().getType()).getShape()),
      *geometry, &problem);
  return checkResultShape(*this, shape, problem);
}

::doppler::WindowGeometry PoolOp::getGeometry() {
  return *geometryOf(*this, getKernel(), getStrides(), getDilations(),
                     getPadding());
}

double PoolOp::getFlops() {
  // One comparison or add per window element (and a divide per output for
  // an average): the kernel's volume per output element.
  auto result = cast<RankedTensorType>(getType());
  double volume = 1;
  for (int64_t extent : getKernel())
    volume *= double(extent);
  return volume * ::doppler::approximateElementCount(
                      result.getShape().data(), result.getShape().size());
}

double PoolOp::getBytesRead() { return tensorBytes(getInput().getType()); }

double PoolOp::getBytesWritten() { return tensorBytes(getType()); }
