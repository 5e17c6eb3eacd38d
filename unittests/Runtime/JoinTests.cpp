//===- JoinTests.cpp - Vectorised CPU joins against the reference ---------===//
//
// Every join of CpuJoins.h, f32 and f64, over special values (zeros, ±inf,
// NaN, denormals, values where exp over- and underflows, negative inputs of
// log/sqrt) and random ones, against doppler::applyJoin in double: the
// accuracy bound stated in CpuJoins.h, NaN where the reference is NaN, the
// same infinities and signed zeros. Then the loop nest's vectorised
// aggregations through EinsumKernel.
//
//===----------------------------------------------------------------------===//

#include "CpuJoins.h"

#include "doppler/runtime/CpuKernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace doppler;
using namespace doppler::runtime;

namespace {

template <typename T> bool sameBits(T x, T y) {
  return std::memcmp(&x, &y, sizeof(T)) == 0;
}

/// The bound of CpuJoins.h for `join` on T, in ULP of the reference
/// (rounded to T), before the absolute terms of gelu and silu.
template <typename T> double ulpBound(JoinKind join) {
  switch (join) {
  case JoinKind::Rsqrt:
    return 1;
  case JoinKind::Exp:
  case JoinKind::Log:
  case JoinKind::Pow:
  case JoinKind::Tanh:
  case JoinKind::Erf:
    // f64: SLEEF's error plus that of the reference's libm.
    return std::is_same_v<T, float> ? 2 : 3;
  case JoinKind::Silu:
  case JoinKind::Sigmoid:
  case JoinKind::Gelu:
    return 4;
  default:
    return 0; // Exact: compared bit for bit.
  }
}

bool isExact(JoinKind join) { return ulpBound<float>(join) == 0; }

/// The spacing of T at |x| (x finite and normal).
template <typename T> double ulpOf(T x) {
  T magnitude = std::fabs(x);
  if (magnitude == std::numeric_limits<T>::max())
    return double(magnitude - std::nextafter(magnitude, T(0)));
  return double(std::nextafter(magnitude, std::numeric_limits<T>::infinity()) -
                magnitude);
}

template <typename T> std::vector<T> specialValues() {
  using L = std::numeric_limits<T>;
  std::vector<T> values = {T(0),
                           T(-0.0),
                           L::infinity(),
                           -L::infinity(),
                           L::quiet_NaN(),
                           -L::quiet_NaN(),
                           L::denorm_min(),
                           -L::denorm_min(),
                           L::min() / T(3),
                           -L::min() / T(7),
                           L::min(),
                           -L::min(),
                           L::max(),
                           -L::max(),
                           L::epsilon(),
                           T(1),
                           T(-1),
                           T(0.5),
                           T(-0.5),
                           T(2),
                           T(-2),
                           T(1e-20),
                           T(-1e-20),
                           T(1e10),
                           T(-1e10),
                           T(1e30),
                           T(-1e30)};
  // Around the overflow and underflow thresholds of exp (and of exp(-a) in
  // silu/sigmoid, of exp(-2u) in gelu) for both types.
  for (T x : {T(80), T(87), T(88.5), T(88.8), T(89), T(95), T(100), T(103.5),
              T(104.5), T(150), T(700), T(709.5), T(710), T(740), T(745.5),
              T(746), T(800), T(3), T(4.5), T(5.5), T(7), T(10), T(20)}) {
    values.push_back(x);
    values.push_back(-x);
  }
  return values;
}

/// Specials, then random values: uniform in [-12, 12], and log-uniform
/// magnitudes over most of T's range with random signs.
template <typename T> std::vector<T> testValues(uint32_t seed) {
  std::vector<T> values = specialValues<T>();
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uniform(-12, 12);
  for (int i = 0; i < 4000; ++i)
    values.push_back(T(uniform(rng)));
  const double maxExponent = std::is_same_v<T, float> ? 38 : 300;
  std::uniform_real_distribution<double> exponent(-maxExponent, maxExponent);
  std::bernoulli_distribution negative(0.5);
  for (int i = 0; i < 4000; ++i) {
    T x = T(std::pow(10.0, exponent(rng)));
    values.push_back(negative(rng) ? -x : x);
  }
  return values;
}

/// Checks `got` for join(a, b) against the double reference. Returns the
/// error in ULP (0 where not measured), or -1 after a failure.
template <typename T>
double check(JoinKind join, T a, T b, T scalar, T got) {
  const double exact = applyJoin(join, double(a), double(b), double(scalar));
  const T ref = T(exact);
  auto describe = [&] {
    return std::string(joinKindName(join)) + "(" + std::to_string(a) + ", " +
           std::to_string(b) + ") = " + std::to_string(got) +
           ", reference " + std::to_string(ref);
  };
  if (std::isnan(ref)) {
    EXPECT_TRUE(std::isnan(got)) << describe();
    return std::isnan(got) ? 0 : -1;
  }
  if (isExact(join)) {
    EXPECT_TRUE(sameBits(got, ref)) << describe();
    return sameBits(got, ref) ? 0 : -1;
  }
  if (std::isinf(ref)) {
    EXPECT_EQ(got, ref) << describe();
    return got == ref ? 0 : -1;
  }
  const double error = std::fabs(double(got) - double(ref));
  if (std::isnan(got) || std::isinf(got)) {
    ADD_FAILURE() << describe();
    return -1;
  }
  // Absolute terms of the bound: gelu's cancellation in 1 + tanh(u); silu's
  // -0 where exp(-a) overflows (|reference| < |a| * smallest normal there).
  const double smallest = double(std::numeric_limits<T>::min());
  double absolute = 0;
  if (join == JoinKind::Gelu)
    absolute = std::fabs(double(a)) * std::numeric_limits<T>::epsilon();
  if (join == JoinKind::Silu && got == 0)
    absolute = std::fabs(double(a)) * smallest;
  if (std::fabs(ref) < std::numeric_limits<T>::min()) {
    // Denormal or zero reference: within the smallest normal, and a zero
    // result has the reference's sign.
    bool ok = error <= std::max(smallest, absolute) &&
              (got != 0 || ref != 0 || std::signbit(got) == std::signbit(ref));
    EXPECT_TRUE(ok) << describe();
    return ok ? 0 : -1;
  }
  const double allowed = ulpBound<T>(join) * ulpOf(ref) + absolute;
  EXPECT_LE(error, allowed) << describe();
  if (error > allowed)
    return -1;
  // The error in ULP where the bound is pure ULP (gelu: a >= 0).
  return absolute == 0 || (join == JoinKind::Gelu && a >= 0)
             ? error / ulpOf(ref)
             : 0;
}

template <typename T> void checkEveryJoin() {
  const std::vector<T> values = testValues<T>(7);
  const std::vector<T> specials = specialValues<T>();
  const T scalar = T(-1.75);
  for (unsigned j = 0; j < kNumJoinKinds; ++j) {
    const auto join = static_cast<JoinKind>(j);
    SCOPED_TRACE(std::string(joinKindName(join)));
    double worst = 0;
    int failures = 0;
    auto record = [&](double ulps) {
      if (ulps < 0)
        ++failures;
      else
        worst = std::max(worst, ulps);
    };
    if (joinArity(join) == 1) {
      // Odd length, so that the vector tail is covered too; b is null.
      std::vector<T> out(values.size());
      cpu::applyJoinSpan(join, values.data(), nullptr, scalar, out.data(),
                         static_cast<int64_t>(values.size()));
      for (size_t i = 0; i < values.size() && failures < 10; ++i)
        record(check<T>(join, values[i], T(0), scalar, out[i]));
    } else {
      // Every pair of specials, with b contiguous and broadcast, then
      // random pairs.
      std::vector<T> as, bs;
      for (T x : specials)
        for (T y : specials) {
          as.push_back(x);
          bs.push_back(y);
        }
      std::mt19937 rng(11);
      std::uniform_int_distribution<size_t> pick(0, values.size() - 1);
      for (int i = 0; i < 20000; ++i) {
        as.push_back(values[pick(rng)]);
        bs.push_back(values[pick(rng)]);
      }
      if (join == JoinKind::Pow) {
        // Bases and exponents where pow neither over- nor underflows,
        // negative bases with integral exponents.
        std::uniform_real_distribution<double> base(0, 20), power(-12, 12);
        for (int i = 0; i < 20000; ++i) {
          double x = base(rng), y = power(rng);
          if (i % 2)
            x = -x, y = std::round(y);
          as.push_back(T(x));
          bs.push_back(T(y));
        }
      }
      std::vector<T> out(as.size());
      cpu::applyJoinSpan(join, as.data(), bs.data(), scalar, out.data(),
                         static_cast<int64_t>(as.size()));
      for (size_t i = 0; i < as.size() && failures < 10; ++i)
        record(check<T>(join, as[i], bs[i], scalar, out[i]));
      std::vector<T> row(specials.size());
      for (T y : specials) {
        cpu::applyJoinSpanBroadcastB(join, specials.data(), y, scalar,
                                     row.data(),
                                     static_cast<int64_t>(specials.size()));
        for (size_t i = 0; i < specials.size() && failures < 10; ++i)
          record(check<T>(join, specials[i], y, scalar, row[i]));
      }
    }
    EXPECT_EQ(failures, 0);
    ::testing::Test::RecordProperty(
        std::string(joinKindName(join)) + "_max_ulp", std::to_string(worst));
    if (!isExact(join))
      std::printf("  %-10s %s max error %.2f ULP (bound %.0f)\n",
                  std::string(joinKindName(join)).c_str(),
                  std::is_same_v<T, float> ? "f32" : "f64", worst,
                  ulpBound<T>(join));
  }
}

TEST(CpuJoins, EveryJoinF32WithinTheBound) { checkEveryJoin<float>(); }
TEST(CpuJoins, EveryJoinF64WithinTheBound) { checkEveryJoin<double>(); }

TEST(CpuJoins, InPlaceAndEveryLength) {
  // out aliasing a; every length around the vector width (tails).
  for (int64_t n = 0; n <= 40; ++n) {
    std::vector<float> x(n), expected(n);
    for (int64_t i = 0; i < n; ++i) {
      x[i] = float(i) * 0.37f - 5.f;
      expected[i] = float(applyJoin(JoinKind::Tanh, x[i], 0, 0));
    }
    cpu::applyJoinSpan(JoinKind::Tanh, x.data(), nullptr, 0.f, x.data(), n);
    for (int64_t i = 0; i < n; ++i)
      EXPECT_NEAR(x[i], expected[i], 2 * ulpOf(expected[i])) << n << " " << i;
  }
}

//===----------------------------------------------------------------------===//
// Aggregations of the loop nest (vectorised reductions)
//===----------------------------------------------------------------------===//

/// Runs `spec` with one f32 input through EinsumKernel.
std::vector<float> runEinsum(const std::string &text, JoinKind join,
                             std::optional<AggKind> agg, const Shape &shape,
                             const std::vector<float> &input) {
  std::optional<EinsumSpec> spec = EinsumSpec::parse(text);
  EXPECT_TRUE(spec);
  Result<cpu::EinsumKernel> kernel = cpu::EinsumKernel::create(
      *spec, join, agg, 0, {shape}, ElementType::F32);
  EXPECT_TRUE(kernel) << kernel.message();
  std::vector<float> out(numElements(kernel->outputShape()));
  const void *inputs[] = {input.data()};
  kernel->run(inputs, out.data());
  return out;
}

TEST(CpuJoins, MaxAndMinReductionsKeepTheScalarSemantics) {
  // std::max(acc, x) keeps acc when x is NaN, and the first of +0/-0: the
  // vector lanes must give exactly the scalar fold's result.
  const int64_t rows = 6, cols = 75;
  std::vector<float> x(rows * cols);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> uniform(-4, -1);
  for (float &v : x)
    v = uniform(rng);
  for (int64_t c = 0; c < cols; c += 7)
    x[c] = NAN;                       // Row 0: NaNs among negatives.
  x[cols + 40] = 0.f;                 // Row 1: +0 before -0.
  x[cols + 50] = -0.f;
  x[2 * cols + 5] = -0.f;             // Row 2: -0 before +0.
  x[2 * cols + 70] = 0.f;
  for (int64_t c = 0; c < cols; ++c)  // Row 3: all NaN.
    x[3 * cols + c] = NAN;
  x[4 * cols + 74] = INFINITY;        // Row 4: inf in the scalar tail.
  x[5 * cols + 3] = -INFINITY;        // Row 5: -inf in a lane.
  for (AggKind agg : {AggKind::Max, AggKind::Min}) {
    SCOPED_TRACE(std::string(aggKindName(agg)));
    std::vector<float> sign(x);
    if (agg == AggKind::Min)
      for (float &v : sign)
        v = -v;
    std::vector<float> out = runEinsum("ij->i", JoinKind::Identity, agg,
                                       {rows, cols}, sign);
    ASSERT_EQ(out.size(), size_t(rows));
    for (int64_t r = 0; r < rows; ++r) {
      float acc = float(aggIdentity(agg));
      for (int64_t c = 0; c < cols; ++c)
        acc = float(applyAgg(agg, acc, sign[r * cols + c]));
      EXPECT_TRUE(sameBits(out[r], acc) ||
                  (std::isnan(out[r]) && std::isnan(acc)))
          << "row " << r << ": " << out[r] << " vs " << acc;
    }
  }
}

TEST(CpuJoins, SumReductionsStayAccurate) {
  // The vector lanes sum in a different order: compare with a double sum,
  // relative to the sum of magnitudes.
  const int64_t rows = 3, cols = 100003;
  std::vector<float> x(rows * cols);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> uniform(-1, 1);
  for (float &v : x)
    v = uniform(rng);
  std::vector<float> out =
      runEinsum("ij->i", JoinKind::Exp, AggKind::Add, {rows, cols}, x);
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (int64_t c = 0; c < cols; ++c)
      sum += std::exp(double(x[r * cols + c]));
    EXPECT_NEAR(out[r], sum, sum * 1e-5) << r;
  }
}

} // namespace
