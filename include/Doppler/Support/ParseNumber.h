//===- ParseNumber.h - Whole-string numbers from option values --*- C++ -*-===//
//
// strtoll/strtod with the checks every option parser repeats: the whole text
// is the number, no overflow (ERANGE), and for doubles a finite value. Like
// strtoll/strtod, leading whitespace and a sign are accepted; callers that
// refuse them check first.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_SUPPORT_PARSENUMBER_H
#define DOPPLER_SUPPORT_PARSENUMBER_H

#include <cstdint>
#include <optional>
#include <string>

namespace doppler {

/// A decimal integer that fills `text` and fits int64_t.
std::optional<int64_t> parseInt64(const std::string &text);

/// A finite double that fills `text` (no overflow or underflow).
std::optional<double> parseFiniteDouble(const std::string &text);

} // namespace doppler

#endif // DOPPLER_SUPPORT_PARSENUMBER_H
