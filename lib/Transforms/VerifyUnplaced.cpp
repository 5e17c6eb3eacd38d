//===- VerifyUnplaced.cpp - Placement input: nothing placed or nested ---===//

#include "Doppler/Analysis/PlacementChecks.h"
#include "Doppler/Transforms/Passes.h"

namespace mlir::doppler {
#define GEN_PASS_DEF_DOPPLERVERIFYUNPLACEDPASS
#include "Doppler/Transforms/Passes.h.inc"
} // namespace mlir::doppler

using namespace mlir;
using namespace mlir::doppler;

namespace {

class VerifyUnplacedPass
    : public mlir::doppler::impl::DopplerVerifyUnplacedPassBase<VerifyUnplacedPass> {
  void runOnOperation() override {
    bool ok = true;
    getOperation()->walk([&](FunctionOpInterface function) {
      ok &= succeeded(verifyUnplaced(function));
    });
    if (!ok)
      signalPassFailure();
    markAllAnalysesPreserved();
  }
};

} // namespace
