//===- Prepare.h - Rewrites run before the linalg-to-doppler patterns -----===//
//
// Internal to lib/Conversion/LinalgToDoppler. Each function rewrites the
// top-level linalg/tensor ops of one function body into forms the patterns
// convert (or into constants), and counts what it replaced:
//
// - foldConstants (ConstantFolding.cpp): ops whose operands are all
//   constants (iota, arange, masks, comparisons, integer index arithmetic,
//   fills, gathers and scans of constants, RoPE tables) become one dense
//   arith.constant each, up to a size limit;
// - rewriteMaskSelects (MaskSelects.cpp): `select` on a constant i1 mask ->
//   float arithmetic with constant 0/1 and fill tensors, as the PyTorch
//   frontend writes `where` (python/doppler/ops_attention.py);
//   rewriteSafeSoftmax: `where(all(x == -inf), 0, softmax(x))` -> the
//   frontend's safe softmax (a clamped row max, a tiny added to the sum);
// - foldF64Islands (F64Islands.cpp): f32 -> f64 casts, f64 computations and
//   f64 -> f32 casts back computed in f32.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_LIB_CONVERSION_LINALGTODOPPLER_PREPARE_H
#define DOPPLER_LIB_CONVERSION_LINALGTODOPPLER_PREPARE_H

#include "Doppler/Conversion/LinalgToDoppler.h"

#include "mlir/IR/Operation.h"
#include "mlir/IR/PatternMatch.h"

#include <optional>
#include <string>

namespace mlir::doppler::linalg_to_doppler {

void foldConstants(Operation *function, int64_t limit,
                   LinalgToDopplerCounters *counters);
/// Why `op`, whose operands are all constants, was not folded (its result
/// is over `limit` elements, or it uses what the evaluator does not
/// know); std::nullopt when some operand is not a constant.
std::optional<std::string> explainConstantOp(Operation *op, int64_t limit);

void rewriteMaskSelects(Operation *function, int64_t limit,
                        LinalgToDopplerCounters *counters);
void rewriteSafeSoftmax(Operation *function,
                        LinalgToDopplerCounters *counters);
void foldF64Islands(Operation *function, LinalgToDopplerCounters *counters);
/// Integer and boolean tensors computed from data -> f64 tensors of the
/// same values, their ops rewritten on floats (IntegerCarriers.cpp).
void carryIntegersAsFloats(Operation *function,
                           LinalgToDopplerCounters *counters);
/// A generic casting its one input elementwise (sitofp from i32/i64, extf,
/// truncf) -> a conversion einsum (IntegerCarriers.cpp).
void populateConversionPatterns(RewritePatternSet &patterns,
                                LinalgToDopplerCounters *counters);

/// linalg.generic yielding `tensor.extract` of a table -> doppler.gather
/// (Gathers.cpp); explainGather: std::nullopt for an op that is not such a
/// gather, else why it would not convert (empty: it would).
void populateGatherPatterns(RewritePatternSet &patterns, int64_t limit,
                            LinalgToDopplerCounters *counters);
std::optional<std::string> explainGather(Operation *op, int64_t limit);

/// Erases `op` if its results are unused and it is a linalg, tensor or
/// constant op, then its producers that became unused the same way.
void eraseIfDead(Operation *op);

} // namespace mlir::doppler::linalg_to_doppler

#endif // DOPPLER_LIB_CONVERSION_LINALGTODOPPLER_PREPARE_H
