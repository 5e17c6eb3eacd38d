//===- FusedTests.cpp - Fused elementwise tasks on the CPU ----------------===//
//
// The fused kernel against JoinProgram::evaluate (double, point by point)
// over random shapes, broadcasts and transposed inputs; fused tasks in task
// graphs, plans and the C API; and their errors.
//
// The accuracy bound checked here: every element within
// tol * max(1, |reference|) of the reference, tol = 1e-6 in f32 and 1e-12
// in f64. Each step rounds to the element type (as the chain of einsums the
// fused op replaces does), the span joins are within a few ULP (CpuJoins.h),
// and the programs below keep intermediate values well conditioned (bases
// of log, sqrt and pow made positive, denominators away from zero), so the
// f32 error is a few ULP of the values involved; the floor of 1 covers
// results near zero, where a relative bound would measure cancellation, not
// the kernel.
//
//===----------------------------------------------------------------------===//

#include "TestSupport.h"

#include "doppler/runtime/CApi.h"
#include "doppler/runtime/CpuBackend.h"
#include "doppler/runtime/CpuKernels.h"
#include "doppler/runtime/Executor.h"
#include "doppler/runtime/Plan.h"
#include "doppler/runtime/TaskGraph.h"

#include "Doppler/Support/JoinProgram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

using namespace doppler;
using namespace doppler::runtime;
using namespace doppler::runtime::test;

