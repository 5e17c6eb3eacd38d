//===- DopplerOps.cpp - Doppler operations --------------------------------===//

#include "Doppler/Dialect/DopplerOps.h"
#include "DopplerOpsSupport.h"
#include "Doppler/Support/CheckedSize.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace mlir;
using namespace mlir::doppler;

//===----------------------------------------------------------------------===//
// Custom assembly
//===----------------------------------------------------------------------===//

/// Prints the shortest decimal that reads back as exactly `value`: costs such
/// as 68719476736 stay readable where the default printer falls back to hex.
static void printExactDouble(OpAsmPrinter &printer, double value) {
  if (!std::isfinite(value)) { // Only hex reads back as inf or nan.
    printer.printFloat(APFloat(value));
    return;
  }
  char buffer[64];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buffer, sizeof(buffer), "%.*g", precision, value);
    if (std::strtod(buffer, nullptr) == value)
      break;
  }
  std::string text(buffer);
  // Small integers read best in fixed notation ("10.0", not "1.0e+01").
  if (text.find('e') != std::string::npos && std::fabs(value) < 1e6 &&
      value == std::trunc(value))
    text = std::to_string(static_cast<int64_t>(value));
  // MLIR's float literals need a '.' ("1e-06" reads as an integer).
  if (text.find('.') == std::string::npos) {
    size_t exponent = text.find('e');
    text.insert(exponent == std::string::npos ? text.size() : exponent, ".0");
  }
  printer << text;
}

static ParseResult parseNumber(OpAsmParser &parser, FloatAttr &attr) {
  double value;
  if (parser.parseFloat(value))
    return failure();
  attr = FloatAttr::get(Float64Type::get(parser.getContext()), value);
  return success();
}

static void printNumber(OpAsmPrinter &printer, Operation *, FloatAttr attr) {
  printExactDouble(printer, attr.getValueAsDouble());
}

// `join(mul) agg(add)`, `join(scale, 0.125)`.

static ParseResult parseJoinAndAggregation(OpAsmParser &parser,
                                           JoinKindAttr &join,
                                           FloatAttr &scalar,
                                           AggKindAttr &aggregation) {
  MLIRContext *context = parser.getContext();
  StringRef name;
  if (parser.parseKeyword("join") || parser.parseLParen())
    return failure();
  SMLoc nameLoc = parser.getCurrentLocation();
  if (parser.parseKeyword(&name))
    return failure();
  std::optional<JoinKind> joinKind = symbolizeJoinKind(name);
  if (!joinKind) {
    std::string valid;
    for (uint32_t i = 0; i <= getMaxEnumValForJoinKind(); ++i)
      valid += (i ? ", " : "") + stringifyJoinKind(static_cast<JoinKind>(i)).str();
    return parser.emitError(nameLoc) << "unknown join '" << name
                                     << "'; expected one of: " << valid;
  }
  join = JoinKindAttr::get(context, *joinKind);
  if (succeeded(parser.parseOptionalComma())) {
    double value;
    if (parser.parseFloat(value))
      return failure();
    scalar = FloatAttr::get(Float64Type::get(context), value);
  }
  if (parser.parseRParen())
    return failure();
  if (failed(parser.parseOptionalKeyword("agg")))
    return success();
  if (parser.parseLParen())
    return failure();
  nameLoc = parser.getCurrentLocation();
  if (parser.parseKeyword(&name))
    return failure();
  std::optional<AggKind> aggKind = symbolizeAggKind(name);
  if (!aggKind)
    return parser.emitError(nameLoc)
           << "unknown aggregation '" << name
           << "'; expected one of: add, mul, max, min";
  aggregation = AggKindAttr::get(context, *aggKind);
  return parser.parseRParen();
}

static void printJoinAndAggregation(OpAsmPrinter &printer, Operation *,
                                    JoinKindAttr join, FloatAttr scalar,
                                    AggKindAttr aggregation) {
  printer << "join(" << stringifyJoinKind(join.getValue());
  if (scalar) {
    printer << ", ";
    printExactDouble(printer, scalar.getValueAsDouble());
  }
  printer << ")";
  if (aggregation)
    printer << " agg(" << stringifyAggKind(aggregation.getValue()) << ")";
}

// `max`, `avg`: a pool's kind as a bare keyword.

