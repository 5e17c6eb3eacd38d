//===- Random.h - A seeded generator whose state can be saved --*- C++ -*-===//
//
// SplitMix64, as the heuristics use, but with its state exposed so that a
// training checkpoint can store it and a resumed run draws the same numbers.
// Results depend only on the seed, on every platform (no std::
// distributions).
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_LIB_PLACEMENT_LEARNING_RANDOM_H
#define DOPPLER_LIB_PLACEMENT_LEARNING_RANDOM_H

#include <cmath>
#include <cstdint>

namespace doppler::placement::learning {

class Random {
public:
  explicit Random(uint64_t seed = 0) : state_(seed) {}

  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform double in [0, 1), 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  /// Uniform integer in [0, bound); bound >= 1. (Multiply-shift: the bias is
  /// below 2^-32, irrelevant here.)
  uint32_t below(uint32_t bound) {
    return static_cast<uint32_t>(((next() >> 32) * bound) >> 32);
  }
  /// Uniform integer in [lo, hi].
  int64_t between(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(below(static_cast<uint32_t>(hi - lo + 1)));
  }
  /// exp of a uniform in [log lo, log hi).
  double logUniform(double lo, double hi) {
    return std::exp(std::log(lo) + uniform() * (std::log(hi) - std::log(lo)));
  }

  uint64_t state() const { return state_; }
  void setState(uint64_t state) { state_ = state; }

private:
  uint64_t state_;
};

/// A seed for an independent stream: mixes `seed` with a stream number.
inline uint64_t deriveSeed(uint64_t seed, uint64_t stream) {
  Random mixer(seed ^ (stream * 0xD1B54A32D192ED03ull));
  mixer.next();
  return mixer.next();
}

} // namespace doppler::placement::learning

#endif // DOPPLER_LIB_PLACEMENT_LEARNING_RANDOM_H
