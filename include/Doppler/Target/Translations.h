//===- Translations.h - doppler-translate registrations ---------*- C++ -*-===//
//
// Import of the reference graph format and exports of placed, simulated
// functions (Chrome trace, Graphviz DOT, SVG Gantt chart).
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_TARGET_TRANSLATIONS_H
#define DOPPLER_TARGET_TRANSLATIONS_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

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

} // namespace mlir::doppler

#endif // DOPPLER_TARGET_TRANSLATIONS_H
