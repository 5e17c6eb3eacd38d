//===- ScalarBodies.h - Scalar ops of linalg bodies as doppler joins -----===//
//
// Internal to lib/Conversion/LinalgToDoppler: which join or aggregation a
// scalar op of a linalg body computes, and recognising one-input scalar
// functions (sigmoid, silu, gelu, relu, abs) written as several ops.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_LIB_CONVERSION_LINALGTODOPPLER_SCALARBODIES_H
#define DOPPLER_LIB_CONVERSION_LINALGTODOPPLER_SCALARBODIES_H

#include "Builders.h"

#include <optional>
#include <utility>

namespace mlir::doppler::linalg_to_doppler {

/// The join of a one-operand body op, if it has one.
std::optional<JoinKind> unaryJoin(Operation *op);

/// The join of a two-operand body op, if it has one.
std::optional<JoinKind> binaryJoin(Operation *op);

/// `select(cmpf(pred, a, b), a, b)` (or with the arms swapped) as max or
/// min of (a, b).
std::optional<std::pair<JoinKind, std::pair<Value, Value>>>
selectAsMaxMin(Operation *op);

/// The aggregation a reduction body's combiner computes.
std::optional<AggKind> joinAsAggregation(JoinKind join);

/// If the body value `v` is computed by at least two ops from one block
/// argument and constants only, and equals sigmoid, silu, gelu, relu or abs
/// of it (checked at points from -100 to 100, to 1e-6 relative), that join
/// and argument.
std::optional<std::pair<JoinKind, Value>>
recogniseUnaryFunction(Value v, Block *body,
                       const LinalgToDopplerOptions &options);

/// Whether `c` is a power of two (dividing by it is an exact scale).
bool isPowerOfTwo(double c);

/// A float cast (arith.extf/truncf) the body may compute through: see
/// ScalarBodies.cpp. Null if `op` is none.
Value castThrough(Operation *op, Type elementType);

} // namespace mlir::doppler::linalg_to_doppler

#endif // DOPPLER_LIB_CONVERSION_LINALGTODOPPLER_SCALARBODIES_H
