//===- Interpreter.cpp - Reference interpreter of doppler functions -------===//

#include "Doppler/Interpreter/Interpreter.h"
#include "Doppler/Support/CheckedSize.h"

#include "Doppler/Dialect/DopplerOps.h"
#include "Doppler/Support/EinsumSpec.h"
#include "Doppler/Support/JoinProgram.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>

using namespace mlir;
using namespace mlir::doppler;

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

int64_t HostTensor::numElements() const {
  int64_t count = 1;
  for (int64_t extent : shape)
    count *= extent;
  return count;
}

RankedTensorType HostTensor::getType() const {
  return RankedTensorType::get(shape, elementType);
}

TensorChecksum mlir::doppler::checksum(const HostTensor &tensor) {
  TensorChecksum result;
  double squares = 0;
  for (double value : tensor.data) {
    result.sum += value;
    squares += value * value;
  }
  result.l2 = std::sqrt(squares);
  return result;
}

namespace {

/// Rounds doubles to one float type; f64 and f32 avoid APFloat's cost.
/// Integer tensors (gather indices and tables) hold integers already, copied
/// from arguments or other integer tensors: nothing to round.
class Rounder {
public:
  explicit Rounder(Type type) : type(dyn_cast<FloatType>(type)) {
    if (!this->type || type.isF64())
      kind = Kind::F64;
    else if (type.isF32())
      kind = Kind::F32;
    else
      kind = Kind::Other;
  }

  double operator()(double value) const {
    switch (kind) {
    case Kind::F64:
      return value;
    case Kind::F32:
      return static_cast<double>(static_cast<float>(value));
    case Kind::Other:
      break;
    }
    llvm::APFloat converted(value);
    bool losesInfo = false;
    converted.convert(type.getFloatSemantics(),
                      llvm::APFloat::rmNearestTiesToEven, &losesInfo);
    converted.convert(llvm::APFloat::IEEEdouble(),
                      llvm::APFloat::rmNearestTiesToEven, &losesInfo);
    return converted.convertToDouble();
  }

  void apply(std::vector<double> &values) const {
    if (kind == Kind::F64)
      return;
    for (double &value : values)
      value = (*this)(value);
  }

private:
  enum class Kind { F64, F32, Other };
  FloatType type;
  Kind kind;
};

/// Row-major strides of `shape`.
SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

/// Copies the box of extent `box` at `srcOffset` in `src` to `dstOffset` in
/// `dst`. Rows along the innermost dimension are contiguous on both sides,
/// so the odometer runs over the outer dimensions only.
void copyBox(const std::vector<double> &src, ArrayRef<int64_t> srcShape,
             ArrayRef<int64_t> srcOffset, std::vector<double> &dst,
             ArrayRef<int64_t> dstShape, ArrayRef<int64_t> dstOffset,
             ArrayRef<int64_t> box) {
  int64_t rank = box.size();
  for (int64_t extent : box)
    if (extent == 0)
      return;
  SmallVector<int64_t> srcStrides = stridesOf(srcShape),
                       dstStrides = stridesOf(dstShape);
  int64_t srcPos = 0, dstPos = 0;
  for (int64_t d = 0; d < rank; ++d) {
    srcPos += srcOffset[d] * srcStrides[d];
    dstPos += dstOffset[d] * dstStrides[d];
  }
  if (rank == 0) {
    dst[dstPos] = src[srcPos];
    return;
  }
  int64_t rowLength = box[rank - 1];
  int64_t rows = 1;
  for (int64_t d = 0; d + 1 < rank; ++d)
    rows *= box[d];
  SmallVector<int64_t> counter(rank, 0);
  for (int64_t row = 0; row < rows; ++row) {
    std::copy_n(src.begin() + srcPos, rowLength, dst.begin() + dstPos);
    for (int64_t d = rank - 2; d >= 0; --d) {
      srcPos += srcStrides[d];
      dstPos += dstStrides[d];
      if (++counter[d] < box[d])
        break;
      srcPos -= srcStrides[d] * box[d];
      dstPos -= dstStrides[d] * box[d];
      counter[d] = 0;
    }
  }
}

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

/// The interpreter is a reference for small shapes: beyond these sizes it
/// reports an error instead of exhausting memory or running for hours.
constexpr double kMaxElements = 1 << 28; // 2 GiB of doubles per tensor.
constexpr double kMaxPoints = 1LL << 32; // Iteration points per einsum.

std::string countString(double count) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.4g", count);
  return buffer;
}

