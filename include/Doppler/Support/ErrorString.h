//===- ErrorString.h - Errors reported as strings ---------------*- C++ -*-===//
//
// Code shared by -fno-exceptions MLIR libraries and plain C++ reports
// failures as a one-line message through an optional `std::string *error`.
// This is the one helper that fills it.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_SUPPORT_ERRORSTRING_H
#define DOPPLER_SUPPORT_ERRORSTRING_H

#include <string>
#include <utility>

namespace doppler {

/// Stores `message` in `*error` when the caller asked for it.
inline void setError(std::string *error, std::string message) {
  if (error)
    *error = std::move(message);
}

} // namespace doppler

#endif // DOPPLER_SUPPORT_ERRORSTRING_H
