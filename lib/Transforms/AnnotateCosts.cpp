//===- AnnotateCosts.cpp - Roofline compute and link transfer costs -------===//

#include "Doppler/Analysis/CostModel.h"
#include "Doppler/Analysis/PlacementChecks.h"
#include "Doppler/Transforms/Passes.h"

namespace mlir::doppler {
#define GEN_PASS_DEF_DOPPLERANNOTATECOSTSPASS
#include "Doppler/Transforms/Passes.h.inc"
} // namespace mlir::doppler

using namespace mlir;
using namespace mlir::doppler;
using ::doppler::placement::SystemDescription;

namespace {

class AnnotateCostsPass
    : public mlir::doppler::impl::DopplerAnnotateCostsPassBase<AnnotateCostsPass> {
public:
  using Base::Base;

  LogicalResult initialize(MLIRContext *context) override {
    std::string error;
    description = SystemDescription::load(system, &error);
    if (!description)
      return emitError(UnknownLoc::get(context))
             << "doppler-annotate-costs: " << error;
    return success();
  }

  void runOnOperation() override {
    // Costs go on a body's top-level ops: a nested Doppler op would be left
    // uncosted while the program looked costed.
    bool nested = false;
    getOperation()->walk([&](FunctionOpInterface function) {
      nested |= failed(verifyNotNested(function));
    });
    if (nested)
      return signalPassFailure();
    CostCounts counts = annotateCosts(getOperation(), *description);
    numCosted += counts.fromWork;
    numFallback += counts.asCopies;
  }

private:
  std::optional<SystemDescription> description;
};

} // namespace