namespace {

/// Well-conditioned programs that together use every join, with their
/// input counts. Inputs are uniform in [-2, 2].
struct ProgramCase {
  unsigned numInputs;
  const char *text;
};
const ProgramCase kPrograms[] = {
    {2, "add(in0, in1); gelu(s0)"},
    {2, "silu(in0); mul(s0, in1)"},
    {1, "scale(in0, 0.125); exp(s0)"},
    {2, "sub(in0, in1); square(s0); shift(s1, 0.5); rsqrt(s2)"},
    {1, "abs(in0); shift(s0, 0.5); log(s1); neg(s2)"},
    {1, "abs(in0); shift(s0, 0.25); sqrt(s1); reciprocal(s2)"},
    {2, "abs(in0); shift(s0, 0.5); pow(s1, in1)"},
    {3, "tanh(in0); sigmoid(in1); max(s0, s1); min(s2, in2)"},
    {2, "relu(in0); abs(in1); shift(s1, 1); div(s0, s2)"},
    {2, "identity(in0); sub(in1, s0); mul(s1, s1); add(s2, in0)"},
    // A broadcast first operand of non-commuting joins (b: one value per
    // chunk when in0 lacks the innermost index).
    {2, "div(in0, in1); sub(in1, s0); max(in0, s1); min(in0, s2)"},
    // A step read by several later ones; in-place reuse of buffers.
    {2, "mul(in0, in1); exp(s0); add(s0, s1); tanh(s2); mul(s3, s1)"},
    // The exact GELU without its 0.5: x (1 + erf(x / sqrt 2)).
    {1, "scale(in0, 0.7071067811865476); erf(s0); shift(s1, 1); mul(s2, in0)"},
    // Comparisons and where on 0/1 values and data.
    {3, "lt(in0, in1); where(s0, in2); eq(s1, in0); ne(s2, s0); "
        "ge(s3, in1); gt(s4, s1); le(s5, s3)"},
};

/// Every join appears in some program above (checked, so a new join must
/// be added to a program).
TEST(FusedKernel, ProgramsCoverEveryJoin) {
  std::set<JoinKind> seen;
  for (const ProgramCase &c : kPrograms) {
    std::optional<JoinProgram> program =
        JoinProgram::parse(c.text, c.numInputs);
    ASSERT_TRUE(program) << c.text;
    for (const JoinStep &step : program->steps)
      seen.insert(step.join);
  }
  for (unsigned k = 0; k < kNumJoinKinds; ++k)
    EXPECT_TRUE(seen.count(static_cast<JoinKind>(k)))
        << joinKindName(static_cast<JoinKind>(k)) << " is in no program";
}

struct FusedCase {
  std::string spec;
  std::vector<Shape> shapes;
  std::string program;
};

/// A random elementwise spec for `numInputs` inputs: output rank 1..4 over
/// "ijkl", extents that hit chunk boundaries now and then (600, 1100: rows
/// longer than a chunk; 1..7: many rows per chunk), input 0 a permutation
/// of the output's indices (transposed or not), the others random subsets
/// in random order (broadcasts), sometimes a scalar.
FusedCase randomCase(std::mt19937 &rng, const ProgramCase &program) {
  auto pick = [&](int n) {
    return std::uniform_int_distribution<int>(0, n - 1)(rng);
  };
  const int64_t extents[] = {1, 2, 3, 5, 7, 16, 33, 600, 1100};
  FusedCase c;
  c.program = program.text;
  int rank = 1 + pick(4);
  std::string output = std::string("ijkl").substr(0, rank);
  std::vector<int64_t> sizes;
  int64_t total = 1;
  for (int d = 0; d < rank; ++d) {
    // Keep cases small: at most about 40k points.
    int64_t extent = extents[pick(9)];
    while (total * extent > 40000)
      extent = extents[pick(5)];
    sizes.push_back(extent);
    total *= extent;
  }
  std::vector<std::string> terms;
  for (unsigned i = 0; i < program.numInputs; ++i) {
    std::string term;
    if (i == 0) {
      term = output;
      if (pick(2))
        std::shuffle(term.begin(), term.end(), rng);
    } else if (pick(6) != 0) {
      for (char c : output)
        if (pick(2))
          term.push_back(c);
      std::shuffle(term.begin(), term.end(), rng);
    }
    terms.push_back(term);
    Shape shape;
    for (char index : term)
      shape.push_back(sizes[output.find(index)]);
    c.shapes.push_back(shape);
  }
  for (size_t i = 0; i < terms.size(); ++i)
    c.spec += (i ? "," : "") + terms[i];
  c.spec += "->" + output;
  return c;
}

/// The program evaluated point by point in double on the inputs' values.
template <typename T>
std::vector<double> referenceFused(const FusedCase &c,
                                   const std::vector<std::vector<T>> &inputs) {
  EinsumSpec spec = *EinsumSpec::parse(c.spec);
  IndexSizes sizes = *inferIndexSizes(spec, c.shapes);
  JoinProgram program =
      *JoinProgram::parse(c.program, static_cast<unsigned>(inputs.size()));
  Shape outShape = outputShape(spec, sizes);
  std::vector<double> out(numElements(outShape));
  std::vector<int64_t> point(spec.output.size(), 0);
  auto offsetOf = [&](const std::string &term) {
    int64_t offset = 0;
    for (char index : term)
      offset = offset * sizes.sizeOf(index) + point[spec.output.find(index)];
    return offset;
  };
  std::vector<double> values(inputs.size());
  for (size_t o = 0; o < out.size(); ++o) {
    for (size_t i = 0; i < inputs.size(); ++i)
      values[i] = static_cast<double>(inputs[i][offsetOf(spec.inputs[i])]);
    out[o] = program.evaluate(values.data());
    for (size_t d = point.size(); d-- > 0;) {
      if (++point[d] < outShape[d])
        break;
      point[d] = 0;
    }
  }
  return out;
}

/// Elements of `actual` outside tol * max(1, |expected|) (NaN matches
/// NaN); the first few are described in `*first`.
template <typename T>
int64_t countMismatches(const T *actual, const std::vector<double> &expected,
                        double tol, std::string *first = nullptr) {
  int64_t bad = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    double got = static_cast<double>(actual[i]), want = expected[i];
    if (std::isnan(want) && std::isnan(got))
      continue;
    if (got == want)
      continue;
    if (std::abs(got - want) <= tol * std::max(1.0, std::abs(want)))
      continue;
    if (bad++ == 0 && first)
      *first = "element " + std::to_string(i) + ": got " +
               std::to_string(got) + ", want " + std::to_string(want);
  }
  return bad;
}

