//===- ConstantEval.h - Evaluating linalg/tensor ops on constants ---------===//
//
// Internal to lib/Conversion/LinalgToDoppler: host tensors of any float or
// integer element type, read from constants (arith.constant dense or
// dense_resource, splat fills), the scalar evaluator of linalg bodies
// (arith, math, linalg.index, tensor.extract of constants) and the
// evaluation of whole ops (ConstantFolding.cpp), and the constant op that
// holds a result.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_LIB_CONVERSION_LINALGTODOPPLER_CONSTANTEVAL_H
#define DOPPLER_LIB_CONVERSION_LINALGTODOPPLER_CONSTANTEVAL_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir::doppler::linalg_to_doppler {

/// A tensor on the host: floats as doubles (rounded to the element type),
/// integers as int64 sign-extended from their width (i1 true is -1).
struct ConstTensor {
  RankedTensorType type;
  std::vector<double> floats;
  std::vector<int64_t> ints;

  bool isFloat() const { return isa<FloatType>(type.getElementType()); }
  int64_t size() const { return type.getNumElements(); }
  double getF(int64_t i) const { return isFloat() ? floats[i] : ints[i]; }
  bool isSplat() const;
};

/// The value of a constant tensor: arith.constant (dense, dense_resource of
/// f32/f64/i32/i64/i1), a float or integer linalg.fill of a scalar
/// constant, or a doppler.fill; std::nullopt otherwise or when it has more
/// than `maxElements` elements (non-splat).
std::optional<ConstTensor> readConstant(Value value, int64_t maxElements);

/// A tensor of `type` holding zeros.
ConstTensor zeroTensor(RankedTensorType type);

/// Whether `value` is a constant readConstant reads (without reading it).
bool isConstantTensor(Value value);

/// The results of `op` computed from its constant operands, or the reason
/// it cannot be (an operand not constant, an op or body op the evaluator
/// does not know, a result over `limit` elements).
struct EvalResult {
  std::vector<ConstTensor> results;
  std::string why;       ///< set when not evaluated
  bool notConstant = false; ///< some operand is not a constant
};
EvalResult evaluateConstantOp(Operation *op, int64_t limit);

/// The constant holding `tensor`: a doppler.fill for a float splat, else an
/// arith.constant dense.
Value materialize(OpBuilder &builder, Location loc, const ConstTensor &tensor);

/// Rounds `value` to the float type `type`.
double roundTo(Type type, double value);
/// `value` truncated to the width of the integer (or index) type `type` and
/// sign-extended back.
int64_t wrapTo(Type type, int64_t value);

} // namespace mlir::doppler::linalg_to_doppler

#endif // DOPPLER_LIB_CONVERSION_LINALGTODOPPLER_CONSTANTEVAL_H
