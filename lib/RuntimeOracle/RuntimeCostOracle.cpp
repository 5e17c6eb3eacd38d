//===- RuntimeCostOracle.cpp - Measured makespans for real-rl -------------===//

#include "Doppler/RuntimeOracle/RuntimeCostOracle.h"

// Backend choice by name, shared with doppler-run (header-only).
#include "RunSupport.h"

#include "Doppler/Analysis/GraphLoaderIR.h"
#include "Doppler/Analysis/PlacementGraph.h"
#include "Doppler/Conversion/DopplerToRuntime.h"
#include "Doppler/Dialect/DopplerOps.h"
#include "Doppler/Placement/Simulator.h"
#include "Doppler/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <algorithm>
#include <chrono>

using namespace mlir;
namespace rt = ::doppler::runtime;
namespace pl = ::doppler::placement;

namespace doppler::train {

/// A training graph's function, alone in its module and stripped of any
/// earlier placement (devices, transfers, schedule). Outside the anonymous
/// namespace because RuntimeCostOracle::Impl holds them.
struct OracleProgram {
  std::string path;
  pl::Graph graph;
  OwningOpRef<ModuleOp> module;
  /// The op of each node, by node id, inside `module`.
  std::vector<Operation *> nodeOps;
  /// Seeded on the first run and reused by every later one: every
  /// placement computes the same function of the same inputs.
  rt::HostArguments arguments;
  bool haveArguments = false;
};

namespace {

/// Same nodes, costs and edges in the same order: then node ids name the
/// same ops in both.
bool sameGraph(const pl::Graph &a, const pl::Graph &b) {
  if (a.numNodes() != b.numNodes() || a.numEdges() != b.numEdges())
    return false;
  for (pl::NodeId v = 0; v < a.numNodes(); ++v)
    if (a.computeCost(v) != b.computeCost(v) ||
        a.transferCost(v) != b.transferCost(v) || a.opType(v) != b.opType(v))
      return false;
  for (int32_t e = 0; e < a.numEdges(); ++e)
    if (a.edgeSource(e) != b.edgeSource(e) ||
        a.edgeTarget(e) != b.edgeTarget(e) || a.edgeCost(e) != b.edgeCost(e))
      return false;
  return true;
}

DialectRegistry makeRegistry() {
  // What the graph loader accepts, so that every .mlir it loads can run.
  DialectRegistry registry;
  registry.insert<mlir::doppler::DopplerDialect, func::FuncDialect,
                  arith::ArithDialect, linalg::LinalgDialect,
                  tensor::TensorDialect>();
  return registry;
}

} // namespace

struct RuntimeCostOracle::Impl {
  explicit Impl(const RuntimeOracleOptions &options)
      : options(options),
        // The oracle runs one pass at a time on small modules; a thread
        // pool would only compete with the executor's workers.
        context(makeRegistry(), MLIRContext::Threading::DISABLED),
        handler(&context,
                [this](Diagnostic &diagnostic) {
                  recordDiagnostic(diagnostic);
                  return success();
                }),
        insertTransfers(&context) {
    context.printOpOnDiagnostic(false);
    insertTransfers.addPass(mlir::doppler::createDopplerInsertTransfersPass());
  }

  void recordDiagnostic(Diagnostic &diagnostic) {
    if (diagnostic.getSeverity() != DiagnosticSeverity::Error ||
        !firstError.empty())
      return;
    firstError = ::doppler::describeDiagnostic(diagnostic);
  }

  /// The first error diagnostic since the last call, else `fallback`.
  std::string takeError(const std::string &fallback) {
    std::string message = firstError.empty() ? fallback : firstError;
    firstError.clear();
    return message;
  }

  OracleProgram *programFor(const pl::Graph &graph);
  /// Places, lowers and runs `program`: the median makespan in seconds.
  std::optional<double> run(OracleProgram &program,
                            pl::ArrayView<pl::DeviceId> assignment,
                            std::string *error);

