//===- CudaTestCases.h - Einsums every CUDA test runs -----------*- C++ -*-===//
//
// One list of einsum cases (every join, every aggregation, permutations,
// broadcasts, contractions in every layout, degenerate and large
// reductions) shared by the host-side plan tests and the GPU tests, and
// inputs inside each join's domain; the same for fused elementwise chains.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_RUNTIME_CUDA_TESTS_CUDATESTCASES_H
#define DOPPLER_RUNTIME_CUDA_TESTS_CUDATESTCASES_H

#include "TestSupport.h"

#include "Doppler/Support/EinsumSpec.h"
#include "Doppler/Support/JoinProgram.h"
#include "doppler/runtime/Types.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

namespace doppler::runtime::test {

struct EinsumCase {
  std::string spec;
  JoinKind join;
  std::optional<AggKind> aggregation;
  std::vector<Shape> shapes;
  double scalar = 0;

  std::string name() const {
    std::string text = spec + " " + std::string(joinKindName(join));
    if (aggregation)
      text += "/" + std::string(aggKindName(*aggregation));
    for (const Shape &shape : shapes)
      text += " " + shapeToString(shape);
    return text;
  }
};

/// Inputs inside every join's domain: positive bases and denominators for
/// log/sqrt/rsqrt/reciprocal/div/pow, signed values otherwise.
inline std::vector<double> inputFor(JoinKind join, int operand, size_t count,
                                    uint32_t seed) {
  std::vector<float> values;
  switch (join) {
  case JoinKind::Log:
  case JoinKind::Sqrt:
  case JoinKind::Rsqrt:
  case JoinKind::Reciprocal:
    values = randomFloats(count, seed, 0.5, 2.0);
    break;
  case JoinKind::Div:
    values = operand == 1 ? randomFloats(count, seed, 0.5, 2.0)
                          : randomFloats(count, seed);
    break;
  case JoinKind::Pow:
    values = operand == 0 ? randomFloats(count, seed, 0.5, 2.0)
                          : randomFloats(count, seed, -2.0, 2.0);
    break;
  default:
    values = randomFloats(count, seed, -2.0, 2.0);
    break;
  }
  return toDouble(values);
}

inline std::vector<EinsumCase> einsumCases() {
  std::vector<EinsumCase> cases;
  for (unsigned j = 0; j < kNumJoinKinds; ++j) {
    auto join = static_cast<JoinKind>(j);
    if (joinArity(join) == 1) {
      cases.push_back({"ij->ij", join, std::nullopt, {{7, 13}}, 1.75});
      cases.push_back({"ijk->kij", join, std::nullopt, {{3, 4, 5}}, -0.5});
      continue;
    }
    cases.push_back({"ij,ij->ij", join, std::nullopt, {{9, 31}, {9, 31}}});
    cases.push_back({"ij,j->ij", join, std::nullopt, {{9, 31}, {31}}});
    cases.push_back({"i,ij->ji", join, std::nullopt, {{6}, {6, 11}}});
    cases.push_back({"i,j->ij", join, std::nullopt, {{5}, {8}}});
    cases.push_back({",ij->ij", join, std::nullopt, {{}, {4, 3}}});
  }
  for (unsigned a = 0; a < kNumAggKinds; ++a) {
    auto agg = static_cast<AggKind>(a);
    // Mul over many values under/overflows; keep its reductions short.
    int64_t n = agg == AggKind::Mul ? 6 : 37;
    cases.push_back({"ij->i", JoinKind::Identity, agg, {{11, n}}});
    cases.push_back({"ij->j", JoinKind::Identity, agg, {{n, 11}}});
    cases.push_back({"ijk->ik", JoinKind::Identity, agg, {{5, n, 7}}});
    cases.push_back({"ijk->", JoinKind::Identity, agg, {{3, 4, 2}}});
    cases.push_back({"ij->i", JoinKind::Exp, agg, {{11, 5}}});
    cases.push_back({"ij,ij->i", JoinKind::Mul, agg, {{11, 5}, {11, 5}}});
    cases.push_back({"ij,jk->ik", JoinKind::Add, agg, {{6, 5}, {5, 4}}});
    cases.push_back({"ij,jk->ik", JoinKind::Max, agg, {{6, 5}, {5, 4}}});
    cases.push_back({"ikj->kj", JoinKind::Abs, agg, {{3, 4, n}}});
    if (agg != AggKind::Mul) {
      // Long reductions: warp and block groups, split passes.
      cases.push_back({"ij->i", JoinKind::Identity, agg, {{3, 20000}}});
      cases.push_back({"ij->", JoinKind::Square, agg, {{300, 101}}});
      cases.push_back({"ij->j", JoinKind::Identity, agg, {{5000, 3}}});
      cases.push_back({"ijk->j", JoinKind::Neg, agg, {{40, 3, 130}}});
      cases.push_back({"abcd->c", JoinKind::Identity, agg, {{7, 9, 2, 61}}});
    }
  }
  // Permutations and the scalar joins.
  cases.push_back({"ij->ji", JoinKind::Identity, std::nullopt, {{40, 37}}});
  cases.push_back({"ijk->kji", JoinKind::Neg, std::nullopt, {{20, 3, 33}}});
  cases.push_back(
      {"ij,ji->ij", JoinKind::Sub, std::nullopt, {{40, 50}, {50, 40}}});
  cases.push_back({"bij,bji->bij",
                   JoinKind::Mul,
                   std::nullopt,
                   {{2, 17, 65}, {2, 65, 17}}});
  cases.push_back({"ij->ji", JoinKind::Scale, std::nullopt, {{4, 9}}, 3.0});
  cases.push_back({"ij->i", JoinKind::Shift, AggKind::Add, {{4, 9}}, -2.5});
  // Contractions (mul/add): GEMMs in every layout.
  int64_t m = 37, k = 45, n = 29;
  auto mm = [&](const char *spec, std::vector<Shape> shapes) {
    cases.push_back({spec, JoinKind::Mul, AggKind::Add, std::move(shapes)});
  };
  mm("ij,jk->ik", {{m, k}, {k, n}});
  mm("ji,jk->ik", {{k, m}, {k, n}});
  mm("ij,kj->ik", {{m, k}, {n, k}});
  mm("ji,kj->ik", {{k, m}, {n, k}});
  mm("ij,jk->ki", {{m, k}, {k, n}});
  mm("ij,j->i", {{1000, 64}, {64}});
  mm("j,jk->k", {{64}, {64, 900}});
  mm("ij,jk->ik", {{96, 128}, {128, 80}});
  int64_t b = 3;
  mm("bij,bjk->bik", {{b, m, k}, {b, k, n}});
  mm("bij,bkj->bik", {{b, m, k}, {b, n, k}});
  mm("ibj,jbk->bik", {{m, b, k}, {k, b, n}});
  mm("bij,bjk->ibk", {{b, m, k}, {b, k, n}});
  mm("abijl,bajlk->abik", {{2, 3, 17, 5, 4}, {3, 2, 5, 4, 19}});
  mm("jil,jlk->ik", {{4, m, 5}, {4, 5, n}});
  mm("hqd,hsd->hqs", {{2, 16, 8}, {2, 12, 8}});
  mm("hqd,hsd->hqs", {{4, 64, 32}, {4, 48, 32}});
  mm("ijx,jk->ik", {{40, 50, 3}, {50, 36}});
  mm("ij,yjk->ik", {{40, 50}, {4, 50, 36}});
  mm("ix,j->ij", {{8, 5}, {7}});
  mm("ij,jk->ik", {{2, 3}, {3, 2}});
  mm("bi,bi->b", {{9, 300}, {9, 300}});
  mm("ij,jk->ik", {{1, 64}, {64, 32}});
  mm("ij,jk->ik", {{16, 0}, {0, 32}});
  mm("ij,jk->ik", {{0, 16}, {16, 32}});
  cases.push_back({"ij->i", JoinKind::Identity, AggKind::Max, {{4, 0}}});
  cases.push_back({"ij->", JoinKind::Identity, AggKind::Add, {{0, 5}}});
  return cases;
}

/// A fused elementwise chain: spec, join program, input shapes. Inputs are
/// uniform in [-2, 2]; the programs keep values well conditioned (bases of
/// log and sqrt made positive), and together they use every join.
struct FusedCase {
  std::string spec;
  std::string program;
  std::vector<Shape> shapes;

