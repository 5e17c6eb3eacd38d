//===- LinalgWorkModels.h - WorkOpInterface for linalg and tensor ops -*- C++ -*-===//
//
// External models of doppler's WorkOpInterface for the ops
// convert-linalg-to-doppler may leave: every linalg structured op (FLOPs:
// points of the iteration space times the ops of its body; bytes: the
// operands it reads and the results it writes), linalg.softmax, and the
// tensor ops that move data (bytes moved, no FLOPs; tensor.empty costs
// nothing). With them the cost model, placement and the simulator treat
// such ops as nodes costed from their work, like doppler ops.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_DIALECT_LINALGWORKMODELS_H
#define DOPPLER_DIALECT_LINALGWORKMODELS_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::doppler {

/// Attaches the models when the linalg and tensor dialects load.
void registerLinalgWorkModels(DialectRegistry &registry);

} // namespace mlir::doppler

#endif // DOPPLER_DIALECT_LINALGWORKMODELS_H