  RuntimeOracleOptions options;
  MLIRContext context;
  std::string firstError;
  ScopedDiagnosticHandler handler;
  PassManager insertTransfers;
  std::unique_ptr<rt::Executor> executor;
  std::vector<std::unique_ptr<OracleProgram>> programs;
  /// Graphs measure() was called with, and their programs.
  std::vector<std::pair<const pl::Graph *, OracleProgram *>> seen;
  int64_t measurements = 0;
  double measuringSeconds = 0;
};

OracleProgram *RuntimeCostOracle::Impl::programFor(const pl::Graph &graph) {
  for (auto &[known, program] : seen)
    if (known == &graph && program->graph.numNodes() == graph.numNodes() &&
        program->graph.numEdges() == graph.numEdges())
      return program;
  for (const std::unique_ptr<OracleProgram> &program : programs)
    if (sameGraph(program->graph, graph)) {
      seen.emplace_back(&graph, program.get());
      return program.get();
    }
  return nullptr;
}

std::optional<double>
RuntimeCostOracle::Impl::run(OracleProgram &program,
                             pl::ArrayView<pl::DeviceId> assignment,
                             std::string *error) {
  // Diagnostics carry their own file:line:col; other failures name the file.
  auto fail = [&](const std::string &fallback) -> std::optional<double> {
    *error = takeError(program.path + ": " + fallback);
    return std::nullopt;
  };
  // A fresh copy per placement: transfer insertion rewrites the body.
  IRMapping mapping;
  OwningOpRef<ModuleOp> working(
      cast<ModuleOp>(program.module->getOperation()->clone(mapping)));
  for (size_t v = 0; v < program.nodeOps.size(); ++v) {
    Operation *op = mapping.lookupOrNull(program.nodeOps[v]);
    if (!op)
      return fail("internal error: node " + std::to_string(v) +
                  " has no op in the copy");
    mlir::doppler::setDevice(op, assignment[v]);
  }
  if (failed(insertTransfers.run(*working)))
    return fail("cannot insert the transfers of the placement");
  auto function = *working->getOps<func::FuncOp>().begin();
  FailureOr<rt::Plan> plan = mlir::doppler::buildRuntimePlan(function);
  if (failed(plan))
    return fail("cannot build the runtime program of the placement");
  if (!program.haveArguments) {
    // The plan's form: integer ids drawn within every gathered extent.
    rt::Result<rt::HostArguments> seeded =
        rt::makeSeededArguments(*plan, options.seed);
    if (!seeded)
      return fail(seeded.message());
    program.arguments = std::move(*seeded);
    program.haveArguments = true;
  }
  rt::InputBindings bindings = rt::bindArguments(*plan, program.arguments);
  std::vector<double> makespans;
  for (int32_t i = 0; i < options.warmup + options.repeat; ++i) {
    rt::Result<rt::RunResult> result = executor->run(plan->graph, bindings);
    if (!result)
      return fail("the runtime failed: " + result.message());
    if (i >= options.warmup)
      makespans.push_back(result->makespan);
  }
  // The lower median, as doppler-run reports: a makespan that happened.
  std::sort(makespans.begin(), makespans.end());
  return makespans[(makespans.size() - 1) / 2];
}

RuntimeCostOracle::RuntimeCostOracle(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
RuntimeCostOracle::~RuntimeCostOracle() = default;

std::unique_ptr<RuntimeCostOracle>
RuntimeCostOracle::create(const RuntimeOracleOptions &options,
                          std::string *error) {
  if (options.numDevices < 1 || options.repeat < 1 || options.warmup < 0) {
    *error = "runtime oracle: devices and repeat must be >= 1, warm-up >= 0";
    return nullptr;
  }
  auto impl = std::make_unique<Impl>(options);
  rt::tools::BackendChoice choice;
  choice.name = options.backend;
  choice.devices = options.numDevices;
  rt::Result<std::unique_ptr<rt::Backend>> backend =
      rt::tools::createBackend(choice);
  if (!backend) {
    *error = backend.message();
    return nullptr;
  }
  impl->executor = std::make_unique<rt::Executor>(std::move(*backend));
  return std::unique_ptr<RuntimeCostOracle>(
      new RuntimeCostOracle(std::move(impl)));
}

bool RuntimeCostOracle::addProgram(const std::string &path,
                                   const GraphLoadOptions &load,
                                   const pl::Graph &graph, std::string *error) {
  Impl &s = *impl_;
  auto fail = [&](const std::string &fallback) {
    *error = s.takeError(fallback);
    return false;
  };
  OwningOpRef<ModuleOp> parsed = parseSourceFile<ModuleOp>(path, &s.context);
  if (!parsed)
    return fail("cannot parse '" + path + "'");

  // The function and the costs exactly as loadPlacementGraph chooses them.
  std::string reason;
  FailureOr<FunctionOpInterface> chosen =
      selectCostedFunction(*parsed, path, load, &reason);
  if (failed(chosen))
    return fail(reason);
  auto function = dyn_cast<func::FuncOp>(chosen->getOperation());
  if (!function)
    return fail(path + ": @" + chosen->getName().str() +
                " is not a func.func; the runtime cannot run it");

  auto program = std::make_unique<OracleProgram>();
  program->path = path;
  program->graph = graph;
  program->module = ModuleOp::create(UnknownLoc::get(&s.context));
  program->module->push_back(function.clone());
  function = *program->module->getOps<func::FuncOp>().begin();
  // An input that is already placed keeps only its ops: the graph makes
  // each transfer an edge, and every episode places afresh.
  function->removeAttr(mlir::doppler::kMakespanAttr);
  Block &body = function.getBody().front();
  for (Operation &op : llvm::make_early_inc_range(body)) {
    if (auto transfer = dyn_cast<mlir::doppler::TransferOp>(op)) {
      transfer.getResult().replaceAllUsesWith(transfer.getInput());
      transfer->erase();
      continue;
    }
    op.removeAttr(mlir::doppler::kDeviceAttr);
    op.removeAttr(mlir::doppler::kStartAttr);
    op.removeAttr(mlir::doppler::kEndAttr);
  }
  FailureOr<mlir::doppler::IRGraph> ir = mlir::doppler::buildPlacementGraph(
      function, mlir::doppler::TransferHandling::AsEdges);
  if (failed(ir))
    return fail("cannot build a graph from '" + path + "'");
  if (!sameGraph(ir->graph, graph))
    return fail(path + ": internal error: the function's ops do not number "
                       "as the loaded graph's nodes");
  program->nodeOps = std::move(ir->ops);

  // Everything on device 0: unsupported ops or element types fail here,
  // before training, and not in the middle of it.
  std::vector<pl::DeviceId> onOneDevice(graph.numNodes(), 0);
  if (!s.run(*program, onOneDevice, error)) {
    *error = "cannot run '" + path + "' on the runtime: " + *error;
    return false;
  }
  s.programs.push_back(std::move(program));
  return true;
}

std::optional<double>
RuntimeCostOracle::measure(const pl::Graph &graph,
                           pl::ArrayView<pl::DeviceId> assignment,
                           std::string *error) {
  Impl &s = *impl_;
  OracleProgram *program = s.programFor(graph);
  if (!program) {
    *error = "the graph has no program to run (only graphs loaded from "
             ".mlir functions can be measured)";
    return std::nullopt;
  }
  if (!pl::validateAssignment(graph, s.options.numDevices, assignment, error))
    return std::nullopt;
  auto start = std::chrono::steady_clock::now();
  std::optional<double> seconds = s.run(*program, assignment, error);
  s.measuringSeconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (!seconds)
    return std::nullopt;
  ++s.measurements;
  // Microseconds: the unit of the cost attributes the simulator uses.
  return *seconds * 1e6;
}

const char *RuntimeCostOracle::costSource() const noexcept {
  return impl_->options.backend == "cuda" ? "runtime-cuda" : "runtime-cpu";
}

int64_t RuntimeCostOracle::measurements() const { return impl_->measurements; }
double RuntimeCostOracle::measuringSeconds() const {
  return impl_->measuringSeconds;
}

} // namespace doppler::train
