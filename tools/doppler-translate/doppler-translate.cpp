//===- doppler-translate.cpp - Doppler's mlir-translate -------------------===//
//
// Imports reference-format graphs and exports simulated schedules (Chrome
// trace, DOT, SVG Gantt chart).
//
//===----------------------------------------------------------------------===//

#include "Doppler/Target/Translations.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "llvm/Support/CommandLine.h"

int main(int argc, char **argv) {
  mlir::doppler::registerDopplerTranslations();
  // libLLVM registers hundreds of backend options at load time: hide them
  // from --help. mlirTranslateMain registers the translations, the I/O and
  // MLIR's options when it runs, after this, so those stay visible.
  static llvm::cl::OptionCategory noOptions("Doppler translate options");
  llvm::cl::HideUnrelatedOptions(noOptions);
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "Doppler translation driver\n"));
}
