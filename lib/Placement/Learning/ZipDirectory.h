//===- ZipDirectory.h - The central directory of a model archive -*- C++ -*-===//
//
// Internal to the learning library: the model loader's checks of an
// archive's bytes before LibTorch reads them (ModelArchive.cpp's pickle
// lengths, ModelCode.cpp's code entry sizes) walk its zip central directory
// the same way.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_LIB_PLACEMENT_LEARNING_ZIPDIRECTORY_H
#define DOPPLER_LIB_PLACEMENT_LEARNING_ZIPDIRECTORY_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace doppler::placement::learning {

/// The little-endian unsigned integer of `bytes` bytes at `p`.
inline uint64_t readLittle(const unsigned char *p, int bytes) {
  uint64_t value = 0;
  for (int i = bytes - 1; i >= 0; --i)
    value = value << 8 | p[i];
  return value;
}

/// One central directory header: the entry's compression method, stored
/// and expanded sizes, local header offset and name.
struct ZipCentralEntry {
  uint64_t method = 0, stored = 0, expanded = 0, local = 0;
  std::string name;
};

/// Calls `visit` with every central directory header found anywhere in
/// the file, not only those the end record lists (LibTorch's reader takes
/// the zip64 end record when there is one, and a damaged plain one must
/// not hide an entry); headers whose name runs past the end are skipped.
/// Stops when `visit` returns false; returns whether it went to the end.
template <typename Visit>
bool forEachZipCentralEntry(const unsigned char *data, size_t size,
                            Visit &&visit) {
  constexpr uint32_t kCentralSignature = 0x02014b50;
  ZipCentralEntry entry;
  for (size_t at = 0; size >= 46 && at <= size - 46; ++at) {
    if (readLittle(data + at, 4) != kCentralSignature)
      continue;
    uint64_t nameLength = readLittle(data + at + 28, 2);
    if (size - at - 46 < nameLength)
      continue;
    entry.method = readLittle(data + at + 10, 2);
    entry.stored = readLittle(data + at + 20, 4);
    entry.expanded = readLittle(data + at + 24, 4);
    entry.local = readLittle(data + at + 42, 4);
    entry.name.assign(reinterpret_cast<const char *>(data + at + 46),
                      nameLength);
    if (!visit(static_cast<const ZipCentralEntry &>(entry)))
      return false;
  }
  return true;
}

} // namespace doppler::placement::learning

#endif // DOPPLER_LIB_PLACEMENT_LEARNING_ZIPDIRECTORY_H