template <typename T> ElementType typeOf();
template <> ElementType typeOf<float>() { return ElementType::F32; }
template <> ElementType typeOf<double>() { return ElementType::F64; }

template <typename T>
std::vector<std::vector<T>> randomInputs(const FusedCase &c, uint32_t seed) {
  std::vector<std::vector<T>> inputs;
  for (size_t i = 0; i < c.shapes.size(); ++i) {
    std::vector<float> values =
        randomFloats(numElements(c.shapes[i]), seed + i, -2.0, 2.0);
    inputs.emplace_back(values.begin(), values.end());
  }
  return inputs;
}

/// Runs `c` through FusedKernel in T; returns the mismatches.
template <typename T>
int64_t checkFused(const FusedCase &c, uint32_t seed, double tol) {
  SCOPED_TRACE(c.spec + " \"" + c.program + "\" " +
               (typeOf<T>() == ElementType::F32 ? "f32" : "f64"));
  std::optional<EinsumSpec> spec = EinsumSpec::parse(c.spec);
  EXPECT_TRUE(spec);
  if (!spec)
    return -1;
  Result<cpu::FusedKernel> kernel =
      cpu::FusedKernel::create(*spec, c.program, c.shapes, typeOf<T>());
  EXPECT_TRUE(kernel) << kernel.message();
  if (!kernel)
    return -1;
  std::vector<std::vector<T>> inputs = randomInputs<T>(c, seed);
  std::vector<const void *> pointers;
  for (const std::vector<T> &input : inputs)
    pointers.push_back(input.data());
  std::vector<double> expected = referenceFused(c, inputs);
  EXPECT_EQ(static_cast<size_t>(numElements(kernel->outputShape())),
            expected.size());
  // Poisoned output: every element must be written.
  std::vector<T> out(expected.size(), static_cast<T>(NAN));
  kernel->run(pointers.data(), out.data());
  std::string first;
  int64_t bad = countMismatches(out.data(), expected, tol, &first);
  EXPECT_EQ(bad, 0) << first;
  return bad;
}

TEST(FusedKernel, RandomShapesBroadcastsAndTransposesF32) {
  std::mt19937 rng(19);
  for (int round = 0; round < 6; ++round)
    for (const ProgramCase &program : kPrograms)
      checkFused<float>(randomCase(rng, program), 100 + round, 1e-6);
}

TEST(FusedKernel, RandomShapesBroadcastsAndTransposesF64) {
  std::mt19937 rng(20);
  for (int round = 0; round < 4; ++round)
    for (const ProgramCase &program : kPrograms)
      checkFused<double>(randomCase(rng, program), 200 + round, 1e-12);
}

TEST(FusedKernel, ChunkingCases) {
  // Rows longer than a chunk, not a multiple of it; many short rows per
  // chunk with a broadcast-by-row bias; a broadcast first operand; a
  // transpose; a scalar; a single point; an empty space.
  const FusedCase cases[] = {
      {"ij,j->ij", {{3, 1337}, {1337}}, "add(in0, in1); gelu(s0)"},
      {"ij,j->ij", {{97, 8}, {8}}, "add(in0, in1); gelu(s0)"},
      {"ij,i->ij", {{9, 700}, {9}}, "div(in0, in1); sub(in1, s0)"},
      {"i,ij->ij", {{9}, {9, 5}}, "sub(in0, in1); max(in0, s0)"},
      {"ji,ij->ij", {{40, 30}, {30, 40}}, "mul(in0, in1); tanh(s0)"},
      // Transposed rows longer than a chunk: walked 16 rows at a time, the
      // last tile partial.
      {"ji,ij->ij", {{700, 37}, {37, 700}}, "mul(in0, in1); tanh(s0)"},
      {"kji,ijk->ijk", {{600, 3, 7}, {7, 3, 600}}, "sub(in1, in0)"},
      {",ij->ij", {{}, {5, 6}}, "sub(in0, in1)"},
      {"ij,->ij", {{5, 600}, {}}, "scale(in0, 3); pow(s0, in1)"},
      {",->", {{}, {}}, "add(in0, in1); exp(s0)"},
      {"ij,j->ij", {{0, 8}, {8}}, "add(in0, in1)"},
      {"ijk,k->ijk", {{2, 1, 3}, {3}}, "mul(in0, in1); neg(s0)"},
  };
  for (const FusedCase &c : cases) {
    checkFused<float>(c, 7, 1e-6);
    checkFused<double>(c, 8, 1e-12);
  }
}

