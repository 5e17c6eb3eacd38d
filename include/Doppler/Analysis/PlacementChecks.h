//===- PlacementChecks.h - Is a function placed, are moves explicit -*- C++ -*-===//
//
// The checks between the placement phases (doppler-verify-placed,
// doppler-verify-transfers), which doppler-insert-transfers and the
// pipeline also run. Errors are emitted on the offending ops; every
// offending op gets one.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_ANALYSIS_PLACEMENTCHECKS_H
#define DOPPLER_ANALYSIS_PLACEMENTCHECKS_H

#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::doppler {

/// Every non-terminator op directly in the body has `doppler.device`.
LogicalResult verifyPlaced(FunctionOpInterface function);

/// Every operand produced on another device comes through a
/// `doppler.transfer` whose source and target match the producer's and the
/// consumer's devices (function arguments are on every device).
LogicalResult verifyTransfers(FunctionOpInterface function);

} // namespace mlir::doppler

#endif // DOPPLER_ANALYSIS_PLACEMENTCHECKS_H
