//===- CpuGather.cpp - The CPU gather kernel ------------------------------===//
//
// out[p, i, q] = table[p, indices[i], q]: one memcpy per (outer position,
// index) of the row table[p, indices[i], :]. Every index is checked before
// anything is written, so a bad one fails the task without a partial result
// and without reading outside the table. Indices are i32/i64, or f32/f64
// holding integral values (integers computed on float carriers): a float
// index that is not an integer (or NaN) fails as one out of range does.
//
//===----------------------------------------------------------------------===//

#include "doppler/runtime/CpuKernels.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

namespace doppler::runtime::cpu {

namespace {

/// The index at position i; only called once checkGatherIndices passed
/// (a float index is then integral and in range).
int64_t indexAt(const void *indices, ElementType type, int64_t i) {
  switch (type) {
  case ElementType::I32:
    return static_cast<const int32_t *>(indices)[i];
  case ElementType::F32:
    return static_cast<int64_t>(static_cast<const float *>(indices)[i]);
  case ElementType::F64:
    return static_cast<int64_t>(static_cast<const double *>(indices)[i]);
  default:
    return static_cast<const int64_t *>(indices)[i];
  }
}

bool isIndexType(ElementType type) {
  return type != ElementType::F16;
}

/// A float index's value, when it is not an integer in [0, extent): its
/// text for the error; empty if it is one.
std::string badFloatIndex(double value, int64_t extent) {
  if (value >= 0 && value < static_cast<double>(extent) &&
      std::floor(value) == value)
    return "";
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

} // namespace

Status checkGatherIndices(const void *indices, ElementType indexType,
                          int64_t indexCount, const Shape &tableShape,
                          int64_t axis) {
  const int64_t extent = tableShape[axis];
  for (int64_t i = 0; i < indexCount; ++i) {
    if (indexType == ElementType::F32 || indexType == ElementType::F64) {
      double value =
          indexType == ElementType::F32
              ? static_cast<double>(static_cast<const float *>(indices)[i])
              : static_cast<const double *>(indices)[i];
      std::string bad = badFloatIndex(value, extent);
      if (!bad.empty())
        return Status::failure(
            "gather: index " + bad + " at position " + std::to_string(i) +
            " of the indices is not an integer in [0, " +
            std::to_string(extent) + ") (axis " + std::to_string(axis) +
            " of the table " + shapeToString(tableShape) + ")");
      continue;
    }
    int64_t index = indexAt(indices, indexType, i);
    if (index < 0 || index >= extent)
      return Status::failure(
          "gather: index " + std::to_string(index) + " at position " +
          std::to_string(i) + " of the indices is outside [0, " +
          std::to_string(extent) + ") (axis " + std::to_string(axis) +
          " of the table " + shapeToString(tableShape) + ")");
  }
  return Status();
}

Status gather(const void *table, const Shape &tableShape, const void *indices,
              ElementType indexType, int64_t indexCount, int64_t axis,
              void *out, ElementType type) {
  if (!isIndexType(indexType))
    return Status::failure("gather: indices of element type " +
                           std::string(elementTypeName(indexType)) +
                           " (expected i32, i64, f32 or f64)");
  if (axis < 0 || axis >= static_cast<int64_t>(tableShape.size()))
    return Status::failure("gather: axis " + std::to_string(axis) +
                           " is outside the table " +
                           shapeToString(tableShape));
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= tableShape[d];
  for (size_t d = static_cast<size_t>(axis) + 1; d < tableShape.size(); ++d)
    inner *= tableShape[d];
  const int64_t extent = tableShape[axis];
  if (Status status = checkGatherIndices(indices, indexType, indexCount,
                                         tableShape, axis);
      !status)
    return status;
  const size_t rowBytes = static_cast<size_t>(inner) * elementSize(type);
  if (rowBytes == 0)
    return Status();
  const char *source = static_cast<const char *>(table);
  char *target = static_cast<char *>(out);
  for (int64_t p = 0; p < outer; ++p) {
    const char *slab = source + static_cast<size_t>(p * extent) * rowBytes;
    for (int64_t i = 0; i < indexCount; ++i) {
      int64_t index = indexAt(indices, indexType, i);
      std::memcpy(target, slab + static_cast<size_t>(index) * rowBytes,
                  rowBytes);
      target += rowBytes;
    }
  }
  return Status();
}

} // namespace doppler::runtime::cpu