  std::string name() const {
    std::string text = spec + " \"" + program + "\"";
    for (const Shape &shape : shapes)
      text += " " + shapeToString(shape);
    return text;
  }
};

inline std::vector<FusedCase> fusedCases() {
  return {
      {"bh,h->bh", "add(in0, in1); gelu(s0)", {{64, 700}, {700}}},
      {"ij,ji->ij", "silu(in0); mul(s0, in1); scale(s1, 0.5)",
       {{33, 40}, {40, 33}}},
      {"ij,i->ij", "div(in0, in1); sub(in1, s0); max(in0, s1); min(in0, s2)",
       {{9, 70}, {9}}},
      {"i->i", "scale(in0, 0.125); exp(s0)", {{1000}}},
      {"ij,ij->ij", "sub(in0, in1); square(s0); shift(s1, 0.5); rsqrt(s2)",
       {{16, 16}, {16, 16}}},
      {"ijk->kji", "abs(in0); shift(s0, 0.5); log(s1); neg(s2)",
       {{3, 4, 5}}},
      {"ij->ij", "abs(in0); shift(s0, 0.25); sqrt(s1); reciprocal(s2)",
       {{7, 9}}},
      {"ij,->ij", "abs(in0); shift(s0, 0.5); pow(s1, in1)", {{5, 6}, {}}},
      {"ij,j,i->ij", "tanh(in0); sigmoid(in1); max(s0, s1); min(s2, in2)",
       {{12, 10}, {10}, {12}}},
      {"ij,ij->ij", "identity(in0); sub(in1, s0); mul(s1, s1); add(s2, in0)",
       {{8, 8}, {8, 8}}},
      {"ij,ij->ij", "relu(in0); abs(in1); shift(s1, 1); div(s0, s2)",
       {{8, 8}, {8, 8}}},
      {",->", "add(in0, in1); exp(s0)", {{}, {}}},
      {"ij,j->ij", "add(in0, in1)", {{0, 8}, {8}}},
  };
}

/// The inputs of a fused case (uniform in [-2, 2]), in double.
inline std::vector<std::vector<double>> fusedInputs(const FusedCase &c,
                                                    uint32_t seed) {
  std::vector<std::vector<double>> inputs;
  for (size_t i = 0; i < c.shapes.size(); ++i)
    inputs.push_back(toDouble(randomFloats(
        numElements(c.shapes[i]), seed + static_cast<uint32_t>(i), -2, 2)));
  return inputs;
}

/// The program evaluated point by point in double (JoinProgram::evaluate).
inline std::vector<double>
referenceFused(const FusedCase &c,
               const std::vector<std::vector<double>> &inputs) {
  EinsumSpec spec = *EinsumSpec::parse(c.spec);
  IndexSizes sizes = *inferIndexSizes(spec, c.shapes);
  JoinProgram program = *JoinProgram::parse(
      c.program, static_cast<unsigned>(c.shapes.size()));
  Shape outShape = outputShape(spec, sizes);
  std::vector<double> out(numElements(outShape));
  std::vector<int64_t> point(spec.output.size(), 0);
  std::vector<double> values(inputs.size());
  for (size_t o = 0; o < out.size(); ++o) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      int64_t offset = 0;
      for (char index : spec.inputs[i])
        offset = offset * sizes.sizeOf(index) + point[spec.output.find(index)];
      values[i] = inputs[i][offset];
    }
    out[o] = program.evaluate(values.data());
    for (size_t d = point.size(); d-- > 0;) {
      if (++point[d] < outShape[d])
        break;
      point[d] = 0;
    }
  }
  return out;
}

/// Elements of `actual` farther than tol * max(1, |expected|) from
/// `expected` (NaN matches NaN).
template <typename T>
int64_t fusedMismatches(const T *actual, const std::vector<double> &expected,
                        double tol) {
  int64_t bad = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    double got = static_cast<double>(actual[i]), want = expected[i];
    if ((std::isnan(want) && std::isnan(got)) || got == want)
      continue;
    if (!(std::abs(got - want) <= tol * std::max(1.0, std::abs(want))))
      ++bad;
  }
  return bad;
}

} // namespace doppler::runtime::test

#endif // DOPPLER_RUNTIME_CUDA_TESTS_CUDATESTCASES_H
