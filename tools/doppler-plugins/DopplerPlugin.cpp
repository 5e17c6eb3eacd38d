//===- DopplerPlugin.cpp - Doppler as plugins of a stock mlir-opt ---------===//
//
// One shared library with both plugin entry points of MLIR 22:
//
//   mlir-opt-22 --load-dialect-plugin=build/lib/DopplerPlugin.so
//               --load-pass-plugin=build/lib/DopplerPlugin.so
//               in.mlir --doppler-pipeline="system=cpu4 devices=2"
//
// The dialect entry point registers the doppler dialect (and the dialects
// its passes create: arith, func, linalg, math, tensor); the pass entry
// point registers every doppler pass, the doppler-pipeline and the
// conversion passes (convert-doppler-to-linalg, ...). The library links
// libMLIR.so, the copy of MLIR the stock tool runs on, never MLIR's static
// libraries (see CMakeLists.txt beside this file).
//
//===----------------------------------------------------------------------===//

#include "Doppler/Conversion/Passes.h"
#include "Doppler/Dialect/DopplerDialect.h"
#include "Doppler/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Compiler.h"

using namespace mlir;

extern "C" LLVM_ATTRIBUTE_WEAK DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "Doppler", LLVM_VERSION_STRING,
          [](DialectRegistry *registry) {
            registry->insert<mlir::doppler::DopplerDialect, arith::ArithDialect,
                             func::FuncDialect, linalg::LinalgDialect,
                             math::MathDialect, tensor::TensorDialect>();
          }};
}

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "DopplerPasses", LLVM_VERSION_STRING, []() {
            mlir::doppler::registerDopplerPasses();
            mlir::doppler::registerDopplerPipeline();
            mlir::doppler::registerDopplerConversionPasses();
          }};
}
