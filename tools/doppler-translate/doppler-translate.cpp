//===- doppler-translate.cpp - Doppler's mlir-translate -------------------===//
//
// Imports reference-format graphs and exports simulated schedules (Chrome
// trace, DOT, SVG Gantt chart).
//
//===----------------------------------------------------------------------===//

#include "Doppler/Target/Translations.h"
#include "Doppler/Support/ReadFile.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"


#include <cstring>

int main(int argc, char **argv) {
  // MLIR's translate driver reads its whole input into memory and registers
  // its options only when it runs, so the positional input is found here by
  // hand: an argument that is not an option nor the value of "-o". Endless
  // or huge inputs (/dev/zero) are refused before the driver starts.
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "-o") == 0 || std::strcmp(argv[i], "--o") == 0) {
      ++i;
      continue;
    }
    if (argv[i][0] == '-' && argv[i][1] != '\0')
      continue;
    if (std::optional<std::string> error =
            doppler::unboundedInputError(argv[i])) {
      llvm::errs() << "doppler-translate: error: " << *error << "\n";
      return 1;
    }
  }
  mlir::doppler::registerDopplerTranslations();
  // libLLVM registers hundreds of backend options at load time: hide them
  // from --help. mlirTranslateMain registers the translations, the I/O and
  // MLIR's options when it runs, after this, so those stay visible.
  static llvm::cl::OptionCategory noOptions("Doppler translate options");
  llvm::cl::HideUnrelatedOptions(noOptions);
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "Doppler translation driver\n"));
}
