//===- JoinProgramTest.cpp - Join programs: text, checks, semantics -------===//

#include "Doppler/Support/JoinProgram.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace doppler;

namespace {

std::string parseError(const std::string &text, unsigned numInputs) {
  std::string error;
  EXPECT_FALSE(JoinProgram::parse(text, numInputs, &error)) << text;
  return error;
}

TEST(JoinProgram, ParsesAndPrintsCanonically) {
  std::string error;
  auto program =
      JoinProgram::parse("  add( in0 ,in1 );gelu(s0)  ", 2, &error);
  ASSERT_TRUE(program) << error;
  EXPECT_EQ(program->steps.size(), 2u);
  EXPECT_EQ(program->str(), "add(in0, in1); gelu(s0)");
  auto again = JoinProgram::parse(program->str(), 2);
  ASSERT_TRUE(again);
  EXPECT_TRUE(*again == *program);

  auto scaled = JoinProgram::parse("scale(in0, -1.25e-3); exp(s0)", 1, &error);
  ASSERT_TRUE(scaled) << error;
  EXPECT_EQ(scaled->steps[0].scalar, -1.25e-3);
  EXPECT_EQ(scaled->str(), "scale(in0, -0.00125); exp(s0)");
}

TEST(JoinProgram, EvaluatesWithApplyJoin) {
  auto program = JoinProgram::parse("add(in0, in1); gelu(s0)", 2);
  ASSERT_TRUE(program);
  for (double a : {-3.0, -0.5, 0.0, 0.25, 2.0})
    for (double b : {-1.0, 0.0, 0.75}) {
      double inputs[2] = {a, b};
      EXPECT_EQ(program->evaluate(inputs),
                applyJoin(JoinKind::Gelu, a + b, 0, 0));
    }
  auto gate = JoinProgram::parse("silu(in0); mul(s0, in1)", 2);
  ASSERT_TRUE(gate);
  double inputs[2] = {1.5, -2.0};
  EXPECT_EQ(gate->evaluate(inputs),
            applyJoin(JoinKind::Silu, 1.5, 0, 0) * -2.0);
  // An operand read twice, a step read by two later steps.
  auto square = JoinProgram::parse("mul(in0, in0); sqrt(s0); add(s0, s1)", 1);
  ASSERT_TRUE(square);
  double x = -3.0;
  EXPECT_EQ(square->evaluate(&x), 9.0 + 3.0);
}

TEST(JoinProgram, SingleMatchesAnEinsum) {
  JoinProgram add = JoinProgram::single(JoinKind::Add);
  EXPECT_EQ(add.numInputs, 2u);
  EXPECT_EQ(add.str(), "add(in0, in1)");
  EXPECT_TRUE(add.verify());
  JoinProgram shift = JoinProgram::single(JoinKind::Shift, 0.5);
  EXPECT_EQ(shift.str(), "shift(in0, 0.5)");
  double x = 2;
  EXPECT_EQ(shift.evaluate(&x), 2.5);
  EXPECT_EQ(JoinProgram::single(JoinKind::Exp).flopsPerElement(),
            joinFlops(JoinKind::Exp));
}

TEST(JoinProgram, RejectsMalformedText) {
  EXPECT_EQ(parseError("", 1), "step s0: unknown join ''");
  EXPECT_EQ(parseError("frobnicate(in0)", 1),
            "step s0: unknown join 'frobnicate'");
  EXPECT_EQ(parseError("exp in0", 1), "step s0: expected '(' at 'in0'");
  EXPECT_EQ(parseError("exp(in0", 1),
            "step s0: expected ',' or ')' at the end");
  EXPECT_EQ(parseError("exp(in0) exp(s0)", 1),
            "expected ';' or the end at 'exp(s0)'");
  EXPECT_EQ(parseError("exp(x)", 1),
            "step s0: expected an operand (inN or sN) or a finite scalar at "
            "'x'");
  EXPECT_EQ(parseError("exp(in0, 2)", 1), "step s0: join 'exp' takes no scalar");
  EXPECT_EQ(parseError("scale(in0)", 1), "step s0: join 'scale' needs a scalar");
  EXPECT_EQ(parseError("scale(in0, inf)", 1),
            "step s0: expected an operand (inN or sN) or a finite scalar at "
            "'inf'");
  EXPECT_EQ(parseError("scale(in0, 1, 2)", 1),
            "step s0: expected an operand (inN or sN) at '2'");
  EXPECT_EQ(parseError("scale(2, in0)", 1),
            "step s0: the scalar comes after the operands");
}

TEST(JoinProgram, RejectsInvalidPrograms) {
  EXPECT_EQ(parseError("add(in0)", 1),
            "step s0: join 'add' takes 2 operand(s), got 1");
  EXPECT_EQ(parseError("exp(in0, in1)", 2),
            "step s0: join 'exp' takes 1 operand(s), got 2");
  EXPECT_EQ(parseError("exp(in2)", 2),
            "step s0: operand in2 is out of range (the op has 2 input(s))");
  EXPECT_EQ(parseError("exp(s0)", 1), "step s0: operand s0 is not an earlier step");
  EXPECT_EQ(parseError("exp(in0)", 2), "input in1 is never read");
  EXPECT_EQ(parseError("exp(in0); neg(in0)", 1), "step s0 is never read");
  std::string longest = "neg(in0)";
  for (unsigned i = 1; i < kMaxJoinProgramSteps; ++i)
    longest += "; neg(s" + std::to_string(i - 1) + ")";
  EXPECT_TRUE(JoinProgram::parse(longest, 1));
  EXPECT_EQ(parseError(longest + "; neg(s63)", 1),
            "join program has more than 64 steps");
}

TEST(JoinProgram, InlinesAProducer) {
  // Consumer: gelu(in0) over the producer's result; producer add(in0, in1).
  JoinProgram consumer = JoinProgram::single(JoinKind::Gelu);
  JoinProgram producer = JoinProgram::single(JoinKind::Add);
  JoinProgram fused =
      JoinProgram::inlineInput(consumer, 0, producer, {0}, {0, 1}, 2);
  EXPECT_TRUE(fused.verify());
  EXPECT_EQ(fused.str(), "add(in0, in1); gelu(s0)");

  // Consumer mul(in0, in1) where in1 = silu(x) and in0 = y; x, y distinct.
  JoinProgram mul = JoinProgram::single(JoinKind::Mul);
  JoinProgram silu = JoinProgram::single(JoinKind::Silu);
  JoinProgram gate = JoinProgram::inlineInput(mul, 1, silu, {0, 0}, {1}, 2);
  EXPECT_TRUE(gate.verify());
  EXPECT_EQ(gate.str(), "silu(in1); mul(in0, s0)");
  double inputs[2] = {3.0, -0.5};
  EXPECT_EQ(gate.evaluate(inputs),
            3.0 * applyJoin(JoinKind::Silu, -0.5, 0, 0));

  // A value both read (x - exp(x)): one input.
  JoinProgram sub = JoinProgram::single(JoinKind::Sub);
  JoinProgram exp = JoinProgram::single(JoinKind::Exp);
  JoinProgram shared = JoinProgram::inlineInput(sub, 1, exp, {0, 0}, {0}, 1);
  EXPECT_TRUE(shared.verify());
  EXPECT_EQ(shared.str(), "exp(in0); sub(in0, s0)");
}

} // namespace

