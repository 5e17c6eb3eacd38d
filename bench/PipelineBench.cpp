//===- PipelineBench.cpp - doppler-pipeline on a 10,000-op module ---------===//
//
// Times the whole pipeline (costs, decomposition, re-costing, placement,
// transfers, simulation) on a module of 10,000 einsums (2,500 residual
// layers of matmul, bias, tanh, add), against parsing and verifying the
// same module in the same run. Prints medians; the ratio is what to compare
// across machines.
//
//===----------------------------------------------------------------------===//

#include "Doppler/Dialect/DopplerDialect.h"
#include "Doppler/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include "MedianCollector.h"

#include <benchmark/benchmark.h>

#include <cstdio>

#include <string>

namespace {

/// 4 * layers einsums on size x size tensors.
std::string residualStack(int layers, int size) {
  std::string t = "tensor<" + std::to_string(size) + "x" +
                  std::to_string(size) + "xf32>";
  std::string v = "tensor<" + std::to_string(size) + "xf32>";
  std::string text = "func.func @stack(%x: " + t + ", %w: " + t + ", %b: " +
                     v + ") -> " + t + " {\n";
  std::string current = "%x";
  for (int i = 0; i < layers; ++i) {
    std::string n = std::to_string(i);
    text += "  %m" + n + " = doppler.einsum \"ij,jk->ik\" join(mul) agg(add) (" +
            current + ", %w) : (" + t + ", " + t + ") -> " + t + "\n";
    text += "  %a" + n + " = doppler.einsum \"ik,k->ik\" join(add) (%m" + n +
            ", %b) : (" + t + ", " + v + ") -> " + t + "\n";
    text += "  %g" + n + " = doppler.einsum \"ik->ik\" join(tanh) (%a" + n +
            ") : (" + t + ") -> " + t + "\n";
    text += "  %r" + n + " = doppler.einsum \"ik,ik->ik\" join(add) (%g" + n +
            ", " + current + ") : (" + t + ", " + t + ") -> " + t + "\n";
    current = "%r" + n;
  }
  return text + "  return " + current + " : " + t + "\n}\n";
}

const std::string &moduleText() {
  static const std::string text = residualStack(2500, 1024);
  return text;
}

struct Context {
  Context() {
    mlir::doppler::registerDopplerPasses();
    mlir::doppler::registerDopplerPipeline();
    context.loadDialect<mlir::doppler::DopplerDialect, mlir::func::FuncDialect>();
  }
  mlir::MLIRContext context;
};

Context &shared() {
  static Context instance;
  return instance;
}

void BM_ParseAndVerify(benchmark::State &state) {
  Context &ctx = shared();
  for (auto _ : state) {
    auto module =
        mlir::parseSourceString<mlir::ModuleOp>(moduleText(), &ctx.context);
    if (!module)
      state.SkipWithError("parse failed");
    benchmark::DoNotOptimize(module.get());
  }
}

void runPipeline(benchmark::State &state, const std::string &pipeline) {
  Context &ctx = shared();
  for (auto _ : state) {
    state.PauseTiming();
    auto module =
        mlir::parseSourceString<mlir::ModuleOp>(moduleText(), &ctx.context);
    mlir::PassManager pm(&ctx.context);
    if (!module || mlir::failed(mlir::parsePassPipeline(pipeline, pm))) {
      state.SkipWithError("setup failed");
      break;
    }
    // Remarks are the pipeline's output; keep them off the benchmark's.
    mlir::ScopedDiagnosticHandler quiet(&ctx.context,
                                        [](mlir::Diagnostic &) {
                                          return mlir::success();
                                        });
    state.ResumeTiming();
    if (mlir::failed(pm.run(*module)))
      state.SkipWithError("pipeline failed");
  }
}

void BM_PipelineNoDecomposition(benchmark::State &state) {
  runPipeline(state, "doppler-pipeline{devices=4 parts=1}");
}

void BM_PipelineParts4(benchmark::State &state) {
  runPipeline(state, "doppler-pipeline{devices=4 parts=4}");
}

} // namespace

BENCHMARK(BM_ParseAndVerify)->Unit(benchmark::kMillisecond)->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(BM_PipelineNoDecomposition)->Unit(benchmark::kMillisecond)->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(BM_PipelineParts4)->Unit(benchmark::kMillisecond)->Iterations(1)->Repetitions(5)->ReportAggregatesOnly(true);

int main(int argc, char **argv) {
  doppler::bench::MedianCollector reporter;
  if (!doppler::bench::runBenchmarks(argc, argv, reporter))
    return 1;

  double parse = reporter.get("BM_ParseAndVerify").real;
  std::printf("\nMedian milliseconds on the 10,000-einsum module (wall), and "
              "multiples of parsing and verifying it:\n");
  for (const char *name : {"BM_ParseAndVerify", "BM_PipelineNoDecomposition",
                           "BM_PipelineParts4"}) {
    double ms = reporter.get(name).real;
    std::printf("  %-28s %9.1f ms  %6.1fx\n", name, ms,
                parse > 0 ? ms / parse : 0.0);
  }
  return 0;
}