static ParseResult parsePoolKind(OpAsmParser &parser, PoolKindAttr &kind) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef name;
  if (parser.parseKeyword(&name))
    return failure();
  std::optional<PoolKind> value = symbolizePoolKind(name);
  if (!value)
    return parser.emitError(loc) << "unknown pool kind '" << name
                                 << "'; expected max or avg";
  kind = PoolKindAttr::get(parser.getContext(), *value);
  return success();
}

static void printPoolKind(OpAsmPrinter &printer, Operation *,
                          PoolKindAttr kind) {
  printer << stringifyPoolKind(kind.getValue());
}

#define GET_OP_CLASSES
#include "Doppler/Dialect/DopplerOps.cpp.inc"

// Shared with the other op files of the dialect (DopplerOpsSupport.h).
namespace mlir::doppler::detail {

std::vector<int64_t> toVector(ArrayRef<int64_t> shape) {
  return std::vector<int64_t>(shape.begin(), shape.end());
}

std::string listText(ArrayRef<int64_t> values) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i)
    text += (i ? ", " : "") + std::to_string(values[i]);
  return text + "]";
}

/// Bytes of one element: sub-byte types round up to a whole byte.
double elementBytes(Type type) {
  Type element = getElementTypeOrSelf(type);
  if (element.isIntOrFloat())
    return static_cast<double>((element.getIntOrFloatBitWidth() + 7) / 8);
  return 0;
}

/// In doubles, extent by extent: exact for every size the verifier accepts
/// (at most 2^62 bytes), and never wrapped around for a type no verifier saw
/// (getNumElements() multiplies in int64_t).
double tensorBytes(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return 0;
  return ::doppler::approximateElementCount(tensor.getShape().data(),
                                           tensor.getShape().size()) *
         elementBytes(tensor);
}

std::string shapeString(ArrayRef<int64_t> shape) {
  std::string text;
  for (auto [i, extent] : llvm::enumerate(shape)) {
    if (i)
      text += "x";
    text += std::to_string(extent);
  }
  return shape.empty() ? "a scalar (rank 0)" : text;
}

LogicalResult requireStatic(Operation *op, Type type, const Twine &what) {
  auto tensor = cast<RankedTensorType>(type);
  if (!tensor.hasStaticShape())
    return op->emitOpError() << what << " has a dynamic shape " << tensor
                             << "; doppler ops need static shapes";
  // Element counts and byte sizes must fit the shared checked range, so no
  // later layer (costs, decomposition, runtime plans) sees a wrapped size.
  std::string problem = ::doppler::checkedSizeProblem(
      tensor.getShape().data(), tensor.getShape().size(),
      static_cast<int64_t>(elementBytes(tensor)));
  if (!problem.empty())
    return op->emitOpError() << what << " of type " << tensor << " "
                             << problem;
  return success();
}

/// Both types static (requireStatic) and of the same element type: what an
/// op that moves elements without computing on them (slice, reshape)
/// requires of its input and result.
LogicalResult requireStaticOfOneElementType(Operation *op,
                                            RankedTensorType inputType,
                                            RankedTensorType resultType) {
  if (failed(requireStatic(op, inputType, "input")) ||
      failed(requireStatic(op, resultType, "result")))
    return failure();
  if (inputType.getElementType() != resultType.getElementType())
    return op->emitOpError()
           << "result element type " << resultType.getElementType()
           << " differs from the input's " << inputType.getElementType();
  return success();
}

/// The shapes of `inputs` (ranked tensors).
std::vector<std::vector<int64_t>> operandShapes(ValueRange inputs) {
  std::vector<std::vector<int64_t>> shapes;
  for (Value input : inputs)
    shapes.push_back(
        toVector(cast<RankedTensorType>(input.getType()).getShape()));
  return shapes;
}

/// The checks einsum and fused share before their signature check: every
/// operand and the result static, every operand of the result's element
/// type. On success `shapes` holds the operands' shapes.
LogicalResult verifyStaticOperands(Operation *op, ValueRange inputs,
                                   RankedTensorType result,
                                   std::vector<std::vector<int64_t>> &shapes,
                                   bool sameElementType = true) {
  for (auto [i, input] : llvm::enumerate(inputs))
    if (failed(requireStatic(op, input.getType(), "operand " + Twine(i))))
      return failure();
  if (failed(requireStatic(op, result, "result")))
    return failure();
  Type resultElement = result.getElementType();
  for (auto [i, input] : llvm::enumerate(inputs)) {
    if (!sameElementType)
      break;
    Type element = cast<RankedTensorType>(input.getType()).getElementType();
    if (element != resultElement)
      return op->emitOpError() << "operand " << i << " has element type "
                               << element << " but the result has "
                               << resultElement;
  }
  shapes = operandShapes(inputs);
  return success();
}

} // namespace mlir::doppler::detail

