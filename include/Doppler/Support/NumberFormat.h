//===- NumberFormat.h - Numbers as text in reports and errors ---*- C++ -*-===//
//
// The three ways Doppler prints a double, each written once:
//   formatShortest     the shortest text that reads back as the value
//                      (error messages: "-1", "0.5", "nan", "inf");
//   formatSignificant  printf's %.*g with `digits` significant digits, NaN
//                      always as "nan" (checksums, errors of outputs);
//   formatIntegral     integral values as integers, others with 17
//                      significant digits (makespans of integer costs).
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_SUPPORT_NUMBERFORMAT_H
#define DOPPLER_SUPPORT_NUMBERFORMAT_H

#include <string>

namespace doppler {

/// Shortest text that reads back as exactly `value`.
std::string formatShortest(double value);

/// `digits` significant digits (%.*g); NaN prints as "nan" whatever its
/// sign bit.
std::string formatSignificant(double value, int digits = 9);

/// An integral value below 2^53 in magnitude as an integer ("68719476736"),
/// anything else as %.17g.
std::string formatIntegral(double value);

} // namespace doppler

#endif // DOPPLER_SUPPORT_NUMBERFORMAT_H
