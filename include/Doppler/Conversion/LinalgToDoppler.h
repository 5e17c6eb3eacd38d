//===- LinalgToDoppler.h - linalg/tensor ops to doppler ops -----*- C++ -*-===//
//
// The patterns of convert-linalg-to-doppler: linalg structured ops whose
// maps are projected permutations and whose bodies are recognised scalar
// computations become chains of doppler.einsum; linalg.fill,
// linalg.softmax and static tensor slicing/concatenation become doppler
// fills, einsums, slices and assembles. See Passes.td for the rules.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_CONVERSION_LINALGTODOPPLER_H
#define DOPPLER_CONVERSION_LINALGTODOPPLER_H

#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/StringMap.h"

#include <cstdint>
#include <string>

namespace mlir::doppler {

struct LinalgToDopplerOptions {
  /// Rewrite the erf form of gelu to the gelu join (the tanh
  /// approximation; not exact).
  bool erfGeluAsTanh = false;
  /// Most elements of a constant an op computed from constants only is
  /// folded into (a larger one is converted as usual, or left).
  int64_t foldLimit = int64_t(1) << 16;
};

/// What the patterns did, filled in as they run (single-threaded: one
/// counter object per pattern application).
struct LinalgToDopplerCounters {
  /// Ops converted, by op name (`linalg.matmul`, `tensor.concat`, ...).
  llvm::StringMap<int64_t> converted;
  /// doppler.einsum ops created.
  int64_t einsums = 0;
};

/// Adds the conversion patterns. `counters`, when given, must outlive the
/// pattern set.
void populateLinalgToDopplerPatterns(RewritePatternSet &patterns,
                                     const LinalgToDopplerOptions &options,
                                     LinalgToDopplerCounters *counters = nullptr);

/// Why `op` (a linalg or tensor op) cannot be converted: empty if the
/// patterns would convert it. Used for remarks and `full=true` errors.
std::string explainUnconvertible(Operation *op,
                                 const LinalgToDopplerOptions &options);

/// Whether `op` is one the conversion is meant to handle and counts: any
/// linalg op, and tensor ops other than tensor.empty/dim/ranked-shape
/// queries.
bool isConversionCandidate(Operation *op);

/// Whether a left-over candidate is compute (every linalg op) rather than
/// data movement (tensor ops): `full=true` fails on compute ops only.
bool isComputeCandidate(Operation *op);

} // namespace mlir::doppler

#endif // DOPPLER_CONVERSION_LINALGTODOPPLER_H
