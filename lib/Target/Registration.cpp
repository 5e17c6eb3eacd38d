//===- Registration.cpp - doppler-translate's translations ----------------===//

#include "Doppler/Dialect/DopplerDialect.h"
#include "Doppler/Target/Translations.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

namespace {
llvm::cl::opt<std::string> ireeDeviceKind(
    "export-iree-device",
    llvm::cl::desc("--export-iree: the HAL device kind of every Doppler "
                   "device (local, cuda, hip, vulkan...)"),
    llvm::cl::init("local"));
llvm::cl::opt<int64_t> ireeDevices(
    "export-iree-devices",
    llvm::cl::desc("--export-iree: declare at least this many devices "
                   "(default: the highest device used + 1)"),
    llvm::cl::init(0));
} // namespace

void mlir::doppler::registerDopplerTranslations() {
  TranslateToMLIRRegistration importGraph(
      "import-doppler-graph",
      "Import a reference-format graph (.txt) as doppler.task ops",
      [](llvm::SourceMgr &sourceMgr, MLIRContext *context) {
        const llvm::MemoryBuffer *buffer =
            sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
        return importReferenceGraph(buffer->getBuffer(),
                                    buffer->getBufferIdentifier(), context);
      });
  auto dialects = [](DialectRegistry &registry) {
    registry.insert<DopplerDialect, func::FuncDialect, arith::ArithDialect,
                    linalg::LinalgDialect, tensor::TensorDialect>();
  };
  TranslateFromMLIRRegistration chromeTrace(
      "export-chrome-trace",
      "Export a simulated schedule as Chrome trace JSON (Perfetto)",
      [](Operation *op, llvm::raw_ostream &os) {
        return exportChromeTrace(cast<ModuleOp>(op), os);
      },
      dialects);
  TranslateFromMLIRRegistration dot(
      "export-dot", "Export the graph as Graphviz DOT, coloured by device",
      [](Operation *op, llvm::raw_ostream &os) {
        return exportDot(cast<ModuleOp>(op), os);
      },
      dialects);
  TranslateFromMLIRRegistration svg(
      "export-svg-gantt",
      "Export a simulated schedule as an SVG Gantt chart",
      [](Operation *op, llvm::raw_ostream &os) {
        return exportSvgGantt(cast<ModuleOp>(op), os);
      },
      dialects);
  TranslateFromMLIRRegistration iree(
      "export-iree",
      "Export placed functions as linalg with flow.tensor.transfer moves and "
      "declared devices, for iree-compile",
      [](Operation *op, llvm::raw_ostream &os) {
        IREEExportOptions options;
        options.deviceKind = ireeDeviceKind;
        options.numDevices = ireeDevices;
        return exportIREE(cast<ModuleOp>(op), os, options);
      },
      [](DialectRegistry &registry) {
        registry.insert<DopplerDialect, func::FuncDialect, arith::ArithDialect,
                        linalg::LinalgDialect, math::MathDialect,
                        tensor::TensorDialect>();
      });
}
