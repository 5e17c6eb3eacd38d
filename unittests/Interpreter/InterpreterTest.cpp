//===- InterpreterTest.cpp - The reference interpreter against loops ------===//

#include "Doppler/Interpreter/Interpreter.h"

#include "Doppler/Dialect/DopplerOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::doppler;

namespace {

class InterpreterTest : public ::testing::Test {
protected:
  InterpreterTest() {
    context.loadDialect<DopplerDialect, func::FuncDialect>();
    context.printOpOnDiagnostic(false);
  }

  func::FuncOp parseFunction(StringRef text) {
    module = parseSourceString<ModuleOp>(text, &context);
    if (!module)
      return {};
    FailureOr<func::FuncOp> function = lookupFunction(*module, "");
    return succeeded(function) ? *function : func::FuncOp();
  }

  /// Runs the only function of `text` on seeded random inputs.
  SmallVector<HostTensor> run(StringRef text, SmallVector<HostTensor> &inputs,
                              uint64_t seed = 1) {
    func::FuncOp function = parseFunction(text);
    EXPECT_TRUE(function);
    if (!function)
      return {};
    FailureOr<SmallVector<HostTensor>> random =
        makeRandomInputs(function, seed);
    EXPECT_TRUE(succeeded(random));
    inputs = *random;
    FailureOr<SmallVector<HostTensor>> outputs = interpret(function, inputs);
    EXPECT_TRUE(succeeded(outputs));
    return succeeded(outputs) ? *outputs : SmallVector<HostTensor>();
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

TEST_F(InterpreterTest, BatchedContractionWithPermutedOutputMatchesLoops) {
  SmallVector<HostTensor> in;
  SmallVector<HostTensor> out = run(R"mlir(
    func.func @f(%a: tensor<2x3x4xf64>, %b: tensor<2x4x5xf64>) -> tensor<5x2x3xf64> {
      %c = doppler.einsum "bij,bjk->kbi" join(mul) agg(add) (%a, %b)
          : (tensor<2x3x4xf64>, tensor<2x4x5xf64>) -> tensor<5x2x3xf64>
      return %c : tensor<5x2x3xf64>
    })mlir",
                                    in);
  ASSERT_EQ(out.size(), 1u);
  const std::vector<double> &a = in[0].data, &b = in[1].data, &c = out[0].data;
  for (int bb = 0; bb < 2; ++bb)
    for (int i = 0; i < 3; ++i)
      for (int k = 0; k < 5; ++k) {
        double expected = 0;
        for (int j = 0; j < 4; ++j)
          expected += a[(bb * 3 + i) * 4 + j] * b[(bb * 4 + j) * 5 + k];
        EXPECT_NEAR(c[(k * 2 + bb) * 3 + i], expected, 1e-12);
      }
}

TEST_F(InterpreterTest, BroadcastJoinsAndEveryAggregationMatchLoops) {
  SmallVector<HostTensor> in;
  SmallVector<HostTensor> out = run(R"mlir(
    func.func @f(%x: tensor<3x4xf64>, %v: tensor<4xf64>)
        -> (tensor<3x4xf64>, tensor<4xf64>, tensor<3xf64>, tensor<3xf64>, tensor<f64>) {
      %d = doppler.einsum "ij,j->ij" join(sub) (%x, %v) : (tensor<3x4xf64>, tensor<4xf64>) -> tensor<3x4xf64>
      %s = doppler.einsum "ij->j" join(square) agg(add) (%x) : (tensor<3x4xf64>) -> tensor<4xf64>
      %m = doppler.einsum "ij->i" join(identity) agg(max) (%x) : (tensor<3x4xf64>) -> tensor<3xf64>
      %p = doppler.einsum "ij->i" join(identity) agg(mul) (%x) : (tensor<3x4xf64>) -> tensor<3xf64>
      %n = doppler.einsum "ij->" join(identity) agg(min) (%x) : (tensor<3x4xf64>) -> tensor<f64>
      return %d, %s, %m, %p, %n : tensor<3x4xf64>, tensor<4xf64>, tensor<3xf64>, tensor<3xf64>, tensor<f64>
    })mlir",
                                    in);
  ASSERT_EQ(out.size(), 5u);
  const std::vector<double> &x = in[0].data, &v = in[1].data;
  double minimum = std::numeric_limits<double>::infinity();
  for (int i = 0; i < 3; ++i) {
    double maximum = -std::numeric_limits<double>::infinity(), product = 1;
    for (int j = 0; j < 4; ++j) {
      double value = x[i * 4 + j];
      EXPECT_DOUBLE_EQ(out[0].data[i * 4 + j], value - v[j]);
      maximum = std::max(maximum, value);
      product *= value;
      minimum = std::min(minimum, value);
    }
    EXPECT_DOUBLE_EQ(out[2].data[i], maximum);
    EXPECT_NEAR(out[3].data[i], product, 1e-15);
  }
  for (int j = 0; j < 4; ++j) {
    double sum = 0;
    for (int i = 0; i < 3; ++i)
      sum += x[i * 4 + j] * x[i * 4 + j];
    EXPECT_NEAR(out[1].data[j], sum, 1e-12);
  }
  EXPECT_DOUBLE_EQ(out[4].data[0], minimum);
}

TEST_F(InterpreterTest, SlicesReassembleToTheirSource) {
  SmallVector<HostTensor> in;
  SmallVector<HostTensor> out = run(R"mlir(
    func.func @f(%x: tensor<5x7xf32>) -> tensor<5x7xf32> {
      %a = doppler.slice %x [0, 0] : tensor<5x7xf32> to tensor<2x3xf32>
      %b = doppler.slice %x [0, 3] : tensor<5x7xf32> to tensor<2x4xf32>
      %c = doppler.slice %x [2, 0] : tensor<5x7xf32> to tensor<3x3xf32>
      %d = doppler.slice %x [2, 3] : tensor<5x7xf32> to tensor<3x4xf32>
      %y = doppler.assemble [2, 2] (%a, %b, %c, %d)
          : tensor<2x3xf32>, tensor<2x4xf32>, tensor<3x3xf32>, tensor<3x4xf32> -> tensor<5x7xf32>
      return %y : tensor<5x7xf32>
    })mlir",
                                    in);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].data, in[0].data);
  EXPECT_EQ(relativeError(out[0], in[0]), 0.0);
}