/// Refuses an einsum or fused op whose iteration space is past kMaxPoints.
LogicalResult checkPoints(Operation *op, double points) {
  if (points > kMaxPoints)
    return op->emitOpError() << "visits " << countString(points)
                             << " points, too many for the interpreter";
  return success();
}

LogicalResult checkPoints(Operation *op, const ::doppler::IndexSizes &sizes) {
  double points = 1;
  for (int64_t extent : sizes.sizes)
    points *= static_cast<double>(extent);
  return checkPoints(op, points);
}

/// Checks that `type` is a statically shaped tensor of floats or of i32/i64
/// (gather indices and tables) that the interpreter can hold; the error goes
/// to `op`.
FailureOr<RankedTensorType> requireHostType(Operation *op, Type type,
                                            const Twine &what) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return op->emitOpError() << what << " has type " << type
                             << "; the interpreter runs ranked tensors only";
  if (!tensor.hasStaticShape())
    return op->emitOpError() << what << " has a dynamic shape " << type
                             << "; the interpreter needs static shapes";
  Type element = tensor.getElementType();
  if (!isa<FloatType>(element) && !element.isSignlessInteger(32) &&
      !element.isSignlessInteger(64))
    return op->emitOpError()
           << what << " has element type " << element
           << "; the interpreter runs float, i32 and i64 tensors only";
  // The same count as every layer's (never wrapped); the interpreter's own
  // cap on it is far lower than the 2^62 the verifier allows.
  double elements = ::doppler::approximateElementCount(
      tensor.getShape().data(), tensor.getShape().size());
  if (elements > kMaxElements)
    return op->emitOpError()
           << what << " of type " << type << " has " << countString(elements)
           << " elements, too many for the interpreter";
  return tensor;
}

HostTensor makeTensor(RankedTensorType type) {
  HostTensor tensor;
  tensor.elementType = type.getElementType();
  tensor.shape.assign(type.getShape().begin(), type.getShape().end());
  tensor.data.assign(tensor.numElements(), 0.0);
  return tensor;
}

/// Evaluates an einsum by visiting its iteration space in the order
/// (output indices..., contracted indices...): each output element is
/// produced by one contiguous run over the contracted indices, and input
/// offsets advance by strides instead of being decoded per point.
HostTensor evalEinsum(EinsumOp op, ArrayRef<const HostTensor *> inputs,
                      RankedTensorType resultType) {
  ::doppler::EinsumSpec spec = op.getParsedSpec();
  ::doppler::IndexSizes sizes = op.getIndexSizes();
  ::doppler::JoinKind join = toSupport(op.getJoin());
  std::optional<::doppler::AggKind> agg;
  if (op.getAggregation())
    agg = toSupport(*op.getAggregation());
  double scalar = op.getScalar() ? op.getScalar()->convertToDouble() : 0.0;

  std::string order = spec.output + spec.contractedIndices();
  int64_t numDims = order.size();
  SmallVector<int64_t> extents;
  for (char index : order)
    extents.push_back(sizes.sizeOf(index));
  int64_t outCount = 1, innerCount = 1;
  for (int64_t d = 0; d < numDims; ++d)
    (d < static_cast<int64_t>(spec.output.size()) ? outCount : innerCount) *=
        extents[d];

  // strides[t][d]: how far input t's offset moves when index order[d] steps.
  unsigned numInputs = inputs.size();
  SmallVector<SmallVector<int64_t>> strides(numInputs,
                                            SmallVector<int64_t>(numDims, 0));
  for (unsigned t = 0; t < numInputs; ++t) {
    SmallVector<int64_t> inputStrides = stridesOf(inputs[t]->shape);
    for (auto [d, index] : llvm::enumerate(spec.inputs[t]))
      strides[t][order.find(index)] = inputStrides[d];
  }

  HostTensor result = makeTensor(resultType);
  const double identity = agg ? ::doppler::aggIdentity(*agg) : 0.0;
  const double *in0 = inputs[0]->data.data();
  const double *in1 = numInputs > 1 ? inputs[1]->data.data() : nullptr;
  int64_t off0 = 0, off1 = 0;
  SmallVector<int64_t> counter(numDims, 0);
  for (int64_t out = 0; out < outCount; ++out) {
    double acc = identity;
    for (int64_t inner = 0; inner < innerCount; ++inner) {
      double value =
          ::doppler::applyJoin(join, in0[off0], in1 ? in1[off1] : 0.0, scalar);
      acc = agg ? ::doppler::applyAgg(*agg, acc, value) : value;
      for (int64_t d = numDims - 1; d >= 0; --d) {
        off0 += strides[0][d];
        if (in1)
          off1 += strides[1][d];
        if (++counter[d] < extents[d])
          break;
        off0 -= strides[0][d] * extents[d];
        if (in1)
          off1 -= strides[1][d] * extents[d];
        counter[d] = 0;
      }
    }
    result.data[out] = acc;
  }
  Rounder(result.elementType).apply(result.data);
  return result;
}

