//===- Registration.cpp - doppler-translate's translations ----------------===//

#include "Doppler/Dialect/DopplerDialect.h"
#include "Doppler/Target/Translations.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

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
}
