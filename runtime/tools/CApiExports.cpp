//===- CApiExports.cpp - The C API as a shared library --------------------===//
//
// libDopplerRuntimeC.so is the static runtime linked whole (every dopplerRt*
// entry point of CApi.cpp is exported), so that a JIT (mlir-runner
// --shared-libs=...) can resolve the calls a lowered program makes. This
// file only anchors the library: it has no code of its own.
//
//===----------------------------------------------------------------------===//

#include "doppler/runtime/CApi.h"
