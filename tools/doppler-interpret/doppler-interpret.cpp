//===- doppler-interpret.cpp - Run doppler functions on random inputs -----===//
//
// Runs a function of a .mlir file on seeded random inputs with the reference
// interpreter and prints a checksum of every output. With --compare, runs
// the function of the same name in a second file on the same inputs and
// checks that every output agrees within a relative tolerance: this is how
// transformations such as doppler-decompose are checked to preserve meaning.
//
//   doppler-interpret FILE.mlir [--function NAME] [--seed S]
//                     [--compare OTHER.mlir] [--tolerance 1e-5] [--json]
//
// Exit status: 0 on success, 1 on any error or when an output differs by
// more than the tolerance.
//
//===----------------------------------------------------------------------===//

#include "Doppler/Dialect/DopplerDialect.h"
#include "Doppler/Interpreter/Interpreter.h"
#include "Doppler/Interpreter/ProgramFile.h"
#include "Doppler/Support/NumberFormat.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <optional>

using namespace mlir;
using namespace mlir::doppler;

namespace {

// Shown before the Generic Options in --help; libLLVM's own (hundreds of
// backend flags) are hidden.
llvm::cl::OptionCategory category("Doppler interpret options");

llvm::cl::opt<std::string> inputFilename(llvm::cl::Positional,
                                         llvm::cl::desc("<input .mlir file>"),
                                         llvm::cl::Required,
                                         llvm::cl::cat(category));
llvm::cl::opt<std::string>
    functionName("function",
                 llvm::cl::desc("Function to run (default: the first "
                                "function with a body)"),
                 llvm::cl::value_desc("name"), llvm::cl::init(""),
                 llvm::cl::cat(category));
llvm::cl::opt<uint64_t> seed("seed",
                             llvm::cl::desc("Seed of the random inputs"),
                             llvm::cl::init(0), llvm::cl::cat(category));
llvm::cl::opt<std::string>
    compareFilename("compare",
                    llvm::cl::desc("Run the same-named function of this file "
                                   "on the same inputs and compare outputs"),
                    llvm::cl::value_desc("file"), llvm::cl::init(""),
                    llvm::cl::cat(category));
llvm::cl::opt<double>
    tolerance("tolerance",
              llvm::cl::desc("Largest accepted relative error "
                             "||out - ref|| / ||ref|| per output"),
              llvm::cl::init(1e-5), llvm::cl::cat(category));
llvm::cl::opt<bool> jsonOutput("json",
                               llvm::cl::desc("Print the results as JSON"),
                               llvm::cl::init(false), llvm::cl::cat(category));

std::string typeString(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

/// JSON has no NaN or infinity: those become strings.
llvm::json::Value jsonNumber(double value) {
  if (std::isfinite(value))
    return value;
  if (std::isnan(value))
    return "nan";
  return value > 0 ? "inf" : "-inf";
}

int run(ProgramFile &program) {
  FailureOr<func::FuncOp> function = program.load(inputFilename, functionName);
  if (failed(function))
    return 1;

  // A SourceMgr parses one main file; the second file gets its own, and its
  // handler (registered last, so consulted first) also loads the first file
  // on demand to show the source line of a diagnostic.
  llvm::SourceMgr otherSourceMgr;
  std::optional<SourceMgrDiagnosticHandler> otherHandler;
  OwningOpRef<ModuleOp> otherModule;
  func::FuncOp other;
  if (!compareFilename.empty()) {
    otherHandler.emplace(otherSourceMgr, &program.context());
    ParserConfig config(&program.context());
    otherModule =
        parseSourceFile<ModuleOp>(compareFilename, otherSourceMgr, config);
    if (!otherModule)
      return 1;
    FailureOr<func::FuncOp> found =
        lookupFunction(*otherModule, function->getName());
    if (failed(found))
      return 1;
    other = *found;
    if (other.getFunctionType() != function->getFunctionType()) {
      other.emitError() << "function @" << other.getName() << " has type "
                        << other.getFunctionType() << " in '" << compareFilename
                        << "' but " << function->getFunctionType() << " in '"
                        << inputFilename
                        << "'; outputs can only be compared between "
                           "functions of the same signature";
      return 1;
    }
  }

  FailureOr<SmallVector<HostTensor>> inputs = makeRandomInputs(*function, seed);
  if (failed(inputs))
    return 1;
  FailureOr<SmallVector<HostTensor>> outputs = interpret(*function, *inputs);
  if (failed(outputs))
    return 1;
  SmallVector<double> errors;
  double maxError = 0;
  if (other) {
    FailureOr<SmallVector<HostTensor>> reference = interpret(other, *inputs);
    if (failed(reference))
      return 1;
    for (auto [out, ref] : llvm::zip_equal(*outputs, *reference)) {
      double error = relativeError(out, ref);
      errors.push_back(error);
      // NaN never passes: `!(error <= tolerance)` below catches it.
      maxError = std::isnan(error) || std::isnan(maxError)
                     ? std::nan("")
                     : std::max(maxError, error);
    }
  }
  bool ok = !other || maxError <= tolerance;

  if (jsonOutput) {
    llvm::json::Array outputArray;
    for (auto [i, out] : llvm::enumerate(*outputs)) {
      TensorChecksum sum = checksum(out);
      llvm::json::Object entry{{"index", static_cast<int64_t>(i)},
                               {"type", typeString(out.getType())},
                               {"sum", jsonNumber(sum.sum)},
                               {"l2", jsonNumber(sum.l2)}};
      if (other)
        entry["rel_error"] = jsonNumber(errors[i]);
      outputArray.push_back(std::move(entry));
    }
    llvm::json::Object result{{"file", inputFilename.getValue()},
                              {"function", function->getName().str()},
                              {"seed", static_cast<int64_t>(seed.getValue())},
                              {"outputs", std::move(outputArray)}};
    if (other) {
      result["compare"] = compareFilename.getValue();
      result["max_rel_error"] = jsonNumber(maxError);
      result["tolerance"] = tolerance.getValue();
      result["ok"] = ok;
    }
    llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(result)))
                 << "\n";
    return ok ? 0 : 1;
  }

  llvm::raw_ostream &os = llvm::outs();
  os << "@" << function->getName() << " (seed " << seed
     << "): " << outputs->size() << " output(s)\n";
  for (auto [i, out] : llvm::enumerate(*outputs)) {
    TensorChecksum sum = checksum(out);
    os << "  output " << i << ": " << out.getType() << " sum "
       << ::doppler::formatSignificant(sum.sum) << " l2 "
       << ::doppler::formatSignificant(sum.l2);
    if (other)
      os << " rel-error " << ::doppler::formatSignificant(errors[i], 3);
    os << "\n";
  }
  if (other)
    os << "compared with '" << compareFilename << "': max rel-error "
       << ::doppler::formatSignificant(maxError, 3) << (ok ? " <= " : " > ")
       << "tolerance " << llvm::format("%g", tolerance.getValue()) << ": "
       << (ok ? "ok" : "FAILED") << "\n";
  return ok ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  llvm::cl::HideUnrelatedOptions(category);
  llvm::cl::ParseCommandLineOptions(
      argc, argv,
      "Doppler reference interpreter: runs a function on seeded random "
      "inputs\n");
  if (!(tolerance >= 0)) {
    llvm::errs() << "error: --tolerance must be a non-negative number\n";
    return 1;
  }

  ProgramFile program;
  return run(program);
}
