//===- CudaTestCases.h - Einsums every CUDA test runs -----------*- C++ -*-===//
//
// One list of einsum cases (every join, every aggregation, permutations,
// broadcasts, contractions in every layout, degenerate and large
// reductions) shared by the host-side plan tests and the GPU tests, and
// inputs inside each join's domain.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_RUNTIME_CUDA_TESTS_CUDATESTCASES_H
#define DOPPLER_RUNTIME_CUDA_TESTS_CUDATESTCASES_H

#include "TestSupport.h"

#include "Doppler/Support/EinsumSpec.h"
#include "doppler/runtime/Types.h"

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

} // namespace doppler::runtime::test

#endif // DOPPLER_RUNTIME_CUDA_TESTS_CUDATESTCASES_H
