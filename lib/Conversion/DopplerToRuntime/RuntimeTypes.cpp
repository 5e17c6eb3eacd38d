//===- RuntimeTypes.cpp - What the runtime can hold, checked on IR --------===//

#include "Doppler/Conversion/RuntimeTypes.h"
#include "Doppler/Dialect/DopplerOps.h"
#include "Doppler/Analysis/PlacementGraph.h"

using namespace mlir;
using namespace mlir::doppler;

FailureOr<RuntimeElement> mlir::doppler::getRuntimeElement(Type type,
                                                           Operation *op) {
  if (type.isF32())
    return RuntimeElement::F32;
  if (type.isF64())
    return RuntimeElement::F64;
  if (type.isF16())
    return RuntimeElement::F16;
  if (type.isSignlessInteger(32))
    return RuntimeElement::I32;
  if (type.isSignlessInteger(64))
    return RuntimeElement::I64;
  return op->emitOpError() << "has element type " << type
                           << ", which the runtime does not support (f16, "
                              "f32, f64, i32, i64)";
}

FailureOr<RankedTensorType>
mlir::doppler::requireStaticTensor(Type type, Operation *op,
                                   const Twine &what) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return op->emitOpError() << what << " has type " << type
                             << "; the runtime needs statically shaped "
                                "tensors";
  return tensor;
}

FailureOr<int> mlir::doppler::getRuntimeDevice(Operation &op) {
  if (op.hasTrait<OpTrait::IsTerminator>())
    return op.emitOpError() << "is not supported by the runtime";
  if (!isa<EinsumOp, FusedOp, SliceOp, AssembleOp, ReshapeOp, ConvOp, PoolOp,
           FillOp, GatherOp, TransferOp, EvictOp, ReloadOp, TaskOp>(op))
    return op.emitOpError()
           << "is not supported by the runtime (it runs doppler.einsum, "
              "doppler.fused, doppler.slice, doppler.assemble, "
              "doppler.reshape, doppler.conv, doppler.pool, doppler.fill, "
              "doppler.gather, doppler.transfer, "
              "doppler.evict, doppler.reload, and doppler.task as a delay)";
  int64_t device = getDevice(&op);
  if (device < 0)
    return op.emitOpError() << "is not placed (no " << kDeviceAttr
                            << "); run doppler-pipeline, or doppler-place "
                               "and doppler-insert-transfers, first";
  return static_cast<int>(device);
}

FailureOr<std::pair<RankedTensorType, RuntimeElement>>
mlir::doppler::getRuntimeArgumentType(FunctionOpInterface function,
                                      unsigned index) {
  Type type = function.getArgumentTypes()[index];
  FailureOr<RankedTensorType> tensor =
      requireStaticTensor(type, function, "argument " + Twine(index));
  if (failed(tensor))
    return failure();
  Type element = tensor->getElementType();
  // Said at the function (not "op has element type"), naming the argument.
  if (!element.isF16() && !element.isF32() && !element.isF64() &&
      !element.isSignlessInteger(32) && !element.isSignlessInteger(64))
    return function.emitError()
           << "argument " << index << " of @" << function.getName()
           << " has element type " << element
           << ", which the runtime does not support (f16, f32, f64, i32, "
              "i64)";
  return std::make_pair(*tensor, *getRuntimeElement(element, function));
}