TEST_F(InterpreterTest, ReshapeKeepsRowMajorOrder) {
  SmallVector<HostTensor> in;
  // Row sums of the [2, 3] view of a 6-vector read x[0..2] and x[3..5];
  // a reshape back is the input itself.
  SmallVector<HostTensor> out = run(R"mlir(
    func.func @f(%x: tensor<6xf32>) -> (tensor<2x3xf32>, tensor<2xf32>, tensor<6xf32>) {
      %v = doppler.reshape %x : tensor<6xf32> -> tensor<2x3xf32>
      %r = doppler.einsum "ij->i" join(identity) agg(add) (%v) : (tensor<2x3xf32>) -> tensor<2xf32>
      %b = doppler.reshape %v : tensor<2x3xf32> -> tensor<6xf32>
      return %v, %r, %b : tensor<2x3xf32>, tensor<2xf32>, tensor<6xf32>
    })mlir",
                                    in);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].shape, (SmallVector<int64_t>{2, 3}));
  EXPECT_EQ(out[0].data, in[0].data);
  const std::vector<double> &x = in[0].data;
  EXPECT_FLOAT_EQ(out[1].data[0], static_cast<float>(x[0] + x[1] + x[2]));
  EXPECT_FLOAT_EQ(out[1].data[1], static_cast<float>(x[3] + x[4] + x[5]));
  EXPECT_EQ(out[2].data, in[0].data);
  EXPECT_EQ(out[2].shape, (SmallVector<int64_t>{6}));
}

