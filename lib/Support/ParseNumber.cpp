//===- ParseNumber.cpp - Whole-string numbers from option values ----------===//

#include "Doppler/Support/ParseNumber.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace doppler {

std::optional<int64_t> parseInt64(const std::string &text) {
  if (text.empty())
    return std::nullopt;
  char *end = nullptr;
  errno = 0;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (errno || *end != '\0')
    return std::nullopt;
  return static_cast<int64_t>(value);
}

std::optional<double> parseFiniteDouble(const std::string &text) {
  if (text.empty())
    return std::nullopt;
  char *end = nullptr;
  errno = 0;
  double value = std::strtod(text.c_str(), &end);
  if (errno || *end != '\0' || !std::isfinite(value))
    return std::nullopt;
  return value;
}

} // namespace doppler