namespace {

TEST(JoinProgram, FusedSignature) {
  auto spec = EinsumSpec::parse("bh,h->bh");
  ASSERT_TRUE(spec);
  std::string error;
  JoinProgram program;
  auto signature = checkFusedSignature(*spec, "add(in0, in1); gelu(s0)",
                                       {{4, 8}, {8}}, &program, &error);
  ASSERT_TRUE(signature) << error;
  EXPECT_EQ(signature->outputShape, (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(program.steps.size(), 2u);
  EinsumWork work = estimateFusedWork(*spec, signature->sizes, program, 4);
  EXPECT_EQ(work.flops, 32.0 * program.flopsPerElement());
  EXPECT_EQ(work.bytesRead, (32.0 + 8.0) * 4);
  EXPECT_EQ(work.bytesWritten, 32.0 * 4);

  EXPECT_FALSE(checkFusedSignature(*spec, "add(in0, in1)", {{4, 8}, {9}},
                                   nullptr, &error));
  EXPECT_NE(error.find("index 'h'"), std::string::npos) << error;
  EXPECT_FALSE(
      checkFusedSignature(*spec, "exp(in0)", {{4, 8}, {8}}, nullptr, &error));
  EXPECT_EQ(error, "invalid join program: input in1 is never read");
  auto contracting = EinsumSpec::parse("ij,jk->ik");
  ASSERT_TRUE(contracting);
  EXPECT_FALSE(checkFusedSignature(*contracting, "mul(in0, in1)",
                                   {{2, 3}, {3, 4}}, nullptr, &error));
  EXPECT_EQ(error, "spec 'ij,jk->ik' contracts index(es) 'j': a fused op is "
                   "elementwise");
  auto huge = EinsumSpec::parse("ij->ij");
  ASSERT_TRUE(huge);
  EXPECT_FALSE(checkFusedSignature(*huge, "exp(in0)",
                                   {{int64_t(1) << 40, int64_t(1) << 40}},
                                   nullptr, &error));
  EXPECT_NE(error.find("more points than the limit"), std::string::npos)
      << error;
}

} // namespace