TEST(FusedKernel, TheTestsCanFail) {
  // The comparison is not vacuous: a kernel for a different program
  // disagrees with the reference.
  FusedCase c{"ij,j->ij", {{4, 600}, {600}}, "add(in0, in1); gelu(s0)"};
  std::vector<std::vector<float>> inputs = randomInputs<float>(c, 3);
  std::vector<double> expected = referenceFused(c, inputs);
  Result<cpu::FusedKernel> other = cpu::FusedKernel::create(
      *EinsumSpec::parse(c.spec), "add(in0, in1); tanh(s0)", c.shapes,
      ElementType::F32);
  ASSERT_TRUE(other) << other.message();
  const void *pointers[2] = {inputs[0].data(), inputs[1].data()};
  std::vector<float> out(expected.size());
  other->run(pointers, out.data());
  EXPECT_GT(countMismatches(out.data(), expected, 1e-6), 0);
}

TEST(FusedKernel, RejectsBadSignatures) {
  EinsumSpec spec = *EinsumSpec::parse("ij,j->ij");
  Result<cpu::FusedKernel> kernel =
      cpu::FusedKernel::create(spec, "add(in0, in1); gelu(s0)",
                               {{4, 8}, {8}}, ElementType::F16);
  ASSERT_FALSE(kernel);
  EXPECT_NE(kernel.message().find("f16"), std::string::npos);
  kernel = cpu::FusedKernel::create(spec, "add(in0, in2)", {{4, 8}, {8}},
                                    ElementType::F32);
  ASSERT_FALSE(kernel);
  EXPECT_NE(kernel.message().find("invalid join program"), std::string::npos)
      << kernel.message();
  kernel = cpu::FusedKernel::create(*EinsumSpec::parse("ij,jk->ik"),
                                    "mul(in0, in1)", {{4, 8}, {8, 2}},
                                    ElementType::F32);
  ASSERT_FALSE(kernel);
  EXPECT_NE(kernel.message().find("contracts"), std::string::npos);
}

//===----------------------------------------------------------------------===//
// Task graphs, executor, plans, C API
//===----------------------------------------------------------------------===//

TEST(FusedTask, BuilderValidatesAndDescribes) {
  TaskGraph g;
  ValueId x = *g.addInput(0, {4, 8});
  ValueId b = *g.addInput(0, {8});
  ValueId other = *g.addInput(1, {8});
  ValueId wide = *g.addInput(0, {8}, ElementType::F64);
  Result<ValueId> y = g.addFused(0, "bh,h->bh", "add(in0, in1); gelu(s0)",
                                 {x, b});
  ASSERT_TRUE(y) << y.message();
  EXPECT_EQ(g.task(*y).kind, TaskKind::Fused);
  EXPECT_EQ(g.task(*y).shape, (Shape{4, 8}));
  EXPECT_EQ(g.describe(*y), "%" + std::to_string(*y) +
                                " fused bh,h->bh add(in0, in1); gelu(s0)");
  EXPECT_EQ(taskKindName(TaskKind::Fused), "fused");

  auto error = [](const Result<ValueId> &result) {
    return result ? std::string() : result.message();
  };
  std::string message =
      error(g.addFused(0, "bh,h->bh", "add(in0, in1); frob(s0)", {x, b}));
  EXPECT_NE(message.find("fused 'bh,h->bh': invalid join program"),
            std::string::npos)
      << message;
  message = error(g.addFused(0, "bh,h->bh", "add(in0, in1)", {x}));
  EXPECT_NE(message.find("expects 2 operand(s), got 1"), std::string::npos)
      << message;
  message = error(g.addFused(0, "bh,h->bh", "add(in0, in1)", {x, other}));
  EXPECT_NE(message.find("add a transfer"), std::string::npos) << message;
  message = error(g.addFused(0, "bh,h->bh", "add(in0, in1)", {x, wide}));
  EXPECT_NE(message.find("different element types"), std::string::npos)
      << message;
  message = error(g.addFused(0, "bh,hk->bk", "mul(in0, in1)", {x, b}));
  EXPECT_FALSE(message.empty());
  message = error(g.addFused(0, "bh,h->bh", "add(in0, in1)", {x, x}));
  EXPECT_FALSE(message.empty()); // h is 4 in one operand and 8 in the other.
  message = error(g.addFused(-1, "bh,h->bh", "add(in0, in1)", {x, b}));
  EXPECT_NE(message.find("negative"), std::string::npos) << message;
}

