//===- DopplerDialect.h - Doppler dialect -----------------------*- C++ -*-===//

#ifndef DOPPLER_DIALECT_DOPPLERDIALECT_H
#define DOPPLER_DIALECT_DOPPLERDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Dialect.h"

#include "Doppler/Dialect/DopplerDialect.h.inc"

#endif // DOPPLER_DIALECT_DOPPLERDIALECT_H
