//===- doppler-translate.cpp - Doppler's mlir-translate -------------------===//
//
// Imports reference-format graphs and exports simulated schedules (Chrome
// trace, DOT, SVG Gantt chart).
//
//===----------------------------------------------------------------------===//

#include "Doppler/Target/Translations.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  mlir::doppler::registerDopplerTranslations();
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "Doppler translation driver\n"));
}
