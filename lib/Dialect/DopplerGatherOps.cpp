//===- DopplerGatherOps.cpp - doppler.gather ------------------------------===//
//
// The verifier and work model of the gather (integer indices into a table
// along one axis). Its shape rule is gatherResultShape, shared with the
// decomposition and the conversions.
//
//===----------------------------------------------------------------------===//

#include "Doppler/Dialect/DopplerOps.h"
#include "DopplerOpsSupport.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::doppler;
using namespace mlir::doppler::detail;

SmallVector<int64_t> GatherOp::inferResultShape(ArrayRef<int64_t> table,
                                                ArrayRef<int64_t> indices,
                                                int64_t axis) {
  SmallVector<int64_t> shape(table.take_front(axis));
  shape.append(indices.begin(), indices.end());
  shape.append(table.begin() + axis + 1, table.end());
  return shape;
}

LogicalResult GatherOp::verify() {
  auto tableType = cast<RankedTensorType>(getTable().getType());
  auto indicesType = cast<RankedTensorType>(getIndices().getType());
  auto resultType = cast<RankedTensorType>(getResult().getType());
  if (failed(requireStatic(*this, tableType, "table")) ||
      failed(requireStatic(*this, indicesType, "indices")) ||
      failed(requireStatic(*this, resultType, "result")))
    return failure();
  int64_t axis = getAxis();
  if (tableType.getRank() == 0)
    return emitOpError() << "gathers from a rank-0 table; the table needs a "
                            "dimension to index along";
  if (axis < 0 || axis >= tableType.getRank())
    return emitOpError() << "axis " << axis << " is outside [0, "
                         << tableType.getRank()
                         << ") for a table of rank " << tableType.getRank();
  if (resultType.getElementType() != tableType.getElementType())
    return emitOpError() << "result element type "
                         << resultType.getElementType()
                         << " differs from the table's "
                         << tableType.getElementType()
                         << "; a gather copies the table's elements";
  SmallVector<int64_t> shape = inferResultShape(
      tableType.getShape(), indicesType.getShape(), axis);
  if (resultType.getShape() != ArrayRef<int64_t>(shape))
    return emitOpError() << "result shape " << listText(resultType.getShape())
                         << " differs from " << listText(shape)
                         << " = table.shape[:axis] + indices.shape + "
                            "table.shape[axis + 1:]";
  return success();
}

double GatherOp::getFlops() { return 0; }

double GatherOp::getBytesRead() {
  // The gathered slices (as many bytes as the result) and the indices; the
  // rest of the table is never touched.
  return tensorBytes(getType()) + tensorBytes(getIndices().getType());
}

double GatherOp::getBytesWritten() { return tensorBytes(getType()); }
