//===- PlacementChecks.cpp - Is a function placed, are moves explicit -----===//

#include "Doppler/Analysis/PlacementChecks.h"
#include "Doppler/Analysis/PlacementGraph.h"
#include "Doppler/Dialect/DopplerOps.h"

using namespace mlir;
using namespace mlir::doppler;

LogicalResult mlir::doppler::verifyNotNested(FunctionOpInterface function) {
  if (function.isExternal())
    return success();
  for (Block &block : function.getFunctionBody())
    for (Operation &op : block) {
      if (op.getNumRegions() == 0)
        continue;
      Operation *nested = nullptr;
      op.walk([&](Operation *inner) {
        if (inner != &op &&
            isa_and_nonnull<DopplerDialect>(inner->getDialect())) {
          nested = inner;
          return WalkResult::interrupt();
        }
        return WalkResult::advance();
      });
      if (!nested)
        continue;
      InFlightDiagnostic diag =
          op.emitOpError()
          << "holds '" << nested->getName()
          << "' in a region: the placement phases place the ops directly in "
             "a function body, so nested Doppler ops would be neither costed "
             "nor placed; inline the region first";
      diag.attachNote(nested->getLoc()) << "the nested op";
      return failure();
    }
  return success();
}

/// Every non-terminator op directly in the body must be placed.
LogicalResult mlir::doppler::verifyUnplaced(FunctionOpInterface function) {
  if (function.isExternal())
    return success();
  Operation *placed = nullptr;
  int64_t placedCount = 0;
  for (Block &block : function.getFunctionBody())
    for (Operation &op : block)
      if (getDevice(&op) >= 0 || isa<TransferOp, EvictOp, ReloadOp>(op)) {
        placed = placed ? placed : &op;
        ++placedCount;
      }
  if (placed) {
    InFlightDiagnostic diag = placed->emitOpError();
    diag << "is already placed";
    if (int64_t device = getDevice(placed); device >= 0)
      diag << " (" << kDeviceAttr << " = " << device << ")";
    diag << "; " << placedCount << " op(s) of @"
         << function.getName() << " carry a placement or are transfers. "
         << "The placement phases take an unplaced program: run them on "
            "the program before placement";
    return failure();
  }
  return verifyNotNested(function);
}

LogicalResult mlir::doppler::verifyPlaced(FunctionOpInterface function) {
  bool ok = true;
  for (Block &block : function.getFunctionBody())
    for (Operation &op : block)
      if (!op.hasTrait<OpTrait::IsTerminator>() && getDevice(&op) < 0) {
        op.emitOpError() << "is not placed (no " << kDeviceAttr
                         << "); run doppler-place first";
        ok = false;
      }
  return success(succeeded(verifyNotNested(function)) && ok);
}

LogicalResult mlir::doppler::verifyTransfers(FunctionOpInterface function) {
  bool ok = true;
  if (function.isExternal())
    return success();
  Block &body = function.getFunctionBody().front();
  for (Operation &op : body) {
    if (op.hasTrait<OpTrait::IsTerminator>())
      continue;
    int64_t device = getDevice(&op);
    auto check = [&](Operation *user, Value operand) {
      Operation *producer = operand.getDefiningOp();
      if (!producer || producer->getBlock() != &body)
        return; // arguments are everywhere; nested values stay local
      int64_t from = getDevice(producer);
      // A reload reads a host value (on no device) and waits for its
      // `after` values wherever they are: nothing crosses devices.
      if (isa<ReloadOp>(user))
        return;
      if (auto transfer = dyn_cast<TransferOp>(user)) {
        if (user == &op && transfer.getSource().getId() != from) {
          user->emitOpError() << "moves a value from device "
                              << transfer.getSource().getId()
                              << " but its producer is on device " << from;
          ok = false;
        }
        return;
      }
      if (from != device) {
        user->emitOpError() << "on device " << device
                            << " uses a value produced on device " << from
                            << " without a doppler.transfer";
        ok = false;
      }
    };
    if (auto transfer = dyn_cast<TransferOp>(op)) {
      if (transfer.getTarget().getId() != device) {
        op.emitOpError() << "moves to device "
                         << transfer.getTarget().getId()
                         << " but is placed on device " << device;
        ok = false;
      }
    }
    op.walk([&](Operation *nested) {
      for (Value operand : nested->getOperands())
        check(nested == &op ? &op : nested, operand);
    });
  }
  return success(ok);
}