/// Bias + GELU + scale over two devices, fused and as three einsums.
struct Chain {
  TaskGraph graph;
  ValueId x = -1, b = -1, out = -1;
};

Chain makeChain(bool fused, int64_t rows, int64_t cols) {
  Chain c;
  c.x = *c.graph.addInput(0, {rows, cols});
  c.b = *c.graph.addInput(1, {cols});
  ValueId bias = *c.graph.onDevice(c.b, 0);
  if (fused) {
    c.out = *c.graph.addFused(0, "bh,h->bh",
                              "add(in0, in1); gelu(s0); scale(s1, 0.5)",
                              {c.x, bias});
  } else {
    ValueId sum =
        *c.graph.addEinsum(0, "bh,h->bh", JoinKind::Add, {}, {c.x, bias});
    ValueId gelu = *c.graph.addEinsum(0, "bh->bh", JoinKind::Gelu, {}, {sum});
    c.out = *c.graph.addEinsum(0, "bh->bh", JoinKind::Scale, {}, {gelu}, 0.5);
  }
  // A consumer on the other device: the fused value moves like any other.
  ValueId moved = *c.graph.onDevice(c.out, 1);
  (void)c.graph.markOutput(moved);
  c.out = moved;
  return c;
}

TEST(FusedTask, RunsOnTheCpuBackendLikeTheEinsumChain) {
  const int64_t rows = 33, cols = 700;
  std::vector<float> x = randomFloats(rows * cols, 5, -3, 3);
  std::vector<float> b = randomFloats(cols, 6, -1, 1);
  CpuBackendOptions options;
  options.numDevices = 2;
  Executor executor(std::move(*createCpuBackend(options)));
  std::vector<std::vector<float>> results;
  for (bool fused : {true, false}) {
    Chain chain = makeChain(fused, rows, cols);
    Result<RunResult> run =
        executor.run(chain.graph, {{chain.x, x.data()}, {chain.b, b.data()}});
    ASSERT_TRUE(run) << run.message();
    const HostTensor &out = run->outputs.at(chain.out);
    results.emplace_back(out.f32(), out.f32() + rows * cols);
  }
  std::vector<double> expected(results[1].begin(), results[1].end());
  std::string first;
  EXPECT_EQ(countMismatches(results[0].data(), expected, 1e-6, &first), 0)
      << first;
}