/// Evaluates a fused elementwise op: at every output point, its join
/// program on one element of each input (broadcast along the indices an
/// input lacks, as in an einsum), in double; like an einsum's result, only
/// the output is rounded to the element type (the intermediate steps never
/// exist as tensors).
HostTensor evalFused(FusedOp op, ArrayRef<const HostTensor *> inputs,
                     RankedTensorType resultType) {
  ::doppler::EinsumSpec spec = op.getParsedSpec();
  ::doppler::IndexSizes sizes = op.getIndexSizes();
  ::doppler::JoinProgram program = op.getParsedProgram();

  const std::string &order = spec.output;
  int64_t numDims = order.size();
  SmallVector<int64_t> extents;
  for (char index : order)
    extents.push_back(sizes.sizeOf(index));
  unsigned numInputs = inputs.size();
  SmallVector<SmallVector<int64_t>> strides(numInputs,
                                            SmallVector<int64_t>(numDims, 0));
  for (unsigned t = 0; t < numInputs; ++t) {
    SmallVector<int64_t> inputStrides = stridesOf(inputs[t]->shape);
    for (auto [d, index] : llvm::enumerate(spec.inputs[t]))
      strides[t][order.find(index)] = inputStrides[d];
  }

  HostTensor result = makeTensor(resultType);
  SmallVector<int64_t> offsets(numInputs, 0), counter(numDims, 0);
  SmallVector<double> values(numInputs, 0.0);
  for (double &out : result.data) {
    for (unsigned t = 0; t < numInputs; ++t)
      values[t] = inputs[t]->data[offsets[t]];
    out = program.evaluate(values.data());
    for (int64_t d = numDims - 1; d >= 0; --d) {
      for (unsigned t = 0; t < numInputs; ++t)
        offsets[t] += strides[t][d];
      if (++counter[d] < extents[d])
        break;
      for (unsigned t = 0; t < numInputs; ++t)
        offsets[t] -= strides[t][d] * extents[d];
      counter[d] = 0;
    }
  }
  Rounder(result.elementType).apply(result.data);
  return result;
}

HostTensor evalSlice(SliceOp op, const HostTensor &input,
                     RankedTensorType resultType) {
  HostTensor result = makeTensor(resultType);
  SmallVector<int64_t> zeros(result.shape.size(), 0);
  copyBox(input.data, input.shape, op.getOffsets(), result.data, result.shape,
          zeros, result.shape);
  return result;
}

HostTensor evalAssemble(AssembleOp op, ArrayRef<const HostTensor *> blocks,
                        RankedTensorType resultType) {
  HostTensor result = makeTensor(resultType);
  SmallVector<int64_t> zeros(result.shape.size(), 0);
  for (auto [i, block] : llvm::enumerate(blocks))
    copyBox(block->data, block->shape, zeros, result.data, result.shape,
            op.getBlockOffsets(i), block->shape);
  return result;
}

/// `table` gathered along the op's axis at `indices`: for each position p
/// before the axis, each index i and each position q after it,
/// result[p, i, q] = table[p, indices[i], q], copied as rows of the q dims.
/// An index outside [0, extent) is an error naming it and its position.
FailureOr<HostTensor> evalGather(GatherOp op, const HostTensor &table,
                                 const HostTensor &indices,
                                 RankedTensorType type) {
  int64_t axis = op.getAxis();
  int64_t extent = table.shape[axis];
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= table.shape[d];
  for (int64_t d = axis + 1, e = table.shape.size(); d < e; ++d)
    inner *= table.shape[d];
  int64_t count = indices.numElements();
  for (int64_t i = 0; i < count; ++i) {
    double index = indices.data[i];
    if (!(index >= 0 && index < static_cast<double>(extent)))
      return op.emitOpError()
             << "index " << index << " at position " << i
             << " of the indices is outside [0, " << extent << ") (axis "
             << axis << " of the table)";
    // Float indices (integers carried as floats) must be integers.
    if (std::floor(index) != index)
      return op.emitOpError()
             << "index " << index << " at position " << i
             << " of the indices is not an integer (axis " << axis
             << " of the table)";
  }
  HostTensor result = makeTensor(type);
  auto out = result.data.begin();
  for (int64_t p = 0; p < outer; ++p)
    for (int64_t i = 0; i < count; ++i) {
      auto row = table.data.begin() +
                 (p * extent + static_cast<int64_t>(indices.data[i])) * inner;
      out = std::copy_n(row, inner, out);
    }
  return result;
}

} // namespace

