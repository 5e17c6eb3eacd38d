//===- NumberFormat.h - Numbers in error messages ---------------*- C++ -*-===//
//
// Internal to lib/Placement.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_LIB_PLACEMENT_NUMBERFORMAT_H
#define DOPPLER_LIB_PLACEMENT_NUMBERFORMAT_H

#include <charconv>
#include <string>

namespace doppler::placement::detail {

/// Shortest text that reads back as `value` ("-1", "0.5", "nan", "inf").
inline std::string formatNumber(double value) {
  char buffer[32];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, result.ptr);
}

} // namespace doppler::placement::detail

#endif // DOPPLER_LIB_PLACEMENT_NUMBERFORMAT_H
