//===- doppler-opt.cpp - Doppler's mlir-opt -------------------------------===//
//
// mlir-opt with the Doppler dialect and passes, and the upstream dialects
// users feed it. Only the dialects it parses are registered: registering all
// of them makes a 100 MB binary that links for long.
//
//===----------------------------------------------------------------------===//

#include "Doppler/Conversion/Passes.h"
#include "Doppler/Dialect/DopplerDialect.h"
#include "Doppler/Dialect/LinalgWorkModels.h"
#include "Doppler/Support/ReadFile.h"
#include "Doppler/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/raw_ostream.h"


int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::doppler::DopplerDialect, mlir::arith::ArithDialect,
                  mlir::func::FuncDialect, mlir::linalg::LinalgDialect,
                  mlir::tensor::TensorDialect>();
  // What doppler-lower-to-runtime produces, so that its output parses again.
  registry.insert<mlir::LLVM::LLVMDialect>();
  // Work (FLOPs, bytes) of the linalg/tensor ops a conversion leaves.
  mlir::doppler::registerLinalgWorkModels(registry);
  mlir::doppler::registerDopplerPasses();
  mlir::doppler::registerDopplerPipeline();
  mlir::doppler::registerDopplerConversionPasses();
  // Generic cleanups users chain with ours (canonicalize, cse, ...).
  mlir::registerTransformsPasses();
  auto [inputFilename, outputFilename] = mlir::registerAndParseCLIOptions(
      argc, argv, "Doppler optimizer driver\n", registry);
  // MLIR's driver reads its whole input into memory: refuse endless or huge
  // inputs (/dev/zero) before it starts.
  if (std::optional<std::string> error =
          doppler::unboundedInputError(inputFilename)) {
    llvm::errs() << "doppler-opt: error: " << *error << "\n";
    return 1;
  }
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, inputFilename, outputFilename, registry));
}
