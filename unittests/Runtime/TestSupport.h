//===- TestSupport.h - Reference einsum and random data for tests -*- C++
//-*-===//
//
// The reference evaluates an einsum point by point in double with
// applyJoin/applyAgg, exactly as EinsumSpec.h defines the semantics; kernels
// are checked against it.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_RUNTIME_TESTS_TESTSUPPORT_H
#define DOPPLER_RUNTIME_TESTS_TESTSUPPORT_H

#include "doppler/runtime/Types.h"

#include "Doppler/Support/EinsumSpec.h"

#include <cmath>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace doppler::runtime::test {

inline std::vector<double>
referenceEinsum(const EinsumSpec &spec, JoinKind join,
                std::optional<AggKind> aggregation, double scalar,
                const std::vector<std::vector<double>> &inputs,
                const std::vector<Shape> &shapes) {
  IndexSizes sizes = *inferIndexSizes(spec, shapes);
  Shape outShape = outputShape(spec, sizes);
  bool contracts = spec.contracts();
  std::vector<double> out(numElements(outShape),
                          contracts ? aggIdentity(*aggregation) : 0.0);
  const std::string &indices = sizes.indices;
  std::vector<int64_t> point(indices.size(), 0);
  auto offsetOf = [&](const std::string &term) {
    int64_t offset = 0;
    for (char c : term)
      offset = offset * sizes.sizeOf(c) + point[indices.find(c)];
    return offset;
  };
  if (sizes.iterationSpace() == 0)
    return out;
  while (true) {
    double a = inputs[0][offsetOf(spec.inputs[0])];
    double b = inputs.size() > 1 ? inputs[1][offsetOf(spec.inputs[1])] : 0.0;
    double value = applyJoin(join, a, b, scalar);
    double &slot = out[offsetOf(spec.output)];
    slot = contracts ? applyAgg(*aggregation, slot, value) : value;
    size_t d = indices.size();
    while (d > 0) {
      --d;
      if (++point[d] < sizes.sizes[d])
        break;
      point[d] = 0;
      if (d == 0)
        return out;
    }
    if (indices.empty())
      return out;
  }
}

/// ||actual - expected|| / ||expected|| (absolute when expected is 0).
template <typename T>
double relativeError(const T *actual, const std::vector<double> &expected) {
  double diff = 0, norm = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    double value = static_cast<double>(actual[i]);
    // Equal infinities (e.g. max over nothing) count as exact.
    double d = value == expected[i] ? 0.0 : value - expected[i];
    diff += d * d;
    norm += expected[i] * expected[i];
  }
  return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

inline std::vector<float> randomFloats(size_t count, uint32_t seed,
                                       double low = -1, double high = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(low, high);
  std::vector<float> values(count);
  for (float &v : values)
    v = static_cast<float>(dist(rng));
  return values;
}

inline std::vector<double> toDouble(const std::vector<float> &values) {
  return std::vector<double>(values.begin(), values.end());
}

} // namespace doppler::runtime::test

#endif // DOPPLER_RUNTIME_TESTS_TESTSUPPORT_H
