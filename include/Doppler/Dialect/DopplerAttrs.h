//===- DopplerAttrs.h - Doppler enums and attributes ------------*- C++ -*-===//

#ifndef DOPPLER_DIALECT_DOPPLERATTRS_H
#define DOPPLER_DIALECT_DOPPLERATTRS_H

#include "Doppler/Support/EinsumSpec.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"

#include "Doppler/Dialect/DopplerEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "Doppler/Dialect/DopplerAttrs.h.inc"

namespace mlir::doppler {
/// The MLIR-free counterparts used by the cost model and the runtime.
::doppler::JoinKind toSupport(JoinKind kind);
::doppler::AggKind toSupport(AggKind kind);
} // namespace mlir::doppler

#endif // DOPPLER_DIALECT_DOPPLERATTRS_H
