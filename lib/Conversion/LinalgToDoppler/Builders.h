//===- Builders.h - Helpers shared by the linalg-to-doppler patterns ------===//
//
// Internal to lib/Conversion/LinalgToDoppler: building einsums, fills and
// reshapes, recognising constant fills, and the counters the patterns
// update.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_LIB_CONVERSION_LINALGTODOPPLER_BUILDERS_H
#define DOPPLER_LIB_CONVERSION_LINALGTODOPPLER_BUILDERS_H

#include "Doppler/Conversion/LinalgToDoppler.h"
#include "Doppler/Dialect/DopplerOps.h"

#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"

#include <optional>
#include <string>

namespace mlir::doppler::linalg_to_doppler {

/// Index letters in the order loops get them: loop d0 is 'i', d1 'j', ...
/// (so a matmul reads "ik,kj->ij"); 26 at most.
inline constexpr const char kLetters[] = "ijklmnopqrstuvwxyzabcdefgh";
inline constexpr unsigned kMaxLetters = 26;

/// A float tensor type of static shape and float element type, or null.
RankedTensorType staticFloatTensor(Type type);

/// The constant every element of `value` holds when it is made by
/// linalg.fill or doppler.fill of a constant, is a splat arith.constant, or
/// is made by a parallel structured op yielding a constant (a generalised
/// linalg.fill).
std::optional<double> constantFillValue(Value value);

/// The value of a scalar float constant (arith.constant), if `value` is one.
std::optional<double> scalarConstant(Value value);

/// Creates ops and counts the einsums made.
class DopplerBuilder {
public:
  DopplerBuilder(PatternRewriter &rewriter, Location loc,
                 LinalgToDopplerCounters *counters)
      : rewriter(rewriter), loc(loc), counters(counters) {}

  Value einsum(StringRef spec, JoinKind join, std::optional<AggKind> agg,
               std::optional<double> scalar, ValueRange inputs,
               RankedTensorType resultType);
  Value fill(double value, RankedTensorType type);
  Value slice(Value input, ArrayRef<int64_t> offsets,
              RankedTensorType resultType);
  /// `input` itself when it has `resultType`, else a doppler.reshape of it.
  Value reshape(Value input, RankedTensorType resultType);
  /// The block of `value` at `offsets` with `shape`: a fill when `value` is a
  /// constant fill (no slice of a broadcast constant), else a slice.
  Value block(Value value, ArrayRef<int64_t> offsets, ArrayRef<int64_t> shape);
  Value assemble(ArrayRef<int64_t> grid, ValueRange blocks,
                 RankedTensorType resultType);
  /// `source` (same rank as `dest`) written into `dest` at `offsets`: an
  /// assemble of up to 3^rank blocks (the source and the parts of `dest`
  /// around it); parts of a constant-filled `dest` become fills.
  Value insert(Value source, Value dest, ArrayRef<int64_t> offsets);

  PatternRewriter &rewriter;
  Location loc;
  LinalgToDopplerCounters *counters;
};

/// tensor.expand_shape / collapse_shape / reshape -> doppler.reshape
/// (Reshapes.cpp), and why one of them would not convert: std::nullopt for
/// other ops, empty when it would.
void populateReshapePatterns(RewritePatternSet &patterns,
                             LinalgToDopplerCounters *counters);
std::optional<std::string> explainReshape(Operation *op);

/// The join that combines two partial results of aggregation `agg`.
JoinKind aggregationJoin(AggKind agg);

void countConverted(LinalgToDopplerCounters *counters, Operation *op);

// The two families of patterns (StructuredOps.cpp, TensorOps.cpp) and why
// each would not convert an op (empty: it would).
void populateStructuredOpPatterns(RewritePatternSet &patterns,
                                  const LinalgToDopplerOptions &options,
                                  LinalgToDopplerCounters *counters);
std::string explainStructuredOp(Operation *op,
                                const LinalgToDopplerOptions &options);
void populateTensorOpPatterns(RewritePatternSet &patterns,
                              LinalgToDopplerCounters *counters);
std::string explainTensorOp(Operation *op);

/// Convolutions and pools, named or generic, into doppler.conv /
/// doppler.pool (Windows.cpp). explainWindowOp: std::nullopt for an op that
/// slides no window (every map a projected permutation), else why it would
/// not convert (empty: it would).
void populateWindowPatterns(RewritePatternSet &patterns,
                            LinalgToDopplerCounters *counters);
std::optional<std::string> explainWindowOp(Operation *op);
/// Whether every user of the tensor.pad `pad` is a window op that converts
/// with the pad as its padding (so the pad is left for them to fold).
bool foldsIntoWindowOps(Operation *pad);

} // namespace mlir::doppler::linalg_to_doppler

#endif // DOPPLER_LIB_CONVERSION_LINALGTODOPPLER_BUILDERS_H
