//===- Translations.h - doppler-translate registrations ---------*- C++ -*-===//
//
// Import of the reference graph format and exports of placed, simulated
// functions (Chrome trace, Graphviz DOT, SVG Gantt chart), and of placed
// functions as IREE input (--export-iree).
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_TARGET_TRANSLATIONS_H
#define DOPPLER_TARGET_TRANSLATIONS_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir::doppler {

/// Registers --import-doppler-graph, --export-chrome-trace, --export-dot and
/// --export-svg-gantt with mlir-translate's registry.
void registerDopplerTranslations();

/// Parses a reference-format graph into a module holding one function of
/// `doppler.task` ops (in node-id order; sinks returned). Errors go to the
/// context's diagnostic handler.
OwningOpRef<ModuleOp> importReferenceGraph(llvm::StringRef text,
                                           llvm::StringRef bufferName,
                                           MLIRContext *context);

/// Exports of every placed and simulated function in `module` (ops carry
/// doppler.device, doppler.start and doppler.end).
LogicalResult exportChromeTrace(ModuleOp module, llvm::raw_ostream &os);
LogicalResult exportDot(ModuleOp module, llvm::raw_ostream &os);
LogicalResult exportSvgGantt(ModuleOp module, llvm::raw_ostream &os);

/// Options of --export-iree.
struct IREEExportOptions {
  /// The HAL device every Doppler device becomes: #hal.device.alias<"KIND"[i]>
  /// (local, cuda, hip, vulkan...).
  std::string deviceKind = "local";
  /// Declare at least this many devices (default: the highest used + 1).
  int64_t numDevices = 0;
};

/// Writes `module` (placed functions) as MLIR text for iree-compile 3.13:
/// linalg on tensors, flow.tensor.transfer for every move, one module
/// global per device, iree.abi.affinity on arguments and results, and
/// locations naming the Doppler op and its device. `module` is unchanged.
/// One error per op it cannot export.
LogicalResult exportIREE(ModuleOp module, llvm::raw_ostream &os,
                         const IREEExportOptions &options = {});

} // namespace mlir::doppler

#endif // DOPPLER_TARGET_TRANSLATIONS_H
