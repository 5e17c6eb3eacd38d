//===- LinalgWorkModels.cpp - WorkOpInterface for linalg and tensor ops ---===//

#include "Doppler/Dialect/LinalgWorkModels.h"
#include "Doppler/Dialect/DopplerInterfaces.h"
#include "Doppler/Support/CheckedSize.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::doppler;

namespace {

/// Bytes of a value of `type`: 0 unless a static shape of int/float
/// elements (or a scalar of one).
double bytesOf(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  Type element = shaped ? shaped.getElementType() : type;
  if (!element.isIntOrFloat())
    return 0;
  double elementBytes = (element.getIntOrFloatBitWidth() + 7) / 8;
  if (!shaped)
    return elementBytes;
  if (!shaped.hasStaticShape())
    return 0;
  // In doubles: getNumElements() wraps past int64_t, and no verifier of
  // these dialects bounds the shape.
  return ::doppler::approximateElementCount(shaped.getShape().data(),
                                            shaped.getShape().size()) *
         elementBytes;
}

double resultBytes(Operation *op) {
  double bytes = 0;
  for (Type type : op->getResultTypes())
    bytes += bytesOf(type);
  return bytes;
}

/// Any linalg structured op: one application of its body per point of the
/// iteration space.
template <typename OpType>
struct StructuredWorkModel
    : public WorkOpInterface::ExternalModel<StructuredWorkModel<OpType>,
                                            OpType> {
  double getFlops(Operation *op) const {
    auto linalgOp = cast<linalg::LinalgOp>(op);
    double points = 1;
    for (int64_t range : linalgOp.getStaticLoopRanges()) {
      if (ShapedType::isDynamic(range))
        return 0;
      points *= static_cast<double>(range);
    }
    Block *body = linalgOp.getBlock();
    double bodyOps = body ? static_cast<double>(body->getOperations().size()) - 1
                          : 0; // not the yield
    return points * bodyOps;
  }
  double getBytesRead(Operation *op) const {
    auto linalgOp = cast<linalg::LinalgOp>(op);
    double bytes = 0;
    for (OpOperand *input : linalgOp.getDpsInputOperands())
      bytes += bytesOf(input->get().getType());
    // An init is read only when the body uses it (accumulations).
    for (OpOperand &init : linalgOp.getDpsInitsMutable())
      if (linalgOp.payloadUsesValueFromOperand(&init))
        bytes += bytesOf(init.get().getType());
    return bytes;
  }
  double getBytesWritten(Operation *op) const {
    auto linalgOp = cast<linalg::LinalgOp>(op);
    if (op->getNumResults())
      return resultBytes(op);
    double bytes = 0; // on buffers: the inits are written
    for (OpOperand &init : linalgOp.getDpsInitsMutable())
      bytes += bytesOf(init.get().getType());
    return bytes;
  }
};

/// linalg.softmax: per element a max, a subtract, an exp, a sum and a
/// divide.
struct SoftmaxWorkModel
    : public WorkOpInterface::ExternalModel<SoftmaxWorkModel,
                                            linalg::SoftmaxOp> {
  double getFlops(Operation *op) const {
    auto type = cast<ShapedType>(cast<linalg::SoftmaxOp>(op).getInput().getType());
    return type.hasStaticShape()
               ? 5.0 * ::doppler::approximateElementCount(
                           type.getShape().data(), type.getShape().size())
               : 0;
  }
  double getBytesRead(Operation *op) const {
    return bytesOf(cast<linalg::SoftmaxOp>(op).getInput().getType());
  }
  double getBytesWritten(Operation *op) const { return resultBytes(op); }
};

/// Tensor ops that move data: no FLOPs, the bytes they read (all tensor
/// operands; only the block for extract_slice) and write (their results).
template <typename OpType>
struct MoveWorkModel
    : public WorkOpInterface::ExternalModel<MoveWorkModel<OpType>, OpType> {
  double getFlops(Operation *) const { return 0; }
  double getBytesRead(Operation *op) const {
    if (isa<tensor::ExtractSliceOp, tensor::ExtractOp>(op))
      return resultBytes(op);
    double bytes = 0;
    for (Type type : op->getOperandTypes())
      if (isa<ShapedType>(type))
        bytes += bytesOf(type);
    return bytes;
  }
  double getBytesWritten(Operation *op) const { return resultBytes(op); }
};

/// tensor.empty allocates nothing that anyone reads: free.
struct EmptyWorkModel
    : public WorkOpInterface::ExternalModel<EmptyWorkModel, tensor::EmptyOp> {
  double getFlops(Operation *) const { return 0; }
  double getBytesRead(Operation *) const { return 0; }
  double getBytesWritten(Operation *) const { return 0; }
};

template <typename... OpTypes>
void attachStructured(MLIRContext *context) {
  (OpTypes::template attachInterface<StructuredWorkModel<OpTypes>>(*context),
   ...);
}

template <typename... OpTypes>
void attachMoves(MLIRContext *context) {
  (OpTypes::template attachInterface<MoveWorkModel<OpTypes>>(*context), ...);
}

} // namespace

void mlir::doppler::registerLinalgWorkModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, linalg::LinalgDialect *) {
    attachStructured<
#define GET_OP_LIST
#include "mlir/Dialect/Linalg/IR/LinalgStructuredOps.cpp.inc"
        >(context);
    linalg::SoftmaxOp::attachInterface<SoftmaxWorkModel>(*context);
  });
  registry.addExtension(+[](MLIRContext *context, tensor::TensorDialect *) {
    attachMoves<tensor::BitcastOp, tensor::CastOp, tensor::CollapseShapeOp,
                tensor::ConcatOp, tensor::ExpandShapeOp, tensor::ExtractOp,
                tensor::ExtractSliceOp, tensor::FromElementsOp,
                tensor::GatherOp, tensor::InsertOp, tensor::InsertSliceOp,
                tensor::PadOp, tensor::ReshapeOp, tensor::ScatterOp,
                tensor::SplatOp>(context);
    tensor::EmptyOp::attachInterface<EmptyWorkModel>(*context);
  });
}
