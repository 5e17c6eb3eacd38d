//===- LinalgToDoppler.cpp - The pattern set of convert-linalg-to-doppler -===//

#include "Doppler/Conversion/LinalgToDoppler.h"
#include "Builders.h"
#include "Prepare.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::doppler;

void mlir::doppler::populateLinalgToDopplerPatterns(
    RewritePatternSet &patterns, const LinalgToDopplerOptions &options,
    LinalgToDopplerCounters *counters) {
  linalg_to_doppler::populateStructuredOpPatterns(patterns, options, counters);
  linalg_to_doppler::populateTensorOpPatterns(patterns, counters);
  linalg_to_doppler::populateWindowPatterns(patterns, counters);
  linalg_to_doppler::populateGatherPatterns(patterns, options.foldLimit,
                                            counters);
  linalg_to_doppler::populateConversionPatterns(patterns, counters);
}

bool mlir::doppler::isConversionCandidate(Operation *op) {
  if (isa_and_nonnull<linalg::LinalgDialect>(op->getDialect()))
    return !isa<linalg::YieldOp, linalg::IndexOp>(op);
  if (isa_and_nonnull<tensor::TensorDialect>(op->getDialect()))
    return !isa<tensor::EmptyOp, tensor::DimOp, tensor::RankOp,
                tensor::YieldOp>(op);
  return false;
}

bool mlir::doppler::isComputeCandidate(Operation *op) {
  return isConversionCandidate(op) && isa_and_nonnull<linalg::LinalgDialect>(op->getDialect());
}

std::string
mlir::doppler::explainUnconvertible(Operation *op,
                                    const LinalgToDopplerOptions &options) {
  if (std::optional<std::string> why =
          linalg_to_doppler::explainGather(op, options.foldLimit))
    return *why;
  if (std::optional<std::string> why =
          linalg_to_doppler::explainConstantOp(op, options.foldLimit))
    return *why;
  if (isa_and_nonnull<linalg::LinalgDialect>(op->getDialect())) {
    if (std::optional<std::string> why =
            linalg_to_doppler::explainWindowOp(op))
      return *why;
    return linalg_to_doppler::explainStructuredOp(op, options);
  }
  return linalg_to_doppler::explainTensorOp(op);
}
