//===- DopplerToLinalg.h - doppler ops to linalg on tensors -----*- C++ -*-===//
//
// Patterns of convert-doppler-to-linalg: doppler.einsum becomes a
// linalg.generic whose body is the join (and the aggregation, with an output
// initialised to its identity), doppler.slice a tensor.extract_slice,
// doppler.assemble tensor.insert_slice's into a tensor.empty, doppler.fill a
// linalg.fill. Every produced op keeps the source op's location and its
// `doppler.device`. doppler.transfer stays (the IREE export turns it into
// flow.tensor.transfer); doppler.task has no tensor semantics and stays
// illegal.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_CONVERSION_DOPPLERTOLINALG_H
#define DOPPLER_CONVERSION_DOPPLERTOLINALG_H

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::doppler {

struct DopplerToLinalgOptions {
  /// doppler.assemble as nested tensor.concat ops instead of
  /// tensor.insert_slice's into a tensor.empty. --export-iree uses it: one
  /// op per grid row says "assemble" to IREE directly (on the examples,
  /// IREE forms the same dispatches either way; see docs/IREE.md).
  bool assembleWithConcat = false;
};

/// Adds the four conversion patterns (einsum, slice, assemble, fill).
void populateDopplerToLinalgPatterns(RewritePatternSet &patterns,
                                     const DopplerToLinalgOptions &options = {});

/// Marks linalg, tensor, arith and math legal and the four converted doppler
/// ops illegal. doppler.transfer and ops of other dialects are left as they
/// are (legal), doppler.task illegal.
void configureDopplerToLinalgTarget(ConversionTarget &target);

/// Emits one error per op under `root` that the conversion cannot lower
/// (doppler.task, values of opaque or dynamically shaped types) and fails
/// if there was any. Run before applyPartialConversion so that users get a
/// message that says why, not "failed to legalize".
LogicalResult checkDopplerToLinalgSupported(Operation *root);

/// checkDopplerToLinalgSupported, then the partial conversion of `root`.
LogicalResult convertDopplerToLinalg(Operation *root,
                                     const DopplerToLinalgOptions &options = {});

} // namespace mlir::doppler

#endif // DOPPLER_CONVERSION_DOPPLERTOLINALG_H