int64_t mlir::doppler::seededIndexBound(func::FuncOp function) {
  int64_t bound = 0;
  function.walk([&](GatherOp gather) {
    int64_t extent =
        cast<RankedTensorType>(gather.getTable().getType())
            .getDimSize(gather.getAxis());
    bound = bound == 0 ? extent : std::min(bound, extent);
  });
  return std::max<int64_t>(bound, 1);
}

double mlir::doppler::roundToType(Type type, double value) {
  return Rounder(type)(value);
}

//===----------------------------------------------------------------------===//
// Functions
//===----------------------------------------------------------------------===//

FailureOr<func::FuncOp> mlir::doppler::lookupFunction(ModuleOp module,
                                                      StringRef name) {
  if (name.empty()) {
    for (auto function : module.getOps<func::FuncOp>())
      if (!function.isExternal())
        return function;
    return module.emitError("the module has no function with a body to run");
  }
  auto function = module.lookupSymbol<func::FuncOp>(name);
  if (!function)
    return module.emitError()
           << "no function named @" << name << " in the module";
  if (function.isExternal())
    return function.emitError() << "function @" << name
                                << " is a declaration; it has no body to run";
  return function;
}

FailureOr<SmallVector<HostTensor>>
mlir::doppler::makeRandomInputs(func::FuncOp function, uint64_t seed) {
  std::mt19937_64 generator(seed);
  double indexBound = static_cast<double>(seededIndexBound(function));
  SmallVector<HostTensor> inputs;
  for (auto [i, type] : llvm::enumerate(function.getArgumentTypes())) {
    FailureOr<RankedTensorType> tensorType =
        requireHostType(function, type, "argument " + Twine(i));
    if (failed(tensorType))
      return failure();
    HostTensor tensor = makeTensor(*tensorType);
    Rounder round(tensor.elementType);
    bool integer = isa<IntegerType>(tensor.elementType);
    for (double &value : tensor.data) {
      // 53 random bits: uniform in [0, 1) exactly representable, then [-1, 1)
      // for floats, floor(u * indexBound) for integers (the runtime's
      // makeSeededArguments draws the same).
      double unit = static_cast<double>(generator() >> 11) * 0x1.0p-53;
      value = integer ? std::floor(unit * indexBound) : round(2.0 * unit - 1.0);
    }
    inputs.push_back(std::move(tensor));
  }
  return inputs;
}

