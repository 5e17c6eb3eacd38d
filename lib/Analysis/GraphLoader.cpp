//===- GraphLoader.cpp - Placement graphs from any supported file ---------===//

#include "Doppler/Analysis/GraphLoader.h"
#include "Doppler/Analysis/GraphLoaderIR.h"
#include "Doppler/Dialect/DopplerOps.h"
#include "Doppler/Dialect/LinalgWorkModels.h"
#include "Doppler/Analysis/CostModel.h"
#include "Doppler/Analysis/PlacementGraph.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringRef.h"

using namespace mlir;

namespace {

std::optional<::doppler::placement::Graph>
loadFromMLIR(const std::string &path, const ::doppler::GraphLoadOptions &options,
             std::string *error) {
  DialectRegistry registry;
  registry.insert<mlir::doppler::DopplerDialect, func::FuncDialect,
                  arith::ArithDialect, linalg::LinalgDialect,
                  tensor::TensorDialect>();
  mlir::doppler::registerLinalgWorkModels(registry);
  MLIRContext context(registry);
  context.printOpOnDiagnostic(false);
  std::string firstError;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diagnostic) {
    if (diagnostic.getSeverity() == DiagnosticSeverity::Error &&
        firstError.empty())
      firstError = ::doppler::describeDiagnostic(diagnostic);
    // Warnings do not stop the load; the user sees them as the tools print
    // MLIR's: "file:line:col: warning: ...".
    if (diagnostic.getSeverity() == DiagnosticSeverity::Warning) {
      std::string text = ::doppler::describeDiagnostic(diagnostic);
      size_t colon = text.find(": ");
      llvm::errs() << text.substr(0, colon) << ": warning: "
                   << text.substr(colon == std::string::npos ? 0 : colon + 2)
                   << "\n";
    }
    return success();
  });
  auto fail = [&](const std::string &fallback) {
    *error = firstError.empty() ? fallback : firstError;
    return std::nullopt;
  };

  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(path, &context);
  if (!module)
    return fail("cannot parse '" + path + "'");

  std::string reason;
  FailureOr<FunctionOpInterface> function =
      ::doppler::selectCostedFunction(*module, path, options, &reason);
  if (failed(function))
    return fail(reason);
  FailureOr<mlir::doppler::IRGraph> graph = mlir::doppler::buildPlacementGraph(
      *function, mlir::doppler::TransferHandling::AsEdges);
  if (failed(graph))
    return fail("cannot build a graph from '" + path + "'");
  return std::move(graph->graph);
}

} // namespace

namespace doppler {
std::string describeDiagnostic(Diagnostic &diagnostic) {
  std::string location;
  llvm::raw_string_ostream os(location);
  if (auto file = dyn_cast<FileLineColLoc>(diagnostic.getLocation()))
    os << file.getFilename().getValue() << ":" << file.getLine() << ":"
       << file.getColumn();
  else
    diagnostic.getLocation().print(os);
  return location + ": " + diagnostic.str();
}

FailureOr<FunctionOpInterface>
selectCostedFunction(ModuleOp module, const std::string &path,
                     const GraphLoadOptions &options, std::string *error) {
  FunctionOpInterface function;
  module->walk([&](FunctionOpInterface candidate) {
    if (function || candidate.isExternal())
      return;
    if (options.function.empty() || candidate.getName() == options.function)
      function = candidate;
  });
  if (!function) {
    *error = options.function.empty()
                 ? path + ": no function with a body"
                 : path + ": no function named '" + options.function + "'";
    return failure();
  }

  // Cost what has no cost yet (imported graphs carry theirs).
  bool needsCosts = false;
  for (Operation &op : function.getFunctionBody().getOps()) {
    if (op.hasTrait<OpTrait::IsTerminator>() || isa<mlir::doppler::TaskOp>(op))
      continue;
    if (!op.hasAttr(mlir::doppler::kComputeCostAttr) ||
        !op.hasAttr(mlir::doppler::kTransferCostAttr)) {
      needsCosts = true;
      break;
    }
  }
  if (needsCosts) {
    std::string reason;
    std::optional<placement::SystemDescription> system =
        placement::SystemDescription::load(options.system, &reason);
    if (!system) {
      module.emitError() << "doppler-annotate-costs: " << reason;
      *error = "cannot cost '" + path + "'";
      return failure();
    }
    mlir::doppler::annotateCosts(module, *system);
    if (options.devices > system->numDevices())
      function.emitWarning()
          << "placing on " << options.devices
          << " devices but the system description '" << options.system
          << "' has " << system->numDevices()
          << "; the extra devices are costed like the described ones";
  }
  return function;
}

std::optional<placement::Graph>
loadPlacementGraph(const std::string &path,
                            const GraphLoadOptions &options,
                            std::string *error) {
  if (llvm::StringRef(path).ends_with(".mlir"))
    return loadFromMLIR(path, options, error);
  return placement::readReferenceGraph(path, error);
}
} // namespace doppler
