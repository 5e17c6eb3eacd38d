//===- ProgramFile.h - The function a runner tool reads ---------*- C++ -*-===//
//
// What doppler-interpret and doppler-run both set up before they run a
// function: a context with the dialects a Doppler program uses (Arith so
// that the interpreter can name such ops in its errors), diagnostics that
// name the op and show its source line (the generic dump of the op, or of
// the whole module, would only bury them), and the parsed file.
//
// Header-only: each tool builds it with its own flags.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_INTERPRETER_PROGRAMFILE_H
#define DOPPLER_INTERPRETER_PROGRAMFILE_H

#include "Doppler/Dialect/DopplerDialect.h"
#include "Doppler/Interpreter/Interpreter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/SourceMgr.h"

namespace mlir::doppler {

class ProgramFile {
public:
  ProgramFile() : context_(registry()), handler_(sourceMgr_, &context_) {
    context_.printOpOnDiagnostic(false);
  }

  /// Parses `path` and finds function `name` in it (see lookupFunction);
  /// failure after a diagnostic.
  FailureOr<func::FuncOp> load(StringRef path, StringRef name) {
    ParserConfig config(&context_);
    module_ = parseSourceFile<ModuleOp>(path, sourceMgr_, config);
    if (!module_)
      return failure();
    return lookupFunction(*module_, name);
  }

  MLIRContext &context() { return context_; }

private:
  static DialectRegistry registry() {
    DialectRegistry registry;
    registry.insert<DopplerDialect, arith::ArithDialect, func::FuncDialect>();
    return registry;
  }

  MLIRContext context_;
  llvm::SourceMgr sourceMgr_;
  SourceMgrDiagnosticHandler handler_;
  OwningOpRef<ModuleOp> module_; // Destroyed before the context.
};

} // namespace mlir::doppler

#endif // DOPPLER_INTERPRETER_PROGRAMFILE_H