namespace {

/// A convolution or pool by the shared reference loops, rounded to the
/// result's element type.
HostTensor evalWindow(Operation *op, ArrayRef<const HostTensor *> operands,
                      RankedTensorType type) {
  HostTensor result = makeTensor(type);
  std::vector<int64_t> inputShape(operands[0]->shape.begin(),
                                  operands[0]->shape.end());
  std::vector<int64_t> resultShape(type.getShape().begin(),
                                   type.getShape().end());
  if (auto conv = dyn_cast<ConvOp>(op)) {
    std::vector<int64_t> weightShape(operands[1]->shape.begin(),
                                     operands[1]->shape.end());
    ::doppler::convolutionReference(
        operands[0]->data.data(), inputShape, operands[1]->data.data(),
        weightShape, conv.getGroups(), conv.getGeometry(), result.data.data(),
        resultShape);
  } else {
    auto pool = cast<PoolOp>(op);
    ::doppler::poolReference(pool.getKind() == PoolKind::Max
                                 ? ::doppler::PoolKind::Max
                                 : ::doppler::PoolKind::Avg,
                             operands[0]->data.data(), inputShape,
                             pool.getGeometry(), result.data.data(),
                             resultShape);
  }
  for (double &value : result.data)
    value = roundToType(result.elementType, value);
  return result;
}

/// Runs one op of a straight-line doppler function on its operands' values.
FailureOr<HostTensor> evaluateOp(Operation *op,
                                 ArrayRef<const HostTensor *> operands) {
  if (isa<EinsumOp, FusedOp, SliceOp, AssembleOp, ReshapeOp, ConvOp, PoolOp,
          FillOp, GatherOp, TransferOp, EvictOp, ReloadOp>(op)) {
    // Check up front that all operands and results are host tensors.
    for (auto [i, operand] : llvm::enumerate(op->getOperands()))
      if (failed(requireHostType(op, operand.getType(), "operand " + Twine(i))))
        return failure();
  }

  return llvm::TypeSwitch<Operation *, FailureOr<HostTensor>>(op)
      .Case([&](EinsumOp einsum) -> FailureOr<HostTensor> {
        auto type = requireHostType(op, einsum.getType(), "result");
        if (failed(type))
          return failure();
        if (failed(checkPoints(op, einsum.getIndexSizes())))
          return failure();
        // A conversion of integers: exact, or an error naming the value
        // (as the runtime's; floats are rounded by evalEinsum).
        if (operands[0]->elementType.isInteger())
          for (auto [i, value] : llvm::enumerate(operands[0]->data))
            if (roundToType(type->getElementType(), value) != value)
              return op->emitOpError()
                     << "the integer " << static_cast<int64_t>(value)
                     << " at position " << i << " has no exact "
                     << type->getElementType() << " value";
        return evalEinsum(einsum, operands, *type);
      })
      .Case([&](FusedOp fused) -> FailureOr<HostTensor> {
        auto type = requireHostType(op, fused.getType(), "result");
        if (failed(type))
          return failure();
        if (failed(checkPoints(op, fused.getIndexSizes())))
          return failure();
        return evalFused(fused, operands, *type);
      })
      .Case([&](SliceOp slice) -> FailureOr<HostTensor> {
        auto type = requireHostType(op, slice.getType(), "result");
        if (failed(type))
          return failure();
        return evalSlice(slice, *operands[0], *type);
      })
      .Case([&](AssembleOp assemble) -> FailureOr<HostTensor> {
        auto type = requireHostType(op, assemble.getType(), "result");
        if (failed(type))
          return failure();
        return evalAssemble(assemble, operands, *type);
      })
      .Case([&](ReshapeOp reshape) -> FailureOr<HostTensor> {
        auto type = requireHostType(op, reshape.getType(), "result");
        if (failed(type))
          return failure();
        // Row-major order is unchanged: the same elements, another shape.
        HostTensor result;
        result.elementType = type->getElementType();
        result.shape.assign(type->getShape().begin(), type->getShape().end());
        result.data = operands[0]->data;
        return result;
      })
      .Case<ConvOp, PoolOp>([&](Operation *window) -> FailureOr<HostTensor> {
        auto type = requireHostType(op, window->getResult(0).getType(),
                                    "result");
        if (failed(type))
          return failure();
        // Points visited: the work model's FLOPs (2 per multiply-add for a
        // convolution, 1 per window element for a pool).
        if (failed(checkPoints(op, cast<WorkOpInterface>(window).getFlops())))
          return failure();
        return evalWindow(window, operands, *type);
      })
      .Case([&](FillOp fill) -> FailureOr<HostTensor> {
        auto type = requireHostType(op, fill.getType(), "result");
        if (failed(type))
          return failure();
        HostTensor tensor = makeTensor(*type);
        std::fill(
            tensor.data.begin(), tensor.data.end(),
            roundToType(tensor.elementType, fill.getValue().convertToDouble()));
        return tensor;
      })
      .Case([&](GatherOp gather) -> FailureOr<HostTensor> {
        auto type = requireHostType(op, gather.getType(), "result");
        if (failed(type))
          return failure();
        return evalGather(gather, *operands[0], *operands[1], *type);
      })
      .Case([&](TransferOp) -> FailureOr<HostTensor> {
        // One address space here: a move between devices is a copy.
        return *operands[0];
      })
      .Case<EvictOp, ReloadOp>([&](Operation *) -> FailureOr<HostTensor> {
        // Host memory is the only memory here: an offload and its reload
        // are copies (a reload's `after` values order it, nothing more).
        return *operands[0];
      })
      .Case([&](TaskOp) -> FailureOr<HostTensor> {
        return op->emitOpError() << "is a cost-only op with opaque values; the "
                                    "interpreter cannot run it";
      })
      .Default([&](Operation *) -> FailureOr<HostTensor> {
        return op->emitOpError()
               << "is not supported by the interpreter (it runs "
                  "doppler.einsum, doppler.fused, doppler.slice, "
                  "doppler.assemble, doppler.reshape, doppler.conv, "
                  "doppler.pool, doppler.fill, doppler.gather, "
                  "doppler.transfer, doppler.evict, doppler.reload and "
                  "func.return)";
      });
}

/// Checks that `function` is a single-block function taking `inputs`.
LogicalResult checkRunnable(func::FuncOp function,
                            ArrayRef<HostTensor> inputs) {
  if (function.isExternal())
    return function.emitError() << "function @" << function.getName()
                                << " is a declaration; it has no body to run";
  if (!function.getBody().hasOneBlock())
    return function.emitError()
           << "function @" << function.getName()
           << " has several blocks; the interpreter runs straight-line "
              "functions only";
  Block &body = function.getBody().front();
  if (inputs.size() != body.getNumArguments())
    return function.emitError()
           << "function @" << function.getName() << " takes "
           << body.getNumArguments() << " argument(s) but " << inputs.size()
           << " were given";
  return success();
}

} // namespace

