//===- ConvertLinalgToDoppler.cpp - convert-linalg-to-doppler -------------===//
//
// Applies the linalg-to-doppler patterns to the linalg and tensor ops of
// each function, then reports what was converted and what was left, by op
// kind: a remark on the function (whenever an op is left, or always with
// `report`), a remark with the reason on each op left (with `report`), and
// with `full` an error on each linalg op left.
//
//===----------------------------------------------------------------------===//

#include "Doppler/Conversion/LinalgToDoppler.h"
#include "Doppler/Conversion/Passes.h"
#include "Doppler/Dialect/DopplerDialect.h"
#include "Prepare.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"

#include <map>

namespace mlir::doppler {
#define GEN_PASS_DEF_CONVERTLINALGTODOPPLERPASS
#include "Doppler/Conversion/Passes.h.inc"
} // namespace mlir::doppler

using namespace mlir;
using namespace mlir::doppler;

namespace {

/// "linalg.fill: 1, linalg.matmul: 2" (sorted by name).
std::string byKind(const std::map<std::string, int64_t> &counts) {
  std::string text;
  for (const auto &[name, count] : counts)
    text += (text.empty() ? "" : ", ") + name + ": " + std::to_string(count);
  return text;
}

int64_t total(const std::map<std::string, int64_t> &counts) {
  int64_t sum = 0;
  for (const auto &entry : counts)
    sum += entry.second;
  return sum;
}

struct ConvertLinalgToDopplerPass
    : public mlir::doppler::impl::ConvertLinalgToDopplerPassBase<ConvertLinalgToDopplerPass> {
  using ConvertLinalgToDopplerPassBase::ConvertLinalgToDopplerPassBase;

  void runOnOperation() override {
    LinalgToDopplerOptions options;
    options.erfGeluAsTanh = erfGelu;
    options.foldLimit = foldLimit;
    bool failedAny = false;
    SmallVector<FunctionOpInterface> functions;
    getOperation()->walk([&](FunctionOpInterface function) {
      if (!function.isExternal())
        functions.push_back(function);
    });
    for (FunctionOpInterface function : functions)
      failedAny |= failed(convert(function, options));
    if (failedAny)
      signalPassFailure();
  }

  LogicalResult convert(FunctionOpInterface function,
                        const LinalgToDopplerOptions &options) {
    LinalgToDopplerCounters counters;
    // Rewrites into forms the patterns convert (Prepare.h): casts through
    // f64 computed in f32, ops on constants folded, selects on constant
    // masks and the safe softmax as the frontend writes them.
    linalg_to_doppler::foldF64Islands(function, &counters);
    linalg_to_doppler::foldConstants(function, options.foldLimit, &counters);
    linalg_to_doppler::rewriteSafeSoftmax(function, &counters);
    linalg_to_doppler::rewriteMaskSelects(function, options.foldLimit,
                                          &counters);
    // What stays integer is computed from data: carried as f64 floats.
    linalg_to_doppler::carryIntegersAsFloats(function, &counters);
    // The linalg and tensor ops of the function (not those nested in their
    // bodies), tensor.empty included so that unused inits are erased.
    SmallVector<Operation *> ops;
    function->walk([&](Operation *op) {
      Dialect *dialect = op->getDialect();
      Operation *parent = op->getParentOp();
      if (isa_and_nonnull<linalg::LinalgDialect, tensor::TensorDialect>(
              dialect) &&
          !isa_and_nonnull<linalg::LinalgDialect, tensor::TensorDialect>(
              parent ? parent->getDialect() : nullptr))
        ops.push_back(op);
    });
    if (ops.empty() && !report && counters.converted.empty())
      return success();
    RewritePatternSet patterns(&getContext());
    populateLinalgToDopplerPatterns(patterns, options, &counters);
    FrozenRewritePatternSet frozen(std::move(patterns));
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    // The result does not depend on convergence: an op a pattern cannot
    // convert is left, and reported below.
    (void)applyOpPatternsGreedily(ops, frozen, config);
    // Constants only the converted ops used: scalars of bodies and fills,
    // tensors folded into others or read by a converted gather.
    SmallVector<Operation *> dead;
    function->walk([&](arith::ConstantOp constant) {
      if (constant->use_empty())
        dead.push_back(constant);
    });
    for (Operation *op : dead)
      op->erase();

    std::map<std::string, int64_t> converted, left;
    for (const auto &entry : counters.converted)
      converted[entry.getKey().str()] = entry.getValue();
    SmallVector<Operation *> leftOps;
    function->walk([&](Operation *op) {
      Operation *parent = op->getParentOp();
      if (isConversionCandidate(op) &&
          !(parent && isConversionCandidate(parent))) {
        ++left[op->getName().getStringRef().str()];
        leftOps.push_back(op);
      }
    });
    numConverted += total(converted);
    numLeft += total(left);
    numEinsums += counters.einsums;

    if (!left.empty() || report) {
      InFlightDiagnostic remark = function.emitRemark();
      remark << "converted " << total(converted) << " op(s) to doppler";
      if (!converted.empty())
        remark << " (" << byKind(converted) << ")";
      remark << "; left " << total(left);
      if (!left.empty())
        remark << " (" << byKind(left) << ")";
    }
    bool failedAny = false;
    for (Operation *op : leftOps) {
      bool isError = full && isComputeCandidate(op);
      if (!isError && !report)
        continue;
      std::string why = explainUnconvertible(op, options);
      if (why.empty()) // a pattern would still apply: not converged
        why = "the rewrite did not converge";
      if (isError) {
        op->emitError() << "could not be converted to doppler: " << why;
        failedAny = true;
      } else {
        op->emitRemark() << "left as is: " << why;
      }
    }
    return failure(failedAny);
  }
};

} // namespace
