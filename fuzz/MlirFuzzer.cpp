//===- MlirFuzzer.cpp - Fuzz target: parser, verifier, doppler-pipeline ---===//
//
// doppler-fuzz-mlir: the input is MLIR text, parsed as a module with the
// dialects doppler-opt registers (Doppler, func, arith, tensor, linalg with
// Doppler's linalg work models). A module that parses and verifies runs
// through doppler-pipeline with small options (2 devices, 2 parts, the
// critical-path policy: the learned one would dlopen LibTorch and make
// every execution slow), as
//   doppler-opt in.mlir --doppler-pipeline="devices=2 parts=2 policy=critical-path"
// runs it. Diagnostics are swallowed; a failing pass is fine, a crash is not.
//
// One execution stays fast: inputs over kMaxInputBytes are skipped, and so
// are modules with more than kMaxOperations operations or whose tensor types
// hold more than kMaxTotalElements elements together, and inputs that hit
// a known upstream MLIR crash (hasMalformedIntegerList). Each input gets a
// fresh single-threaded MLIRContext, so that a crash replays alone.
// DOPPLER_FUZZ_VERBOSE=1 prints how far each input got (to judge seeds).
//
//===----------------------------------------------------------------------===//

#include "Doppler/Dialect/DopplerDialect.h"
#include "Doppler/Dialect/LinalgWorkModels.h"
#include "Doppler/Support/CheckedSize.h"
#include "Doppler/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace mlir;

namespace {

constexpr size_t kMaxInputBytes = 16 * 1024;
constexpr int64_t kMaxOperations = 512;
constexpr double kMaxTotalElements = 4294967296.0; // 2^32

constexpr const char *kPipeline =
    "builtin.module(doppler-pipeline{devices=2 parts=2 "
    "policy=critical-path})";

const DialectRegistry &registry() {
  static const DialectRegistry *instance = [] {
    auto *r = new DialectRegistry;
    r->insert<mlir::doppler::DopplerDialect, arith::ArithDialect,
              func::FuncDialect, linalg::LinalgDialect,
              tensor::TensorDialect>();
    mlir::doppler::registerLinalgWorkModels(*r);
    mlir::doppler::registerDopplerPipeline();
    return r;
  }();
  return *instance;
}

double tensorElements(Type type) {
  auto shaped = dyn_cast<RankedTensorType>(type);
  if (!shaped || !shaped.hasStaticShape())
    return 0;
  ArrayRef<int64_t> shape = shaped.getShape();
  return ::doppler::approximateElementCount(shape.data(), shape.size());
}

/// Whether the module is small enough for one fast execution.
bool smallEnough(ModuleOp module) {
  int64_t operations = 0;
  double elements = 0;
  WalkResult walk = module->walk([&](Operation *op) {
    if (++operations > kMaxOperations)
      return WalkResult::interrupt();
    for (Type type : op->getResultTypes())
      elements += tensorElements(type);
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument argument : block.getArguments())
          elements += tensorElements(argument.getType());
    return elements > kMaxTotalElements ? WalkResult::interrupt()
                                        : WalkResult::advance();
  });
  return !walk.wasInterrupted();
}

/// Whether a `permutation = [...]` or `dimensions = [...]` list (of
/// linalg.transpose, linalg.broadcast, linalg.reduce) holds anything but
/// integers. Upstream MLIR's (LLVM 22) linalg parser stores the null
/// attribute a failed parse of such a list returns and dereferences it, so
/// `permutation = [0, *2, 1, 3]` crashes doppler-opt and mlir-opt alike
/// (fuzz/README.md); those inputs are skipped so that fuzzing goes on.
bool hasMalformedIntegerList(StringRef text) {
  for (StringRef key : {"permutation", "dimensions"}) {
    for (size_t at = text.find(key); at != StringRef::npos;
         at = text.find(key, at + 1)) {
      StringRef rest = text.drop_front(at + key.size()).ltrim();
      if (!rest.consume_front("="))
        continue;
      rest = rest.ltrim();
      if (!rest.consume_front("["))
        return true;
      size_t close = rest.find(']');
      if (close == StringRef::npos)
        return true;
      for (char c : rest.take_front(close))
        if (!std::isdigit(static_cast<unsigned char>(c)) && c != '-' &&
            c != ',' && !std::isspace(static_cast<unsigned char>(c)))
          return true;
    }
  }
  return false;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > kMaxInputBytes)
    return 0;
  std::string text(reinterpret_cast<const char *>(data), size);
  if (hasMalformedIntegerList(text))
    return 0;
  MLIRContext context(registry(), MLIRContext::Threading::DISABLED);
  ScopedDiagnosticHandler swallow(&context,
                                  [](Diagnostic &) { return success(); });
  // MLIR's lexer relies on a NUL after the text, as a file read by
  // doppler-opt (an llvm::MemoryBuffer) has; `text`, a std::string, has one.
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(text, ParserConfig(&context), "fuzz.mlir");
  static const bool verbose = std::getenv("DOPPLER_FUZZ_VERBOSE") != nullptr;
  if (!module || !smallEnough(*module)) {
    if (verbose)
      std::fprintf(stderr, "doppler-fuzz-mlir: %s\n",
                   module ? "too large" : "does not parse or verify");
    return 0;
  }

  PassManager pm(&context);
  if (failed(parsePassPipeline(kPipeline, pm))) {
    std::fprintf(stderr, "doppler-fuzz-mlir: cannot parse '%s'\n", kPipeline);
    std::abort();
  }
  LogicalResult ran = pm.run(*module);
  if (verbose)
    std::fprintf(stderr, "doppler-fuzz-mlir: pipeline %s\n",
                 succeeded(ran) ? "succeeded" : "failed");
  return 0;
}
