//===- CpuConvert.cpp - Element type conversions (conversion einsums) ----===//
//
// What an identity einsum whose result type differs from its input's
// computes (TaskGraph::addEinsum's `outputType`): each element converted.
// An integer becomes the float of the same value, or the task fails naming
// the first one the float type cannot hold exactly (|v| > 2^53 in f64,
// 2^24 in f32, odd values beyond), before anything is written; a float is
// rounded to the nearest value of the target type (f64 -> f32, as
// arith.truncf) or widened exactly.
//
//===----------------------------------------------------------------------===//

#include "doppler/runtime/CpuKernels.h"

#include <string>

namespace doppler::runtime::cpu {

namespace {

template <typename From, typename To>
Status convertIntegers(const From *in, To *out, int64_t count,
                       ElementType type) {
  for (int64_t i = 0; i < count; ++i) {
    // Exact iff the value converts back unchanged (and is in range: a
    // float past the integer type's range cannot compare equal here since
    // `in[i]` is an integer of that type).
    To value = static_cast<To>(in[i]);
    if (!(value >= static_cast<To>(-9.3e18) && value <= static_cast<To>(9.2e18) &&
          static_cast<From>(value) == in[i]))
      return Status::failure(
          "conversion: the integer " + std::to_string(in[i]) +
          " at position " + std::to_string(i) + " has no exact " +
          std::string(elementTypeName(type)) + " value");
  }
  for (int64_t i = 0; i < count; ++i)
    out[i] = static_cast<To>(in[i]);
  return Status();
}

template <typename From, typename To>
Status convertFloats(const From *in, To *out, int64_t count) {
  for (int64_t i = 0; i < count; ++i)
    out[i] = static_cast<To>(in[i]);
  return Status();
}

template <typename To>
Status convertTo(const void *in, ElementType from, To *out, int64_t count,
                 ElementType to) {
  switch (from) {
  case ElementType::I32:
    return convertIntegers(static_cast<const int32_t *>(in), out, count, to);
  case ElementType::I64:
    return convertIntegers(static_cast<const int64_t *>(in), out, count, to);
  case ElementType::F32:
    return convertFloats(static_cast<const float *>(in), out, count);
  case ElementType::F64:
    return convertFloats(static_cast<const double *>(in), out, count);
  case ElementType::F16:
    break;
  }
  return Status::failure("conversion: from " +
                         std::string(elementTypeName(from)) +
                         " is not supported (i32, i64, f32, f64)");
}

} // namespace

Status convertElements(const void *in, ElementType from, void *out,
                       ElementType to, int64_t count) {
  if (to == ElementType::F32)
    return convertTo(in, from, static_cast<float *>(out), count, to);
  if (to == ElementType::F64)
    return convertTo(in, from, static_cast<double *>(out), count, to);
  return Status::failure("conversion: to " + std::string(elementTypeName(to)) +
                         " is not supported (f32, f64)");
}

} // namespace doppler::runtime::cpu