using namespace mlir::doppler::detail;

//===----------------------------------------------------------------------===//
// EinsumOp
//===----------------------------------------------------------------------===//

LogicalResult EinsumOp::verify() {
  std::string error;
  std::optional<::doppler::EinsumSpec> spec =
      ::doppler::EinsumSpec::parse(getSpec().str(), &error);
  if (!spec)
    return emitOpError() << "invalid spec: " << error;

  // A conversion: an identity einsum changing the element type.
  Type resultElement = getType().getElementType();
  bool converts = false;
  for (auto [i, input] : llvm::enumerate(getInputs())) {
    Type element = cast<RankedTensorType>(input.getType()).getElementType();
    if (element == resultElement)
      continue;
    if (getJoin() != JoinKind::Identity || getInputs().size() != 1 ||
        !spec->isIdentity())
      return emitOpError()
             << "operand " << i << " has element type " << element
             << " but the result has " << resultElement
             << " (only a conversion, the identity join over one operand "
                "whose term is the output's, changes the element type)";
    converts = true;
  }
  std::vector<std::vector<int64_t>> shapes;
  if (failed(verifyStaticOperands(*this, getInputs(), getOutput().getType(),
                                  shapes, /*sameElementType=*/!converts)))
    return failure();
  std::optional<double> scalar;
  if (getScalar())
    scalar = getScalar()->convertToDouble();
  std::optional<::doppler::AggKind> aggregation;
  if (getAggregation())
    aggregation = toSupport(*getAggregation());
  std::optional<::doppler::EinsumSignature> signature =
      ::doppler::checkEinsumSignature(*spec, toSupport(getJoin()), scalar,
                                      aggregation, shapes, &error);
  if (!signature)
    return emitOpError() << error;

  const std::vector<int64_t> &expected = signature->outputShape;
  ArrayRef<int64_t> actual = getOutput().getType().getShape();
  if (ArrayRef<int64_t>(expected) != actual)
    return emitOpError() << "result shape " << shapeString(actual)
                         << " differs from " << shapeString(expected)
                         << ", the shape spec '" << getSpec()
                         << "' implies";
  return success();
}

::doppler::EinsumSpec EinsumOp::getParsedSpec() {
  return *::doppler::EinsumSpec::parse(getSpec().str());
}

::doppler::IndexSizes EinsumOp::getIndexSizes() {
  return *::doppler::inferIndexSizes(getParsedSpec(),
                                     operandShapes(getInputs()));
}

OpFoldResult EinsumOp::fold(FoldAdaptor) {
  // "abc->abc" with the identity join copies its input.
  if (getJoin() == JoinKind::Identity && !getAggregation() &&
      getInputs().size() == 1 && getInputs()[0].getType() == getType()) {
    std::optional<::doppler::EinsumSpec> spec =
        ::doppler::EinsumSpec::parse(getSpec().str());
    if (spec && spec->isIdentity())
      return getInputs()[0];
  }
  return {};
}

double EinsumOp::getFlops() {
  ::doppler::EinsumWork work = ::doppler::estimateEinsumWork(
      getParsedSpec(), getIndexSizes(), toSupport(getJoin()),
      getAggregation().has_value(), elementBytes(getType()));
  return work.flops;
}

double EinsumOp::getBytesRead() {
  double bytes = 0;
  for (Value input : getInputs())
    bytes += tensorBytes(input.getType());
  return bytes;
}

double EinsumOp::getBytesWritten() { return tensorBytes(getType()); }

//===----------------------------------------------------------------------===//
// FusedOp
//===----------------------------------------------------------------------===//

