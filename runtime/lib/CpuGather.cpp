//===- CpuGather.cpp - The CPU gather kernel ------------------------------===//
//
// out[p, i, q] = table[p, indices[i], q]: one memcpy per (outer position,
// index) of the row table[p, indices[i], :]. Every index is checked before
// anything is written, so a bad one fails the task without a partial result
// and without reading outside the table.
//
//===----------------------------------------------------------------------===//

#include "doppler/runtime/CpuKernels.h"

#include <cstring>
#include <string>

namespace doppler::runtime::cpu {

namespace {

int64_t indexAt(const void *indices, ElementType type, int64_t i) {
  if (type == ElementType::I32)
    return static_cast<const int32_t *>(indices)[i];
  return static_cast<const int64_t *>(indices)[i];
}

} // namespace

Status checkGatherIndices(const void *indices, ElementType indexType,
                          int64_t indexCount, const Shape &tableShape,
                          int64_t axis) {
  const int64_t extent = tableShape[axis];
  for (int64_t i = 0; i < indexCount; ++i) {
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
  if (!isIntegerType(indexType))
    return Status::failure("gather: indices of element type " +
                           std::string(elementTypeName(indexType)) +
                           " (expected i32 or i64)");
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
