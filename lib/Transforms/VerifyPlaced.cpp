//===- VerifyPlaced.cpp - Every op of a function body has a device --------===//

#include "Doppler/Analysis/PlacementChecks.h"
#include "Doppler/Transforms/Passes.h"

namespace mlir::doppler {
#define GEN_PASS_DEF_DOPPLERVERIFYPLACEDPASS
#include "Doppler/Transforms/Passes.h.inc"
} // namespace mlir::doppler

using namespace mlir;
using namespace mlir::doppler;

namespace {

class VerifyPlacedPass
    : public mlir::doppler::impl::DopplerVerifyPlacedPassBase<VerifyPlacedPass> {
  void runOnOperation() override {
    bool ok = true;
    getOperation()->walk([&](FunctionOpInterface function) {
      ok &= succeeded(verifyPlaced(function));
    });
    if (!ok)
      signalPassFailure();
    markAllAnalysesPreserved();
  }
};

} // namespace