LogicalResult FusedOp::verify() {
  std::string error;
  std::optional<::doppler::EinsumSpec> spec =
      ::doppler::EinsumSpec::parse(getSpec().str(), &error);
  if (!spec)
    return emitOpError() << "invalid spec: " << error;

  std::vector<std::vector<int64_t>> shapes;
  if (failed(verifyStaticOperands(*this, getInputs(), getOutput().getType(),
                                  shapes)))
    return failure();
  std::optional<::doppler::EinsumSignature> signature =
      ::doppler::checkFusedSignature(*spec, getProgram(), shapes,
                                     /*program=*/nullptr, &error);
  if (!signature)
    return emitOpError() << error;

  const std::vector<int64_t> &expected = signature->outputShape;
  ArrayRef<int64_t> actual = getOutput().getType().getShape();
  if (ArrayRef<int64_t>(expected) != actual)
    return emitOpError() << "result shape " << shapeString(actual)
                         << " differs from " << shapeString(expected)
                         << ", the shape spec '" << getSpec() << "' implies";
  return success();
}

::doppler::EinsumSpec FusedOp::getParsedSpec() {
  return *::doppler::EinsumSpec::parse(getSpec().str());
}

::doppler::IndexSizes FusedOp::getIndexSizes() {
  return *::doppler::inferIndexSizes(getParsedSpec(),
                                     operandShapes(getInputs()));
}

::doppler::JoinProgram FusedOp::getParsedProgram() {
  return *::doppler::JoinProgram::parse(getProgram(), getInputs().size());
}

double FusedOp::getFlops() {
  return ::doppler::estimateFusedWork(getParsedSpec(), getIndexSizes(),
                                      getParsedProgram(),
                                      elementBytes(getType()))
      .flops;
}

double FusedOp::getBytesRead() {
  double bytes = 0;
  for (Value input : getInputs())
    bytes += tensorBytes(input.getType());
  return bytes;
}

double FusedOp::getBytesWritten() { return tensorBytes(getType()); }

//===----------------------------------------------------------------------===//
// SliceOp
//===----------------------------------------------------------------------===//

LogicalResult SliceOp::verify() {
  auto inputType = cast<RankedTensorType>(getInput().getType());
  auto resultType = cast<RankedTensorType>(getResult().getType());
  if (failed(requireStaticOfOneElementType(*this, inputType, resultType)))
    return failure();
  if (inputType.getRank() != resultType.getRank())
    return emitOpError() << "result rank " << resultType.getRank()
                         << " differs from the input rank "
                         << inputType.getRank();
  ArrayRef<int64_t> offsets = getOffsets();
  if (static_cast<int64_t>(offsets.size()) != inputType.getRank())
    return emitOpError() << "has " << offsets.size()
                         << " offsets for an input of rank "
                         << inputType.getRank();
  for (int64_t d = 0; d < inputType.getRank(); ++d) {
    int64_t offset = offsets[d], size = resultType.getDimSize(d),
            extent = inputType.getDimSize(d);
    if (offset < 0 || offset > extent || size > extent - offset)
      return emitOpError() << "block [" << offset << ", " << offset << " + "
                           << size << ") exceeds extent " << extent
                           << " of dimension " << d;
  }
  return success();
}

OpFoldResult SliceOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType() &&
      llvm::all_of(getOffsets(), [](int64_t o) { return o == 0; }))
    return getInput();
  // A slice that takes exactly one block of an assemble is that block.
  if (auto assemble = getInput().getDefiningOp<AssembleOp>()) {
    for (auto [i, block] : llvm::enumerate(assemble.getBlocks()))
      if (block.getType() == getType() &&
          ArrayRef<int64_t>(assemble.getBlockOffsets(i)) == getOffsets())
        return block;
  }
  return {};
}

double SliceOp::getFlops() { return 0; }
double SliceOp::getBytesRead() { return tensorBytes(getType()); }
double SliceOp::getBytesWritten() { return tensorBytes(getType()); }

//===----------------------------------------------------------------------===//
// AssembleOp
//===----------------------------------------------------------------------===//

