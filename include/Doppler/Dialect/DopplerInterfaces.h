//===- DopplerInterfaces.h - Doppler op interfaces --------------*- C++ -*-===//

#ifndef DOPPLER_DIALECT_DOPPLERINTERFACES_H
#define DOPPLER_DIALECT_DOPPLERINTERFACES_H

#include "mlir/IR/OpDefinition.h"

#include "Doppler/Dialect/DopplerInterfaces.h.inc"

#endif // DOPPLER_DIALECT_DOPPLERINTERFACES_H
