//===- VerifyTransfers.cpp - No value crosses devices unmoved ----------===//

#include "Doppler/Analysis/PlacementChecks.h"
#include "Doppler/Transforms/Passes.h"

namespace mlir::doppler {
#define GEN_PASS_DEF_DOPPLERVERIFYTRANSFERSPASS
#include "Doppler/Transforms/Passes.h.inc"
} // namespace mlir::doppler

using namespace mlir;
using namespace mlir::doppler;

namespace {

class VerifyTransfersPass
    : public mlir::doppler::impl::DopplerVerifyTransfersPassBase<
          VerifyTransfersPass> {
  void runOnOperation() override {
    bool ok = true;
    getOperation()->walk([&](FunctionOpInterface function) {
      ok &= succeeded(verifyPlaced(function)) &&
            succeeded(verifyTransfers(function));
    });
    if (!ok)
      signalPassFailure();
    markAllAnalysesPreserved();
  }
};

} // namespace