LogicalResult AssembleOp::verify() {
  auto resultType = cast<RankedTensorType>(getResult().getType());
  if (failed(requireStatic(*this, resultType, "result")))
    return failure();
  ArrayRef<int64_t> grid = getGrid();
  int64_t rank = resultType.getRank();
  if (static_cast<int64_t>(grid.size()) != rank)
    return emitOpError() << "grid has " << grid.size()
                         << " dimension(s) but the result has rank " << rank;
  int64_t blockCount = 1;
  for (int64_t g : grid) {
    if (g < 1)
      return emitOpError() << "grid entries must be >= 1, got " << g;
    blockCount *= g;
  }
  if (blockCount != static_cast<int64_t>(getBlocks().size()))
    return emitOpError() << "grid [" << llvm::make_range(grid.begin(), grid.end())
                         << "] holds " << blockCount << " block(s) but "
                         << getBlocks().size() << " were given";

  // extents[d][g]: extent along dimension d of the blocks at grid
  // coordinate g of that dimension; all such blocks must agree.
  SmallVector<SmallVector<int64_t>> extents(rank);
  for (int64_t d = 0; d < rank; ++d)
    extents[d].assign(grid[d], -1);
  for (auto [index, block] : llvm::enumerate(getBlocks())) {
    auto blockType = cast<RankedTensorType>(block.getType());
    if (failed(requireStatic(*this, blockType, "block " + Twine(index))))
      return failure();
    if (blockType.getElementType() != resultType.getElementType())
      return emitOpError() << "block " << index << " has element type "
                           << blockType.getElementType()
                           << " but the result has "
                           << resultType.getElementType();
    if (blockType.getRank() != rank)
      return emitOpError() << "block " << index << " has rank "
                           << blockType.getRank() << " but the result has rank "
                           << rank;
    int64_t rest = index;
    for (int64_t d = rank - 1; d >= 0; --d) {
      int64_t coord = rest % grid[d];
      rest /= grid[d];
      int64_t &extent = extents[d][coord];
      if (extent >= 0 && extent != blockType.getDimSize(d))
        return emitOpError()
               << "block " << index << " has extent " << blockType.getDimSize(d)
               << " along dimension " << d << " but other blocks at grid index "
               << coord << " of that dimension have " << extent;
      extent = blockType.getDimSize(d);
    }
  }
  for (int64_t d = 0; d < rank; ++d) {
    int64_t total = 0;
    for (int64_t extent : extents[d])
      total += extent;
    if (total != resultType.getDimSize(d))
      return emitOpError() << "blocks add up to " << total
                           << " along dimension " << d << " but the result has "
                           << resultType.getDimSize(d);
  }
  return success();
}

SmallVector<int64_t> AssembleOp::getBlockOffsets(unsigned index) {
  ArrayRef<int64_t> grid = getGrid();
  int64_t rank = grid.size();
  // Row-major coordinates of `index`, then the sum of the extents of the
  // blocks before it along each dimension (read off the first grid line).
  SmallVector<int64_t> coords(rank);
  int64_t rest = index;
  for (int64_t d = rank - 1; d >= 0; --d) {
    coords[d] = rest % grid[d];
    rest /= grid[d];
  }
  SmallVector<int64_t> offsets(rank, 0);
  for (int64_t d = 0; d < rank; ++d) {
    int64_t stride = 1;
    for (int64_t e = d + 1; e < rank; ++e)
      stride *= grid[e];
    for (int64_t c = 0; c < coords[d]; ++c)
      offsets[d] +=
          cast<RankedTensorType>(getBlocks()[c * stride].getType()).getDimSize(d);
  }
  return offsets;
}

OpFoldResult AssembleOp::fold(FoldAdaptor) {
  if (getBlocks().size() == 1 && getBlocks()[0].getType() == getType())
    return getBlocks()[0];
  // Re-assembling exactly the tiles sliced from one tensor gives it back.
  Value source;
  for (auto [i, block] : llvm::enumerate(getBlocks())) {
    auto slice = block.getDefiningOp<SliceOp>();
    if (!slice || (source && slice.getInput() != source) ||
        slice.getInput().getType() != getType() ||
        slice.getOffsets() != ArrayRef<int64_t>(getBlockOffsets(i)))
      return {};
    source = slice.getInput();
  }
  return source;
}

double AssembleOp::getFlops() { return 0; }
double AssembleOp::getBytesRead() { return tensorBytes(getType()); }
double AssembleOp::getBytesWritten() { return tensorBytes(getType()); }

