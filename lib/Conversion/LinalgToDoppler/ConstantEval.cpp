//===- ConstantEval.cpp - Evaluating linalg/tensor ops on constants -------===//
//
// Reading constant tensors, the scalar evaluator of linalg bodies, and
// making the constant op of a result. Evaluating whole ops is in
// ConstantFolding.cpp.
//
//===----------------------------------------------------------------------===//

#include "ConstantEval.h"
#include "Builders.h"

#include "Doppler/Dialect/DopplerOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/APFloat.h"

using namespace mlir;
using namespace mlir::doppler;
using namespace mlir::doppler::linalg_to_doppler;

bool ConstTensor::isSplat() const {
  if (isFloat()) {
    for (double v : floats)
      if (!(v == floats[0] || (std::isnan(v) && std::isnan(floats[0]))) ||
          std::signbit(v) != std::signbit(floats[0]))
        return false;
    return true;
  }
  for (int64_t v : ints)
    if (v != ints[0])
      return false;
  return true;
}

double linalg_to_doppler::roundTo(Type type, double value) {
  auto floatType = dyn_cast<FloatType>(type);
  if (!floatType || floatType.isF64())
    return value;
  if (floatType.isF32())
    return static_cast<double>(static_cast<float>(value));
  APFloat converted(value);
  bool losesInfo = false;
  converted.convert(floatType.getFloatSemantics(),
                    APFloat::rmNearestTiesToEven, &losesInfo);
  converted.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven,
                    &losesInfo);
  return converted.convertToDouble();
}

static unsigned widthOf(Type type) {
  if (isa<IndexType>(type))
    return 64;
  return type.getIntOrFloatBitWidth();
}

int64_t linalg_to_doppler::wrapTo(Type type, int64_t value) {
  unsigned width = widthOf(type);
  if (width >= 64)
    return value;
  uint64_t bits = static_cast<uint64_t>(value) << (64 - width);
  return static_cast<int64_t>(bits) >> (64 - width);
}

namespace {

ConstTensor splat(RankedTensorType type, double f, int64_t i) {
  ConstTensor t;
  t.type = type;
  if (t.isFloat())
    t.floats.assign(type.getNumElements(), roundTo(type.getElementType(), f));
  else
    t.ints.assign(type.getNumElements(), wrapTo(type.getElementType(), i));
  return t;
}

template <typename AttrT, typename T>
bool readResource(ElementsAttr attr, ConstTensor &t) {
  auto resource = dyn_cast<AttrT>(attr);
  if (!resource)
    return false;
  std::optional<ArrayRef<T>> values = resource.tryGetAsArrayRef();
  if (!values || static_cast<int64_t>(values->size()) != t.size())
    return false;
  for (int64_t i = 0, e = t.size(); i < e; ++i) {
    if (t.isFloat())
      t.floats[i] = static_cast<double>((*values)[i]);
    else
      t.ints[i] = wrapTo(t.type.getElementType(),
                         static_cast<int64_t>((*values)[i]));
  }
  return true;
}

std::optional<ConstTensor> readElements(ElementsAttr attr,
                                        RankedTensorType type,
                                        int64_t maxElements) {
  Type element = type.getElementType();
  if (!type.hasStaticShape() || (!isa<FloatType>(element) &&
                                 !element.isSignlessIntOrIndex()))
    return std::nullopt;
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    if (dense.isSplat()) {
      if (isa<FloatType>(element))
        return splat(type, dense.getSplatValue<APFloat>().convertToDouble(),
                     0);
      return splat(type, 0, dense.getSplatValue<APInt>().getSExtValue());
    }
    if (type.getNumElements() > maxElements)
      return std::nullopt;
    ConstTensor t = zeroTensor(type);
    int64_t i = 0;
    if (isa<FloatType>(element)) {
      for (APFloat value : dense.getValues<APFloat>()) {
        bool losesInfo = false;
        value.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven,
                      &losesInfo);
        t.floats[i++] = value.convertToDouble();
      }
    } else {
      for (const APInt &value : dense.getValues<APInt>())
        t.ints[i++] = value.getBitWidth() == 1 ? -int64_t(value.getZExtValue())
                                               : value.getSExtValue();
    }
    return t;
  }
  if (type.getNumElements() > maxElements)
    return std::nullopt;
  ConstTensor t = zeroTensor(type);
  if (readResource<DenseF32ResourceElementsAttr, float>(attr, t) ||
      readResource<DenseF64ResourceElementsAttr, double>(attr, t) ||
      readResource<DenseI64ResourceElementsAttr, int64_t>(attr, t) ||
      readResource<DenseI32ResourceElementsAttr, int32_t>(attr, t) ||
      readResource<DenseBoolResourceElementsAttr, bool>(attr, t))
    return t;
  return std::nullopt;
}

