//===- WorkSummary.cpp - Print ops, FLOPs and bytes per function ----------===//

#include "Doppler/Dialect/DopplerOps.h"
#include "Doppler/Transforms/Passes.h"

#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::doppler {
#define GEN_PASS_DEF_DOPPLERWORKSUMMARYPASS
#include "Doppler/Transforms/Passes.h.inc"
} // namespace mlir::doppler

using namespace mlir;
using namespace mlir::doppler;

namespace {

/// 1234567 -> "1.23 M": readable magnitudes next to the exact figure.
std::string humanize(double value) {
  static const char *const suffixes[] = {" ", " k", " M", " G", " T", " P", " E"};
  unsigned index = 0;
  while (value >= 1000 && index + 1 < std::size(suffixes)) {
    value /= 1000;
    ++index;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::format("%.3g", value) << suffixes[index];
  return text;
}

struct FunctionWork {
  llvm::MapVector<StringRef, unsigned> opCounts;
  unsigned numOps = 0, numWithWork = 0, numWithoutWork = 0;
  double flops = 0, bytesRead = 0, bytesWritten = 0;
};

class WorkSummaryPass
    : public mlir::doppler::impl::DopplerWorkSummaryPassBase<WorkSummaryPass> {
public:
  using Base::Base;

  void runOnOperation() override {
    std::string errorMessage;
    std::unique_ptr<llvm::ToolOutputFile> file;
    llvm::raw_ostream *os = &llvm::errs();
    if (output != "-") {
      file = openOutputFile(output, &errorMessage);
      if (!file) {
        getOperation().emitError() << "cannot open summary output '" << output
                                   << "': " << errorMessage;
        return signalPassFailure();
      }
      os = &file->os();
    }

    getOperation().walk([&](FunctionOpInterface function) {
      FunctionWork work;
      function.walk([&](Operation *op) {
        if (op == function.getOperation())
          return;
        ++work.numOps;
        ++work.opCounts[op->getName().getStringRef()];
        if (auto withWork = dyn_cast<WorkOpInterface>(op)) {
          ++work.numWithWork;
          work.flops += withWork.getFlops();
          work.bytesRead += withWork.getBytesRead();
          work.bytesWritten += withWork.getBytesWritten();
        } else if (!op->hasTrait<OpTrait::IsTerminator>()) {
          ++work.numWithoutWork;
        }
      });
      numOpsWithWork += work.numWithWork;
      numOpsWithoutWork += work.numWithoutWork;
      print(*os, function.getName(), work);
    });
    if (file)
      file->keep();
    markAllAnalysesPreserved();
  }

private:
  static void print(llvm::raw_ostream &os, StringRef name,
                    const FunctionWork &work) {
    os << "doppler-work-summary: @" << name << "\n";
    os << "  ops: " << work.numOps << " (";
    llvm::interleaveComma(work.opCounts, os, [&](const auto &entry) {
      os << entry.first << " " << entry.second;
    });
    os << ")\n";
    os << "  flops: " << llvm::format("%.6g", work.flops) << " ("
       << humanize(work.flops) << "FLOP)\n";
    os << "  bytes read: " << llvm::format("%.6g", work.bytesRead) << " ("
       << humanize(work.bytesRead) << "B), written: "
       << llvm::format("%.6g", work.bytesWritten) << " ("
       << humanize(work.bytesWritten) << "B)\n";
    if (work.numWithoutWork)
      os << "  ops with unknown work: " << work.numWithoutWork << "\n";
  }
};

} // namespace
