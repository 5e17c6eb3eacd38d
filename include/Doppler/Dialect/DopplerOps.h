//===- DopplerOps.h - Doppler operations ------------------------*- C++ -*-===//

#ifndef DOPPLER_DIALECT_DOPPLEROPS_H
#define DOPPLER_DIALECT_DOPPLEROPS_H

#include "Doppler/Dialect/DopplerAttrs.h"
#include "Doppler/Dialect/DopplerDialect.h"
#include "Doppler/Dialect/DopplerInterfaces.h"
#include "Doppler/Dialect/DopplerTypes.h"
#include "Doppler/Support/EinsumSpec.h"
#include "Doppler/Support/JoinProgram.h"
#include "Doppler/Support/Window.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "Doppler/Dialect/DopplerOps.h.inc"

#endif // DOPPLER_DIALECT_DOPPLEROPS_H
