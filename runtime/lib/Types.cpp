//===- Types.cpp - Element types and shapes -------------------------------===//

#include "doppler/runtime/Types.h"

#include <cstring>

namespace doppler::runtime {

unsigned elementSize(ElementType type) {
  switch (type) {
  case ElementType::F32:
    return 4;
  case ElementType::F64:
    return 8;
  case ElementType::F16:
    return 2;
  case ElementType::I32:
    return 4;
  case ElementType::I64:
    return 8;
  }
  return 4;
}

std::string_view elementTypeName(ElementType type) {
  switch (type) {
  case ElementType::F32:
    return "f32";
  case ElementType::F64:
    return "f64";
  case ElementType::F16:
    return "f16";
  case ElementType::I32:
    return "i32";
  case ElementType::I64:
    return "i64";
  }
  return "?";
}

std::optional<ElementType> parseElementType(std::string_view name) {
  for (ElementType type :
       {ElementType::F32, ElementType::F64, ElementType::F16, ElementType::I32,
        ElementType::I64})
    if (elementTypeName(type) == name)
      return type;
  return std::nullopt;
}

int64_t numElements(const Shape &shape) {
  int64_t count = 1;
  for (int64_t extent : shape)
    count *= extent;
  return count;
}

uint64_t byteSize(const Shape &shape, ElementType type) {
  return static_cast<uint64_t>(numElements(shape)) * elementSize(type);
}

std::vector<int64_t> rowMajorStrides(const Shape &shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = stride;
    stride *= shape[d];
  }
  return strides;
}

std::string shapeToString(const Shape &shape) {
  std::string text = "[";
  for (size_t d = 0; d < shape.size(); ++d) {
    if (d)
      text += ", ";
    text += std::to_string(shape[d]);
  }
  return text + "]";
}

uint16_t floatToHalf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  uint32_t sign = (bits >> 16) & 0x8000u;
  uint32_t exponent = (bits >> 23) & 0xffu;
  uint32_t mantissa = bits & 0x7fffffu;
  if (exponent == 0xff) // Inf or NaN (keep NaNs quiet and non-zero).
    return static_cast<uint16_t>(sign | 0x7c00u | (mantissa ? 0x200u : 0));
  int32_t halfExponent = static_cast<int32_t>(exponent) - 127 + 15;
  if (halfExponent >= 31) // Overflow to infinity.
    return static_cast<uint16_t>(sign | 0x7c00u);
  if (halfExponent <= 0) {
    // Subnormal half (or zero): shift the implicit-one mantissa into place
    // and round to nearest even.
    if (halfExponent < -10)
      return static_cast<uint16_t>(sign);
    uint32_t full = mantissa | 0x800000u;
    uint32_t shift = static_cast<uint32_t>(14 - halfExponent);
    uint32_t half = full >> shift;
    uint32_t remainder = full & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (remainder > halfway || (remainder == halfway && (half & 1)))
      ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half =
      (static_cast<uint32_t>(halfExponent) << 10) | (mantissa >> 13);
  uint32_t remainder = mantissa & 0x1fffu;
  // Round to nearest even; a carry into the exponent is still correct.
  if (remainder > 0x1000u || (remainder == 0x1000u && (half & 1)))
    ++half;
  return static_cast<uint16_t>(sign | half);
}

float halfToFloat(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  uint32_t exponent = (bits >> 10) & 0x1fu;
  uint32_t mantissa = bits & 0x3ffu;
  uint32_t result;
  if (exponent == 0) {
    if (mantissa == 0) {
      result = sign;
    } else { // Subnormal: normalise.
      int32_t shift = 0;
      while (!(mantissa & 0x400u)) {
        mantissa <<= 1;
        ++shift;
      }
      mantissa &= 0x3ffu;
      result = sign | (static_cast<uint32_t>(127 - 15 + 1 - shift) << 23) |
               (mantissa << 13);
    }
  } else if (exponent == 31) {
    result = sign | 0x7f800000u | (mantissa << 13);
  } else {
    result = sign | ((exponent - 15 + 127) << 23) | (mantissa << 13);
  }
  float value;
  std::memcpy(&value, &result, sizeof(value));
  return value;
}

} // namespace doppler::runtime