TEST_F(InterpreterTest, RandomInputsAreSeededRoundedAndInRange) {
  func::FuncOp function = parseFunction(R"mlir(
    func.func @f(%x: tensor<1000xf32>, %y: tensor<10x10xbf16>) -> tensor<1000xf32> {
      return %x : tensor<1000xf32>
    })mlir");
  ASSERT_TRUE(function);
  FailureOr<SmallVector<HostTensor>> a = makeRandomInputs(function, 5);
  FailureOr<SmallVector<HostTensor>> b = makeRandomInputs(function, 5);
  FailureOr<SmallVector<HostTensor>> c = makeRandomInputs(function, 6);
  ASSERT_TRUE(succeeded(a) && succeeded(b) && succeeded(c));
  EXPECT_EQ((*a)[0].data, (*b)[0].data);
  EXPECT_NE((*a)[0].data, (*c)[0].data);
  for (const HostTensor &tensor : *a)
    for (double value : tensor.data) {
      EXPECT_GE(value, -1.0);
      EXPECT_LE(value, 1.0);
      EXPECT_EQ(value, roundToType(tensor.elementType, value));
    }
}

TEST_F(InterpreterTest, RoundsToTheElementType) {
  Builder builder(&context);
  EXPECT_EQ(roundToType(builder.getF64Type(), 1.0 / 3), 1.0 / 3);
  EXPECT_EQ(roundToType(builder.getF32Type(), 1.0 / 3),
            static_cast<double>(1.0f / 3));
  EXPECT_EQ(roundToType(builder.getBF16Type(), 1.0 / 3), 0.333984375);
  EXPECT_EQ(roundToType(builder.getF16Type(), 65520.0),
            std::numeric_limits<double>::infinity());
}

TEST_F(InterpreterTest, RelativeErrorTreatsMatchingNonFiniteValuesAsEqual) {
  Builder builder(&context);
  HostTensor ref{builder.getF64Type(), {3}, {3.0, NAN, INFINITY}};
  HostTensor out = ref;
  EXPECT_EQ(relativeError(out, ref), 0.0);
  out.data[0] = 3.3;
  EXPECT_NEAR(relativeError(out, ref), 0.1, 1e-12);
  out.data[2] = -INFINITY;
  EXPECT_TRUE(std::isinf(relativeError(out, ref)));
  HostTensor zeros{builder.getF64Type(), {2}, {0.0, 0.0}};
  HostTensor small{builder.getF64Type(), {2}, {3e-9, 4e-9}};
  EXPECT_NEAR(relativeError(small, zeros), 5e-9, 1e-20); // absolute
  HostTensor other{builder.getF64Type(), {1, 2}, {0.0, 0.0}};
  EXPECT_TRUE(std::isinf(relativeError(other, zeros)));
}

TEST_F(InterpreterTest, UnsupportedInputFailsWithADiagnostic) {
  std::string diagnostics;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
    diagnostics += d.str() + "\n";
    return success();
  });
  func::FuncOp function = parseFunction(R"mlir(
    func.func @f(%x: tensor<4xf32>) -> !doppler.value {
      %t = doppler.task "input" compute(1.0) transfer(1.0)
      return %t : !doppler.value
    })mlir");
  ASSERT_TRUE(function);
  FailureOr<SmallVector<HostTensor>> inputs = makeRandomInputs(function, 0);
  ASSERT_TRUE(succeeded(inputs));
  EXPECT_TRUE(failed(interpret(function, *inputs)));
  EXPECT_NE(diagnostics.find("cost-only op"), std::string::npos);

  // Inputs of the wrong shape or count are rejected, not read out of bounds.
  Builder builder(&context);
  HostTensor wrong{builder.getF32Type(), {5}, std::vector<double>(5, 0.0)};
  EXPECT_TRUE(failed(interpret(function, {wrong})));
  EXPECT_NE(diagnostics.find("has type 'tensor<4xf32>' but the input given "
                             "has type 'tensor<5xf32>'"),
            std::string::npos);
  EXPECT_TRUE(failed(interpret(function, {})));
  EXPECT_NE(diagnostics.find("takes 1 argument(s) but 0 were given"),
            std::string::npos);
  EXPECT_TRUE(failed(lookupFunction(*module, "nope")));
  EXPECT_NE(diagnostics.find("no function named @nope"), std::string::npos);
}

} // namespace
