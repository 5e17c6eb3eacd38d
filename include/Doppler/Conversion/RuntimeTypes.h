//===- RuntimeTypes.h - What the runtime can hold, checked on IR -*- C++ -*-===//
//
// The runtime runs statically shaped tensors of f32, f64 and f16 (and i32
// and i64 as gather indices and tables). Both ways
// to it (doppler-lower-to-runtime, which emits C API calls, and the plan
// builder of lib/Target/RuntimeProgram.cpp, which builds a task graph
// directly) check types here, so they accept the same programs and refuse
// the others with the same words.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_TRANSFORMS_RUNTIMETYPES_H
#define DOPPLER_TRANSFORMS_RUNTIMETYPES_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include <cstdint>

namespace mlir::doppler {

/// Element codes of the runtime: DOPPLER_RT_F32/F64/F16/I32/I64 of CApi.h,
/// which equal the values of doppler::runtime::ElementType.
enum class RuntimeElement : int32_t {
  F32 = 0,
  F64 = 1,
  F16 = 2,
  I32 = 3,
  I64 = 4
};

/// The runtime code of f16/f32/f64 or a signless i32/i64; an error at `op`
/// for any other type.
FailureOr<RuntimeElement> getRuntimeElement(Type type, Operation *op);

/// `type` as a statically shaped ranked tensor; an error at `op` naming
/// `what` ("the result", "an operand", ...) otherwise.
FailureOr<RankedTensorType> requireStaticTensor(Type type, Operation *op,
                                                const Twine &what);

/// The device of a non-terminator op the runtime runs (einsum, slice,
/// assemble, fill, gather, transfer, task); an error at the op when it is another
/// op or has no doppler.device.
FailureOr<int> getRuntimeDevice(Operation &op);

/// Argument `index` of `function`: a statically shaped tensor of a runtime
/// element type, or an error at the function.
FailureOr<std::pair<RankedTensorType, RuntimeElement>>
getRuntimeArgumentType(FunctionOpInterface function, unsigned index);

} // namespace mlir::doppler

#endif // DOPPLER_TRANSFORMS_RUNTIMETYPES_H
