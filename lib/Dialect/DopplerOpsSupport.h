//===- DopplerOpsSupport.h - Helpers the op files share ---------*- C++ -*-===//
//
// Type checks and byte counts that the verifiers and work models of the
// dialect's op files (DopplerOps.cpp, DopplerWindowOps.cpp,
// DopplerGatherOps.cpp) share. Internal
// to lib/Dialect.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_LIB_DIALECT_DOPPLEROPSSUPPORT_H
#define DOPPLER_LIB_DIALECT_DOPPLEROPSSUPPORT_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Types.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/Twine.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::doppler::detail {

/// The values of `shape`, copied.
std::vector<int64_t> toVector(ArrayRef<int64_t> shape);

/// `values` as "[a, b, c]", for diagnostics.
std::string listText(ArrayRef<int64_t> values);

/// Bytes of a ranked tensor of static shape (0 for anything else), in
/// doubles: never wraps.
double tensorBytes(Type type);

/// The tensor `type` has a static shape whose element count and byte size
/// are within the shared checked range; otherwise an error on `op` naming
/// `what`.
LogicalResult requireStatic(Operation *op, Type type, const Twine &what);

} // namespace mlir::doppler::detail

#endif // DOPPLER_LIB_DIALECT_DOPPLEROPSSUPPORT_H
