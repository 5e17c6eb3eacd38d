//===- DialectTest.cpp - Doppler ops through the C++ API ------------------===//

#include "Doppler/Dialect/DopplerOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::doppler;

namespace {

class DopplerDialectTest : public ::testing::Test {
protected:
  DopplerDialectTest() {
    context.loadDialect<DopplerDialect, func::FuncDialect>();
  }

  OwningOpRef<ModuleOp> parse(StringRef text) {
    return parseSourceString<ModuleOp>(text, &context);
  }

  MLIRContext context;
};

TEST_F(DopplerDialectTest, EnumsMatchSupportLibraryByName) {
  for (uint32_t i = 0; i <= getMaxEnumValForJoinKind(); ++i) {
    auto kind = static_cast<JoinKind>(i);
    EXPECT_EQ(::doppler::joinKindName(toSupport(kind)),
              stringifyJoinKind(kind).str());
  }
  EXPECT_EQ(getMaxEnumValForJoinKind() + 1, ::doppler::kNumJoinKinds);
  for (uint32_t i = 0; i <= getMaxEnumValForAggKind(); ++i) {
    auto kind = static_cast<AggKind>(i);
    EXPECT_EQ(::doppler::aggKindName(toSupport(kind)),
              stringifyAggKind(kind).str());
  }
  EXPECT_EQ(getMaxEnumValForAggKind() + 1, ::doppler::kNumAggKinds);
  for (uint32_t i = 0; i <= getMaxEnumValForPoolKind(); ++i) {
    auto kind = static_cast<PoolKind>(i);
    EXPECT_EQ(::doppler::poolKindName(static_cast<::doppler::PoolKind>(i)),
              stringifyPoolKind(kind).str());
  }
}

TEST_F(DopplerDialectTest, WindowOpsReportTheirWork) {
  OwningOpRef<ModuleOp> module = parse(R"mlir(
    func.func @w(%x: tensor<2x6x8x8xf32>, %k: tensor<4x3x3x3xf32>)
        -> (tensor<2x4x4x4xf32>, tensor<2x6x4x4xf32>) {
      %y = doppler.conv %x, %k strides [2, 2] dilations [1, 1] padding [1, 1, 1, 1] groups 2
          : (tensor<2x6x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x4x4xf32>
      %p = doppler.pool max %x kernel [3, 3] strides [2, 2] dilations [1, 1] padding [1, 1, 0, 0]
          : tensor<2x6x8x8xf32> -> tensor<2x6x4x4xf32>
      return %y, %p : tensor<2x4x4x4xf32>, tensor<2x6x4x4xf32>
    })mlir");
  ASSERT_TRUE(module);
  int windows = 0;
  module->walk([&](ConvOp conv) {
    ++windows;
    auto work = cast<WorkOpInterface>(conv.getOperation());
    // 2 FLOPs per multiply-add: N F O^2 (C / G) K^2.
    EXPECT_DOUBLE_EQ(work.getFlops(), 2.0 * 2 * 4 * 16 * 3 * 9);
    EXPECT_DOUBLE_EQ(work.getBytesRead(), 4.0 * (2 * 6 * 64 + 4 * 3 * 9));
    EXPECT_DOUBLE_EQ(work.getBytesWritten(), 4.0 * 2 * 4 * 16);
    ::doppler::WindowGeometry g = conv.getGeometry();
    EXPECT_EQ(g.kernel, (std::vector<int64_t>{3, 3}));
    EXPECT_EQ(g.padLow, (std::vector<int64_t>{1, 1}));
  });
  module->walk([&](PoolOp pool) {
    ++windows;
    auto work = cast<WorkOpInterface>(pool.getOperation());
    EXPECT_DOUBLE_EQ(work.getFlops(), 9.0 * 2 * 6 * 16);
    EXPECT_DOUBLE_EQ(work.getBytesRead(), 4.0 * 2 * 6 * 64);
    ::doppler::WindowGeometry g = pool.getGeometry();
    EXPECT_EQ(g.padLow, (std::vector<int64_t>{1, 1}));
    EXPECT_EQ(g.padHigh, (std::vector<int64_t>{0, 0}));
  });
  EXPECT_EQ(windows, 2);
}

TEST_F(DopplerDialectTest, BuildsAndVerifiesMatmulWithReportedWork) {
  OpBuilder builder(&context);
  Location loc = builder.getUnknownLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  builder.setInsertionPointToEnd(module->getBody());
  auto lhsType = RankedTensorType::get({64, 128}, builder.getF32Type());
  auto rhsType = RankedTensorType::get({128, 32}, builder.getF32Type());
  auto outType = RankedTensorType::get({64, 32}, builder.getF32Type());
  auto func = func::FuncOp::create(
      builder, loc, "mm", builder.getFunctionType({lhsType, rhsType}, {outType}));
  Block *body = func.addEntryBlock();
  builder.setInsertionPointToEnd(body);
  auto einsum = EinsumOp::create(
      builder, loc, outType, builder.getStringAttr("ij,jk->ik"),
      JoinKindAttr::get(&context, JoinKind::Mul),
      AggKindAttr::get(&context, AggKind::Add), FloatAttr(),
      ValueRange{body->getArgument(0), body->getArgument(1)});
  func::ReturnOp::create(builder, loc, einsum.getResult());
  ASSERT_TRUE(succeeded(verify(*module)));

  auto work = cast<WorkOpInterface>(einsum.getOperation());
  EXPECT_DOUBLE_EQ(work.getFlops(), 2.0 * 64 * 128 * 32);
  EXPECT_DOUBLE_EQ(work.getBytesRead(), 4.0 * (64 * 128 + 128 * 32));
  EXPECT_DOUBLE_EQ(work.getBytesWritten(), 4.0 * 64 * 32);
  EXPECT_EQ(einsum.getIndexSizes().sizeOf('j'), 128);
}

TEST_F(DopplerDialectTest, GlueOpsReportBytesMovedAndNoFlops) {
  OwningOpRef<ModuleOp> module = parse(R"mlir(
    func.func @g(%x: tensor<8x16xf16>) -> tensor<8x16xf16> {
      %l = doppler.slice %x [0, 0] : tensor<8x16xf16> to tensor<8x8xf16>
      %r = doppler.slice %x [0, 8] : tensor<8x16xf16> to tensor<8x8xf16>
      %y = doppler.assemble [1, 2] (%r, %l) : tensor<8x8xf16>, tensor<8x8xf16> -> tensor<8x16xf16>
      %t = doppler.transfer %y from <0> to <3> : tensor<8x16xf16>
      %v = doppler.reshape %t : tensor<8x16xf16> -> tensor<2x4x16xf16>
      %w = doppler.reshape %v : tensor<2x4x16xf16> -> tensor<8x16xf16>
      return %w : tensor<8x16xf16>
    })mlir");
  ASSERT_TRUE(module);
  double sliceBytes = 0;
  int reshapes = 0;
  module->walk([&](WorkOpInterface op) {
    EXPECT_EQ(op.getFlops(), 0.0);
    if (isa<SliceOp>(op))
      sliceBytes += op.getBytesWritten();
    if (isa<TransferOp, AssembleOp>(op)) {
      EXPECT_DOUBLE_EQ(op.getBytesWritten(), 8 * 16 * 2);
    }
    // A reshape is costed as the copy the runtime makes.
    if (isa<ReshapeOp>(op)) {
      ++reshapes;
      EXPECT_DOUBLE_EQ(op.getBytesRead(), 8 * 16 * 2);
      EXPECT_DOUBLE_EQ(op.getBytesWritten(), 8 * 16 * 2);
    }
  });
  EXPECT_EQ(reshapes, 2);
  EXPECT_DOUBLE_EQ(sliceBytes, 2 * 8 * 8 * 2);
}

TEST_F(DopplerDialectTest, AssembleBlockOffsetsFollowTheGrid) {
  OwningOpRef<ModuleOp> module = parse(R"mlir(
    func.func @g(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>,
                 %c: tensor<4x3xf32>, %d: tensor<4x5xf32>) -> tensor<6x8xf32> {
      %y = doppler.assemble [2, 2] (%a, %b, %c, %d)
          : tensor<2x3xf32>, tensor<2x5xf32>, tensor<4x3xf32>, tensor<4x5xf32> -> tensor<6x8xf32>
      return %y : tensor<6x8xf32>
    })mlir");
  ASSERT_TRUE(module);
  AssembleOp assemble;
  module->walk([&](AssembleOp op) { assemble = op; });
  ASSERT_TRUE(assemble);
  EXPECT_EQ(assemble.getBlockOffsets(0), (SmallVector<int64_t>{0, 0}));
  EXPECT_EQ(assemble.getBlockOffsets(1), (SmallVector<int64_t>{0, 3}));
  EXPECT_EQ(assemble.getBlockOffsets(2), (SmallVector<int64_t>{2, 0}));
  EXPECT_EQ(assemble.getBlockOffsets(3), (SmallVector<int64_t>{2, 3}));
}

TEST_F(DopplerDialectTest, DeviceAttributeRoundTripsAndRejectsNegativeIds) {
  auto device = DeviceAttr::get(&context, 3);
  EXPECT_EQ(device.getId(), 3);
  std::string printed;
  llvm::raw_string_ostream os(printed);
  Attribute(device).print(os);
  EXPECT_EQ(printed, "#doppler.device<3>");
  context.printOpOnDiagnostic(false);
  std::string diagnostics;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
    diagnostics += d.str();
    return success();
  });
  EXPECT_FALSE(parse("func.func @f() attributes {x = #doppler.device<-1>} { return }"));
  EXPECT_NE(diagnostics.find("device id must be non-negative"), std::string::npos);
}

} // namespace
