//===- InsertTransfers.cpp - One transfer per value and device ------------===//

#include "Doppler/Analysis/PlacementChecks.h"
#include "Doppler/Dialect/DopplerOps.h"
#include "Doppler/Transforms/Passes.h"
#include "Doppler/Analysis/PlacementGraph.h"

#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::doppler {
#define GEN_PASS_DEF_DOPPLERINSERTTRANSFERSPASS
#include "Doppler/Transforms/Passes.h.inc"
} // namespace mlir::doppler

using namespace mlir;
using namespace mlir::doppler;

namespace {

/// The op directly in the function body that contains `op` (itself, or the
/// op whose region holds it).
Operation *topLevelAncestor(Operation *op, Block &body) {
  return body.findAncestorOpInBlock(*op);
}

class InsertTransfersPass
    : public mlir::doppler::impl::DopplerInsertTransfersPassBase<
          InsertTransfersPass> {
public:
  void runOnOperation() override {
    bool ok = true;
    getOperation()->walk([&](FunctionOpInterface function) {
      if (function.isExternal())
        return;
      if (failed(verifyPlaced(function))) {
        ok = false;
        return;
      }
      insertTransfers(function);
    });
    if (!ok)
      signalPassFailure();
  }

private:
  void insertTransfers(FunctionOpInterface function) {
    Block &body = function.getFunctionBody().front();
    OpBuilder builder(&getContext());
    // Snapshot: the loop inserts transfer ops into the block.
    SmallVector<Operation *> producers;
    for (Operation &op : body)
      if (!op.hasTrait<OpTrait::IsTerminator>() && !isa<TransferOp>(op))
        producers.push_back(&op);

    for (Operation *producer : producers) {
      int64_t from = getDevice(producer);
      Operation *insertAfter = producer;
      for (Value result : producer->getResults()) {
        // Uses in program order (use lists have no meaningful order), then
        // grouped by destination device in order of first use.
        SmallVector<std::pair<Operation *, OpOperand *>> uses;
        for (OpOperand &use : result.getUses())
          if (Operation *user = topLevelAncestor(use.getOwner(), body))
            uses.push_back({user, &use});
        llvm::stable_sort(uses, [](const auto &a, const auto &b) {
          return a.first != b.first && a.first->isBeforeInBlock(b.first);
        });
        llvm::MapVector<int64_t, SmallVector<OpOperand *>> usesByDevice;
        for (auto [user, operand] : uses) {
          OpOperand &use = *operand;
          // A reload reads a host value and waits for its `after` values
          // wherever they are: no move.
          if (user->hasTrait<OpTrait::IsTerminator>() || isa<ReloadOp>(user))
            continue;
          int64_t to = getDevice(user);
          if (to == from)
            continue;
          // An existing transfer already is the move.
          if (auto transfer = dyn_cast<TransferOp>(user);
              transfer && transfer.getSource().getId() == from)
            continue;
          usesByDevice[to].push_back(&use);
        }
        for (auto &[to, uses] : usesByDevice) {
          builder.setInsertionPointAfter(insertAfter);
          auto transfer = TransferOp::create(
              builder, producer->getLoc(), result.getType(), result,
              DeviceAttr::get(&getContext(), from),
              DeviceAttr::get(&getContext(), to));
          setDevice(transfer, to);
          for (OpOperand *use : uses)
            use->set(transfer.getResult());
          insertAfter = transfer;
          ++numTransfers;
        }
      }
    }
  }
};

} // namespace
