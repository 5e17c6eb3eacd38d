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

/// No op directly in the body holds Doppler ops in a region: every phase
/// (costs, placement, simulation, the checks between them) works on a
/// body's top-level ops, so a nested einsum would be neither costed nor
/// placed while the program looked complete. One error per function, on
/// the op holding the region, with a note on the nested op.
LogicalResult verifyNotNested(FunctionOpInterface function);

/// The function is input the placement phases can take: no op carries
/// `doppler.device` and there is no `doppler.transfer` (it is not placed
/// already: placing again would decompose blocks and add transfers on top
/// of transfers), and no op directly in the body holds Doppler ops in a
/// region (the phases place a body's top-level ops: nested einsums would be
/// decomposed but never costed or placed). One error per function.
LogicalResult verifyUnplaced(FunctionOpInterface function);

/// Every non-terminator op directly in the body has `doppler.device`, and
/// none holds Doppler ops in a region (verifyNotNested).
LogicalResult verifyPlaced(FunctionOpInterface function);

/// Every operand produced on another device comes through a
/// `doppler.transfer` whose source and target match the producer's and the
/// consumer's devices (function arguments are on every device).
LogicalResult verifyTransfers(FunctionOpInterface function);

} // namespace mlir::doppler

#endif // DOPPLER_ANALYSIS_PLACEMENTCHECKS_H
