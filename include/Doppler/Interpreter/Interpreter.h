//===- Interpreter.h - Reference interpreter of doppler functions -*- C++
//-*-===//
//
// Runs a func.func made of doppler ops on host tensors. It is the reference
// semantics that transformations are checked against (e.g. a decomposed
// function must compute what the original computes), not a fast executor.
//
// Numerics: every op computes in double (doppler::applyJoin / applyAgg, the
// semantics the runtime kernels also follow) and rounds each element of its
// result to the precision of the result's element type (f64 unchanged, f32
// through float, other float types through APFloat, round to nearest even).
// An einsum therefore accumulates its aggregation in double and rounds once,
// which makes the interpreter a tight reference for lower-precision backends.
// A doppler.fused op applies its whole join program in double
// (JoinProgram::evaluate) and rounds only its output.
//
// Supported ops: doppler.einsum, doppler.fused, doppler.slice,
// doppler.assemble, doppler.reshape, doppler.conv, doppler.pool,
// doppler.fill, doppler.gather, doppler.transfer (a copy), doppler.evict,
// doppler.reload, func.return. Tensors are float, or i32/i64 where gathers
// use them (indices, tables, function arguments).
// doppler.task (cost-only, opaque values) and ops of other dialects are
// rejected with an error naming the op. Errors are emitted as MLIR diagnostics at the
// offending op (or function) and reported as failure; nothing asserts on
// bad input.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_INTERPRETER_INTERPRETER_H
#define DOPPLER_INTERPRETER_INTERPRETER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <vector>

namespace mlir::doppler {

/// A dense, row-major host tensor of a static shape. Elements are held as
/// doubles whose values are representable in `elementType`: a float type,
/// or i32/i64 (gather indices and tables; integers up to 2^53 in magnitude
/// are exact, which covers every index of a tensor the interpreter holds).
struct HostTensor {
  Type elementType;
  SmallVector<int64_t> shape;
  std::vector<double> data;

  int64_t numElements() const;
  /// The tensor type this tensor is a value of.
  RankedTensorType getType() const;
};

/// A cheap fingerprint of a tensor, for printing.
struct TensorChecksum {
  double sum = 0;
  double l2 = 0; ///< Euclidean norm.
};
TensorChecksum checksum(const HostTensor &tensor);

/// Rounds `value` to the nearest value representable in `type` (a float
/// type; integer types return `value` unchanged).
double roundToType(Type type, double value);

/// The bound of seeded integer arguments: the smallest extent a
/// doppler.gather of `function` indexes (its table's extent along its axis),
/// at least 1; 1 when there is none. The runtime's seededIndexBound gives
/// the same on the function's plan.
int64_t seededIndexBound(func::FuncOp function);

/// Finds the function to run: `name` if non-empty, otherwise the first
/// func.func with a body. Emits an error on `module` and fails when there is
/// none, or when it is a declaration.
FailureOr<func::FuncOp> lookupFunction(ModuleOp module, StringRef name);

/// Seeded random arguments for `function`: every element is uniform in
/// [-1, 1) (53 random bits from std::mt19937_64, which the C++ standard
/// specifies exactly, so results are the same on every platform), then
/// rounded to the element type; i32/i64 elements are floor(u *
/// seededIndexBound(function)) for the same u in [0, 1), so seeded gather
/// indices are in range. Arguments are filled in order from one
/// generator. Fails (with an error) for arguments that are not statically
/// shaped float, i32 or i64 tensors.
///
/// Such inputs are meant for equivalence checks: a function that takes the
/// log, sqrt or rsqrt of an input may produce NaN on them, and a causal mask
/// argument (0 / -inf in real use) is just another random input. Inputs in
/// [-1, 1) keep exp() far from overflow.
FailureOr<SmallVector<HostTensor>> makeRandomInputs(func::FuncOp function,
                                                    uint64_t seed);

/// Runs `function` on `inputs` and returns its results. Fails, with an
/// error at the op that cannot be run, on unsupported ops, non-float or
/// dynamically shaped tensors, multi-block bodies, or inputs that do not
/// match the signature.
FailureOr<SmallVector<HostTensor>> interpret(func::FuncOp function,
                                             ArrayRef<HostTensor> inputs);

/// Norm-wise relative error ||out - ref||_2 / ||ref||_2 (the absolute error
/// ||out - ref||_2 when ref is all zeros). Elements where both tensors hold
/// NaN, or the same infinity, count as equal; a non-finite element in only
/// one of them makes the error +inf, as does a shape mismatch.
double relativeError(const HostTensor &out, const HostTensor &ref);

} // namespace mlir::doppler

#endif // DOPPLER_INTERPRETER_INTERPRETER_H
