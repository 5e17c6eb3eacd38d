//===- Types.h - Element types and shapes -----------------------*- C++ -*-===//
//
// Buffers are dense, row-major tensors of one element type.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_RUNTIME_TYPES_H
#define DOPPLER_RUNTIME_TYPES_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace doppler::runtime {

/// Element types a buffer may hold. F16 is IEEE binary16 (storage only on
/// the CPU backend: fill, slice, assemble and transfer, but no einsum).
/// I32 and I64 are signed integers: gather indices (and gathered tables),
/// moved by slice, assemble, reshape, transfer, evict and reload; no
/// arithmetic task (einsum, fused, conv, pool, fill) takes them.
enum class ElementType : uint8_t { F32, F64, F16, I32, I64 };

/// Whether `type` is I32 or I64.
inline bool isIntegerType(ElementType type) {
  return type == ElementType::I32 || type == ElementType::I64;
}

unsigned elementSize(ElementType type);
std::string_view elementTypeName(ElementType type);
std::optional<ElementType> parseElementType(std::string_view name);

/// Extents, outermost first. The empty shape is a scalar (one element).
using Shape = std::vector<int64_t>;

/// Product of the extents (1 for a scalar).
int64_t numElements(const Shape &shape);
/// Bytes of a dense tensor of this shape and type.
uint64_t byteSize(const Shape &shape, ElementType type);
/// Row-major strides in elements.
std::vector<int64_t> rowMajorStrides(const Shape &shape);
/// "[2, 3, 4]".
std::string shapeToString(const Shape &shape);

/// IEEE binary16 conversions (round to nearest even), for f16 fills and
/// tests.
uint16_t floatToHalf(float value);
float halfToFloat(uint16_t bits);

} // namespace doppler::runtime

#endif // DOPPLER_RUNTIME_TYPES_H