/// The integer value of a scalar constant (arith.constant of an integer or
/// index).
std::optional<int64_t> intConstant(Value value) {
  IntegerAttr attr;
  if (value && matchPattern(value, m_Constant(&attr)))
    return wrapTo(value.getType(), attr.getValue().getSExtValue());
  return std::nullopt;
}

} // namespace

ConstTensor linalg_to_doppler::zeroTensor(RankedTensorType type) {
  ConstTensor t;
  t.type = type;
  if (t.isFloat())
    t.floats.assign(type.getNumElements(), 0.0);
  else
    t.ints.assign(type.getNumElements(), 0);
  return t;
}

bool linalg_to_doppler::isConstantTensor(Value value) {
  Operation *op = value ? value.getDefiningOp() : nullptr;
  if (!op || !isa<RankedTensorType>(value.getType()))
    return false;
  if (auto constant = dyn_cast<arith::ConstantOp>(op))
    return isa<ElementsAttr>(constant.getValue());
  if (isa<FillOp>(op))
    return true;
  if (auto fill = dyn_cast<linalg::FillOp>(op))
    return fill.getInputs().size() == 1 &&
           (scalarConstant(fill.getInputs()[0]) ||
            intConstant(fill.getInputs()[0]));
  return false;
}

std::optional<ConstTensor> linalg_to_doppler::readConstant(Value value,
                                                           int64_t maxElements) {
  if (!isConstantTensor(value))
    return std::nullopt;
  auto type = cast<RankedTensorType>(value.getType());
  if (!type.hasStaticShape())
    return std::nullopt;
  Operation *op = value.getDefiningOp();
  if (auto constant = dyn_cast<arith::ConstantOp>(op))
    return readElements(cast<ElementsAttr>(constant.getValue()), type,
                        maxElements);
  if (auto fill = dyn_cast<FillOp>(op))
    return splat(type, fill.getValue().convertToDouble(), 0);
  Value scalar = cast<linalg::FillOp>(op).getInputs()[0];
  if (isa<FloatType>(type.getElementType())) {
    if (std::optional<double> f = scalarConstant(scalar))
      return splat(type, *f, 0);
    return std::nullopt;
  }
  if (std::optional<int64_t> i = intConstant(scalar))
    return splat(type, 0, *i);
  return std::nullopt;
}

Value linalg_to_doppler::materialize(OpBuilder &builder, Location loc,
                                     const ConstTensor &tensor) {
  RankedTensorType type = tensor.type;
  Type element = type.getElementType();
  bool splatValue = tensor.size() > 0 && tensor.isSplat();
  if (tensor.isFloat() && splatValue)
    return FillOp::create(builder, loc, type,
                          builder.getF64FloatAttr(tensor.floats[0]))
        .getResult();
  int64_t count = splatValue ? 1 : tensor.size();
  DenseElementsAttr attr;
  if (auto floatType = dyn_cast<FloatType>(element)) {
    SmallVector<APFloat> values;
    values.reserve(count);
    for (int64_t i = 0; i < count; ++i) {
      APFloat value(tensor.floats[i]);
      bool losesInfo = false;
      value.convert(floatType.getFloatSemantics(),
                    APFloat::rmNearestTiesToEven, &losesInfo);
      values.push_back(value);
    }
    attr = DenseElementsAttr::get(type, values);
  } else {
    unsigned width = widthOf(element);
    SmallVector<APInt> values;
    values.reserve(count);
    for (int64_t i = 0; i < count; ++i)
      values.push_back(width == 1
                           ? APInt(1, tensor.ints[i] != 0 ? 1 : 0)
                           : APInt(width, static_cast<uint64_t>(tensor.ints[i]),
                                   /*isSigned=*/true));
    attr = DenseElementsAttr::get(type, values);
  }
  return arith::ConstantOp::create(builder, loc, attr).getResult();
}
