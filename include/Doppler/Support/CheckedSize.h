//===- CheckedSize.h - Element counts and byte sizes that cannot overflow -===//
//
// The one checked count every layer uses for a tensor's size: the verifier
// of the doppler ops, the einsum signature check (shared with the runtime),
// the cost model and the runtime's task graph and plan reader. A shape with a
// negative extent, or whose element count or byte size exceeds the cap below,
// is refused instead of wrapping around to a negative, zero or small size.
//
// The cap is 2^62 (4 EiB, about 4.6e18): far above any memory, far below
// int64_t's limit, so sums of a few capped sizes (an op's bytes read plus
// written) and products with a small factor stay exact in int64_t, and the
// same number bounds element counts, byte sizes and einsum iteration spaces.
// A size under the cap can still be too large to allocate: allocators report
// that separately (the runtime turns std::bad_alloc into an error).
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_SUPPORT_CHECKEDSIZE_H
#define DOPPLER_SUPPORT_CHECKEDSIZE_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace doppler {

/// The largest element count, byte size or iteration space accepted: 2^62.
constexpr int64_t kMaxCheckedSize = int64_t(1) << 62;

/// The cap in words, for error messages: "2^62 (4.6e18)".
std::string checkedSizeLimitText();

/// The product of `extents`, or nullopt when an extent is negative or the
/// product exceeds kMaxCheckedSize (a zero extent gives 0: an empty tensor).
std::optional<int64_t> checkedElementCount(const int64_t *extents,
                                           size_t rank);
inline std::optional<int64_t>
checkedElementCount(const std::vector<int64_t> &shape) {
  return checkedElementCount(shape.data(), shape.size());
}

/// The product of `extents` in doubles: never wraps, exact up to 2^53 and
/// within a rounding error beyond. For costs of shapes no verifier checked
/// (types of other dialects' ops); negative extents count as given.
double approximateElementCount(const int64_t *extents, size_t rank);

/// `count * elementBytes`, or nullopt when either is negative or the product
/// exceeds kMaxCheckedSize.
std::optional<int64_t> checkedByteSize(int64_t count, int64_t elementBytes);

/// The byte size of a tensor of `shape` with `elementBytes` per element, or
/// nullopt when its element count or byte size is out of range.
std::optional<int64_t> checkedByteSize(const int64_t *extents, size_t rank,
                                       int64_t elementBytes);
inline std::optional<int64_t>
checkedByteSize(const std::vector<int64_t> &shape, int64_t elementBytes) {
  return checkedByteSize(shape.data(), shape.size(), elementBytes);
}

/// Why `shape` (with `elementBytes` per element) is refused, for a message
/// that already names the tensor: "has 1.8e19 elements, more than the limit
/// of 2^62 (4.6e18)" or "takes 1.8e19 bytes, ...". Empty when it is accepted.
std::string checkedSizeProblem(const int64_t *extents, size_t rank,
                               int64_t elementBytes);
inline std::string checkedSizeProblem(const std::vector<int64_t> &shape,
                                      int64_t elementBytes) {
  return checkedSizeProblem(shape.data(), shape.size(), elementBytes);
}

} // namespace doppler

#endif // DOPPLER_SUPPORT_CHECKEDSIZE_H