//===----------------------------------------------------------------------===//
// ReshapeOp
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  auto inputType = cast<RankedTensorType>(getInput().getType());
  auto resultType = cast<RankedTensorType>(getResult().getType());
  if (failed(requireStaticOfOneElementType(*this, inputType, resultType)))
    return failure();
  // requireStatic checked that both counts fit in int64_t.
  if (inputType.getNumElements() != resultType.getNumElements())
    return emitOpError() << "result " << resultType << " has "
                         << resultType.getNumElements()
                         << " elements but the input " << inputType << " has "
                         << inputType.getNumElements()
                         << "; a reshape keeps the element count";
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  // A reshape of a reshape reads the first one's input.
  if (auto inner = getInput().getDefiningOp<ReshapeOp>()) {
    getInputMutable().assign(inner.getInput());
    return getResult();
  }
  return {};
}

double ReshapeOp::getFlops() { return 0; }
double ReshapeOp::getBytesRead() { return tensorBytes(getType()); }
double ReshapeOp::getBytesWritten() { return tensorBytes(getType()); }

//===----------------------------------------------------------------------===//
// FillOp
//===----------------------------------------------------------------------===//

LogicalResult FillOp::verify() {
  if (failed(requireStatic(*this, getType(), "result")))
    return failure();
  if (std::isnan(getValue().convertToDouble()))
    return emitOpError() << "fill value must not be NaN";
  return success();
}

double FillOp::getFlops() { return 0; }
double FillOp::getBytesRead() { return 0; }
double FillOp::getBytesWritten() { return tensorBytes(getType()); }

//===----------------------------------------------------------------------===//
// TransferOp
//===----------------------------------------------------------------------===//

OpFoldResult TransferOp::fold(FoldAdaptor) {
  if (getSource() == getTarget())
    return getInput();
  return {};
}

double TransferOp::getFlops() { return 0; }
double TransferOp::getBytesRead() { return tensorBytes(getType()); }
double TransferOp::getBytesWritten() { return tensorBytes(getType()); }

//===----------------------------------------------------------------------===//
// EvictOp and ReloadOp
//===----------------------------------------------------------------------===//

/// A `doppler.device` on an offload op must name the device it copies on.
static LogicalResult checkOwnDevice(Operation *op, DeviceAttr expected,
                                    StringRef role) {
  auto own = op->getAttrOfType<DeviceAttr>(kDeviceAttr);
  if (own && own.getId() != expected.getId())
    return op->emitOpError()
           << "is placed on device " << own.getId() << " but its " << role
           << " is device " << expected.getId();
  return success();
}

LogicalResult EvictOp::verify() {
  if (Operation *producer = getInput().getDefiningOp())
    if (auto device = producer->getAttrOfType<DeviceAttr>(kDeviceAttr);
        device && device.getId() != getSource().getId())
      return emitOpError() << "evicts from device " << getSource().getId()
                           << " a value produced on device " << device.getId();
  if (failed(checkOwnDevice(*this, getSource(), "source")))
    return failure();
  for (Operation *user : getResult().getUsers())
    if (!isa<ReloadOp>(user))
      return emitOpError()
             << "result is a host value that only doppler.reload may read, "
                "but '"
             << user->getName() << "' reads it";
  return success();
}

double EvictOp::getFlops() { return 0; }
double EvictOp::getBytesRead() { return tensorBytes(getType()); }
double EvictOp::getBytesWritten() { return tensorBytes(getType()); }

LogicalResult ReloadOp::verify() {
  if (!getStash().getDefiningOp<EvictOp>())
    return emitOpError() << "reloads a value that is not a doppler.evict "
                            "result (not a host value)";
  return checkOwnDevice(*this, getTarget(), "target");
}

double ReloadOp::getFlops() { return 0; }
double ReloadOp::getBytesRead() { return tensorBytes(getType()); }
double ReloadOp::getBytesWritten() { return tensorBytes(getType()); }

//===----------------------------------------------------------------------===//
// TaskOp
//===----------------------------------------------------------------------===//

LogicalResult TaskOp::verify() {
  for (auto [name, value] : {std::pair<StringRef, APFloat>{"compute", getCompute()},
                             {"transfer", getTransfer()}}) {
    double v = value.convertToDouble();
    if (!(v >= 0) || std::isinf(v))
      return emitOpError() << name << " cost must be finite and non-negative, got "
                           << v;
  }
  return success();
}

// Cost-only ops carry their costs explicitly; they report no work.
double TaskOp::getFlops() { return 0; }
double TaskOp::getBytesRead() { return 0; }
double TaskOp::getBytesWritten() { return 0; }
