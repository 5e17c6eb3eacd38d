//===- CheckedSize.cpp - Element counts and byte sizes that cannot overflow ===//

#include "Doppler/Support/CheckedSize.h"

#include <cstdio>

namespace doppler {
namespace {

std::string approximate(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.3g", value);
  return buffer;
}

} // namespace

std::string checkedSizeLimitText() {
  return "2^62 (" + approximate(static_cast<double>(kMaxCheckedSize)) + ")";
}

std::optional<int64_t> checkedElementCount(const int64_t *extents,
                                           size_t rank) {
  // Negative extents are refused first, so a zero extent elsewhere cannot
  // hide one; then the product is checked before every multiplication.
  for (size_t d = 0; d < rank; ++d)
    if (extents[d] < 0)
      return std::nullopt;
  int64_t count = 1;
  for (size_t d = 0; d < rank; ++d) {
    if (extents[d] == 0)
      return 0;
  }
  for (size_t d = 0; d < rank; ++d) {
    if (extents[d] > kMaxCheckedSize / count)
      return std::nullopt;
    count *= extents[d];
  }
  return count;
}

double approximateElementCount(const int64_t *extents, size_t rank) {
  double count = 1;
  for (size_t d = 0; d < rank; ++d)
    count *= static_cast<double>(extents[d]);
  return count;
}

std::optional<int64_t> checkedByteSize(int64_t count, int64_t elementBytes) {
  if (count < 0 || elementBytes < 0)
    return std::nullopt;
  if (count == 0 || elementBytes == 0)
    return 0;
  if (count > kMaxCheckedSize / elementBytes)
    return std::nullopt;
  return count * elementBytes;
}

std::optional<int64_t> checkedByteSize(const int64_t *extents, size_t rank,
                                       int64_t elementBytes) {
  std::optional<int64_t> count = checkedElementCount(extents, rank);
  if (!count)
    return std::nullopt;
  return checkedByteSize(*count, elementBytes);
}

std::string checkedSizeProblem(const int64_t *extents, size_t rank,
                               int64_t elementBytes) {
  for (size_t d = 0; d < rank; ++d)
    if (extents[d] < 0)
      return "has a negative extent (" + std::to_string(extents[d]) + ")";
  std::optional<int64_t> count = checkedElementCount(extents, rank);
  double elements = approximateElementCount(extents, rank);
  if (!count)
    return "has " + approximate(elements) + " elements, more than the limit of " +
           checkedSizeLimitText();
  if (!checkedByteSize(*count, elementBytes))
    return "takes " + approximate(elements * static_cast<double>(elementBytes)) +
           " bytes, more than the limit of " + checkedSizeLimitText();
  return "";
}

} // namespace doppler
