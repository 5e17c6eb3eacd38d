//===- DopplerTypes.h - Doppler types ---------------------------*- C++ -*-===//

#ifndef DOPPLER_DIALECT_DOPPLERTYPES_H
#define DOPPLER_DIALECT_DOPPLERTYPES_H

#include "mlir/IR/Types.h"

#define GET_TYPEDEF_CLASSES
#include "Doppler/Dialect/DopplerTypes.h.inc"

#endif // DOPPLER_DIALECT_DOPPLERTYPES_H