TEST(FusedTask, PlanJsonRoundTripAndErrors) {
  Plan plan;
  plan.function = "bias_gelu";
  int64_t argX = plan.addArgument(ElementType::F32, {4, 8});
  int64_t argB = plan.addArgument(ElementType::F32, {8});
  ValueId x = *plan.graph.addInput(0, {4, 8});
  ValueId b = *plan.graph.addInput(1, {8});
  ASSERT_TRUE(plan.bindArgument(x, argX).ok());
  ASSERT_TRUE(plan.bindArgument(b, argB).ok());
  ValueId bias = *plan.graph.onDevice(b, 0);
  ValueId y =
      *plan.graph.addFused(0, "bh,h->bh", "add(in0, in1); gelu(s0)", {x, bias});
  ASSERT_TRUE(plan.addResult(y).ok());
  std::string text = planToJson(plan);
  EXPECT_NE(text.find("\"kind\":\"fused\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"program\":\"add(in0, in1); gelu(s0)\""),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\"spec\":\"bh,h->bh\""), std::string::npos) << text;
  Result<Plan> loaded = planFromJson(text, "plan.json");
  ASSERT_TRUE(loaded) << loaded.message();
  EXPECT_EQ(planToJson(*loaded), text);
  const Task &task = loaded->graph.task(y);
  EXPECT_EQ(task.kind, TaskKind::Fused);
  EXPECT_EQ(task.program, plan.graph.task(y).program);

  auto errorOf = [](const std::string &json) {
    Result<Plan> result = planFromJson(json, "plan.json");
    return result ? std::string() : result.message();
  };
  std::string bad = text;
  bad.replace(bad.find("gelu(s0)"), 8, "gelu(s7)");
  std::string message = errorOf(bad);
  EXPECT_NE(message.find("plan.json: tasks[" + std::to_string(y) + "]"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("invalid join program"), std::string::npos)
      << message;
  EXPECT_EQ(message.find('\n'), std::string::npos);

  std::string missing = text;
  size_t at = missing.find("\"program\":");
  ASSERT_NE(at, std::string::npos);
  missing.replace(at, 10, "\"programme\":");
  message = errorOf(missing);
  EXPECT_NE(message.find("program"), std::string::npos) << message;
}

TEST(FusedTask, CApi) {
  DopplerRtGraph *g = dopplerRtGraphCreate();
  ASSERT_NE(g, nullptr);
  int64_t xShape[2] = {3, 5}, bShape[1] = {5};
  DopplerRtValue in[2];
  in[0] = dopplerRtGraphAddInput(g, 0, DOPPLER_RT_F64, xShape, 2);
  in[1] = dopplerRtGraphAddInput(g, 0, DOPPLER_RT_F64, bShape, 1);
  DopplerRtValue y = dopplerRtGraphAddFused(g, 0, "bh,h->bh",
                                            "sub(in0, in1); square(s0)", in, 2);
  ASSERT_GE(y, 0) << dopplerRtGraphError(g);
  EXPECT_LT(dopplerRtGraphAddFused(g, 0, "bh,h->bh", "nope(in0)", in, 2), 0);
  EXPECT_NE(std::string(dopplerRtGraphError(g)).find("nope"),
            std::string::npos);
  EXPECT_LT(dopplerRtGraphAddFused(g, 0, "bh,h->bh", nullptr, in, 2), 0);
  EXPECT_LT(dopplerRtGraphAddFused(g, 0, "bh,h->bh", "add(in0, in1)", nullptr,
                                   2),
            0);
  ASSERT_EQ(dopplerRtGraphMarkOutput(g, y), 0);

  DopplerRtExecutor *e = dopplerRtCpuExecutorCreate(1, 0, 0);
  ASSERT_NE(e, nullptr);
  std::vector<double> x = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  std::vector<double> b = {1, 1, 2, 2, 3};
  const void *data[2] = {x.data(), b.data()};
  DopplerRtRun *run = dopplerRtExecutorRun(e, g, in, data, 2);
  ASSERT_NE(run, nullptr);
  ASSERT_EQ(dopplerRtRunError(run), nullptr) << dopplerRtRunError(run);
  std::vector<double> out(15);
  ASSERT_EQ(
      dopplerRtRunReadOutput(run, y, out.data(), out.size() * sizeof(double)),
      0);
  for (int i = 0; i < 15; ++i) {
    double d = x[i] - b[i % 5];
    EXPECT_EQ(out[i], d * d) << i;
  }
  dopplerRtRunDestroy(run);
  dopplerRtExecutorDestroy(e);
  dopplerRtGraphDestroy(g);
}

} // namespace
