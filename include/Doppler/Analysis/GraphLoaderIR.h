//===- GraphLoaderIR.h - The function loadPlacementGraph places -*- C++ -*-===//
//
// The MLIR side of GraphLoader.h, for tools that need the IR the graph was
// built from (doppler-train's runtime oracle): the same function, costed the
// same way, so node ids map to the same ops.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_TARGET_GRAPHLOADERIR_H
#define DOPPLER_TARGET_GRAPHLOADERIR_H

#include "Doppler/Analysis/GraphLoader.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include <string>

namespace doppler {

/// The function of `module` (parsed from `path`) that loadPlacementGraph
/// places: the first with a body, or the one named options.function; ops
/// without costs are costed for options.system (doppler-annotate-costs).
/// On failure `error` says why (diagnostics, if any, went to the context).
mlir::FailureOr<mlir::FunctionOpInterface>
selectCostedFunction(mlir::ModuleOp module, const std::string &path,
                     const GraphLoadOptions &options, std::string *error);

/// "file:line:col: message" (or the location as MLIR prints it): one
/// diagnostic as a one-line error for tools that report in text.
std::string describeDiagnostic(mlir::Diagnostic &diagnostic);

} // namespace doppler

#endif // DOPPLER_TARGET_GRAPHLOADERIR_H
