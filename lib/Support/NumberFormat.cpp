//===- NumberFormat.cpp - Numbers as text in reports and errors -----------===//

#include "Doppler/Support/NumberFormat.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace doppler {

std::string formatShortest(double value) {
  char buffer[32];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, result.ptr);
}

std::string formatSignificant(double value, int digits) {
  if (std::isnan(value))
    return "nan";
  char buffer[40];
  std::snprintf(buffer, sizeof(buffer), "%.*g", digits, value);
  return buffer;
}

std::string formatIntegral(double value) {
  if (value == std::floor(value) && std::fabs(value) < 0x1.0p53) {
    char buffer[32];
    std::snprintf(buffer, sizeof(buffer), "%lld",
                  static_cast<long long>(value));
    return buffer;
  }
  char buffer[40];
  std::snprintf(buffer, sizeof(buffer), "%.17g", value);
  return buffer;
}

} // namespace doppler