FailureOr<SmallVector<HostTensor>>
mlir::doppler::interpret(func::FuncOp function, ArrayRef<HostTensor> inputs) {
  if (failed(checkRunnable(function, inputs)))
    return failure();
  Block &body = function.getBody().front();

  // Values live until their last use, so that large decomposed functions
  // do not hold every intermediate block at once.
  llvm::DenseMap<Value, HostTensor> env;
  llvm::DenseMap<Value, unsigned> remainingUses;
  auto define = [&](Value value, HostTensor tensor) {
    unsigned uses = std::distance(value.use_begin(), value.use_end());
    if (uses == 0)
      return;
    remainingUses[value] = uses;
    env[value] = std::move(tensor);
  };

  for (auto [i, argument] : llvm::enumerate(body.getArguments())) {
    FailureOr<RankedTensorType> type =
        requireHostType(function, argument.getType(), "argument " + Twine(i));
    if (failed(type))
      return failure();
    if (inputs[i].getType() != *type)
      return function.emitError()
             << "argument " << i << " of @" << function.getName()
             << " has type " << *type << " but the input given has type "
             << inputs[i].getType();
    define(argument, inputs[i]);
  }

  SmallVector<HostTensor> outputs;
  for (Operation &operation : body) {
    Operation *op = &operation;
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      for (Value operand : ret.getOperands())
        outputs.push_back(env.lookup(operand));
      return outputs;
    }
    if (op->getNumRegions() != 0)
      return op->emitOpError() << "has regions; the interpreter runs "
                                  "straight-line doppler functions only";

    SmallVector<const HostTensor *> operands;
    for (Value operand : op->getOperands()) {
      auto it = env.find(operand);
      if (it == env.end())
        return op->emitOpError() << "uses a value the interpreter did not "
                                    "compute (defined outside the function?)";
      operands.push_back(&it->second);
    }
    FailureOr<HostTensor> result = evaluateOp(op, operands);
    if (failed(result))
      return failure();

    for (Value operand : op->getOperands())
      if (--remainingUses[operand] == 0)
        env.erase(operand);
    define(op->getResult(0), std::move(*result));
  }
  return function.emitError() << "function @" << function.getName()
                              << " does not end with func.return";
}

//===----------------------------------------------------------------------===//
// Comparison
//===----------------------------------------------------------------------===//

double mlir::doppler::relativeError(const HostTensor &out,
                                    const HostTensor &ref) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (out.shape != ref.shape || out.data.size() != ref.data.size())
    return kInf;
  double diffSquares = 0, refSquares = 0;
  for (size_t i = 0, e = ref.data.size(); i < e; ++i) {
    double a = out.data[i], b = ref.data[i];
    if (!std::isfinite(a) || !std::isfinite(b)) {
      bool same = (std::isnan(a) && std::isnan(b)) || a == b;
      if (!same)
        return kInf;
      continue;
    }
    diffSquares += (a - b) * (a - b);
    refSquares += b * b;
  }
  if (refSquares == 0)
    return std::sqrt(diffSquares);
  return std::sqrt(diffSquares / refSquares);
}
