//===- doppler-run.cpp - Run a placed function on the runtime -------------===//
//
// Converts a placed function (after doppler-pipeline, or doppler-place +
// doppler-insert-transfers) into a runtime task graph (RuntimeProgram),
// runs it on the CPU or CUDA backend on seeded random inputs (the values
// doppler-interpret uses for the same seed) or on the arguments of a file
// (--arguments), and reports the measured
// makespan (median of --repeat runs after a warm-up), the predicted one
// (the function's doppler.makespan; cost units are microseconds), the task
// count and per-device utilisation. With --check, the outputs are compared
// with the reference interpreter's.
//
//   doppler-run FILE.mlir [--backend cpu|cuda] [--devices D] [--check]
//               [--trace FILE] [--seed S] [--repeat N] [--json]
//               [--function NAME] [--link-bandwidth B] [--link-latency L]
//               [--order fifo|priority|program|planned]
//               [--memory-limit BYTES] [--memory-policy wait|fail]
//               [--inputs every-user|first-user]
//               [--delay-tasks] [--write-outputs FILE] [--idle-spin-us N]
//               [--breakdown] [--schedule FILE] [--arguments FILE]
//   mpirun -np R doppler-run FILE.mlir --backend cpu ...
//       (across processes: each rank runs its node's devices, rank 0
//        reports; MpiRun.h, runtime/README.md "Across processes (MPI)")
//   doppler-run FILE.mlir --export-plan PLAN.json   (for doppler-run-plan)
//   doppler-run FILE.mlir --compare-outputs OUT.json
//       (outputs of a run elsewhere, e.g. a lowered program, against the
//        interpreter; nothing is run on the runtime)
//
// Exit status: 0 on success; 1 on any error, or when --check (or
// --compare-outputs) finds a relative error above --tolerance.
//
//===----------------------------------------------------------------------===//

#include "MpiRun.h"
#include "RunSupport.h"

#include "Doppler/Support/Limits.h"
#include "Doppler/Dialect/DopplerDialect.h"
#include "Doppler/Dialect/DopplerOps.h"
#include "Doppler/Interpreter/Interpreter.h"
#include "Doppler/Interpreter/ProgramFile.h"
#include "Doppler/Conversion/DopplerToRuntime.h"
#include "Doppler/Analysis/PlacementGraph.h"
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
#include <cstring>
#include <map>

using namespace mlir;
using namespace mlir::doppler;
namespace rt = ::doppler::runtime;

namespace {

namespace cl = llvm::cl;

// Only these show in --help (libLLVM registers hundreds of its own).
cl::OptionCategory category("Doppler run options");

cl::opt<std::string> inputFilename(cl::Positional,
                                   cl::desc("<placed .mlir file>"),
                                   cl::Required, cl::cat(category));
cl::opt<std::string> backendName("backend", cl::desc("Backend: cpu or cuda"),
                                 cl::init("cpu"), cl::cat(category));
cl::opt<int> numDevices(
    "devices",
    cl::desc("Virtual devices (default: the highest device id used + 1)"),
    cl::init(0), cl::cat(category));
cl::opt<bool> check("check",
                    cl::desc("Compare the outputs with the reference "
                             "interpreter's (exit 1 above --tolerance)"),
                    cl::init(false), cl::cat(category));
cl::opt<double> tolerance("tolerance",
                          cl::desc("Largest accepted ||out - ref|| / ||ref|| "
                                   "per output"),
                          cl::init(1e-5), cl::cat(category));
cl::opt<std::string> traceFile("trace",
                               cl::desc("Write a Chrome trace of the median "
                                        "run"),
                               cl::value_desc("file"), cl::init(""),
                               cl::cat(category));
cl::opt<uint64_t> seed("seed", cl::desc("Seed of the random inputs"),
                       cl::init(0), cl::cat(category));
cl::opt<int> repeat("repeat",
                    cl::desc("Timed runs after one warm-up (the median is "
                             "reported)"),
                    cl::init(3), cl::cat(category));
cl::opt<bool> jsonOutput("json", cl::desc("Print the report as JSON"),
                         cl::init(false), cl::cat(category));
cl::opt<std::string> functionName(
    "function",
    cl::desc("Function to run (default: the first function with a body)"),
    cl::value_desc("name"), cl::init(""), cl::cat(category));
cl::opt<double> linkBandwidth(
    "link-bandwidth",
    cl::desc("CPU backend: bytes/s of every link (0: unthrottled copies)"),
    cl::init(0), cl::cat(category));
cl::opt<double>
    linkLatency("link-latency",
                cl::desc("CPU backend: seconds every transfer takes at least"),
                cl::init(0), cl::cat(category));
cl::opt<std::string> order(
    "order",
    cl::desc("How a device picks among ready tasks: fifo (readiness order; "
             "the default), priority (smallest simulated start time first), "
             "program (strictly the program's order on each device, as an "
             "eager framework runs it) or planned (strictly the simulated "
             "start times' order; the default for programs "
             "doppler-plan-memory planned)"),
    cl::init("fifo"), cl::cat(category));
cl::opt<double> memoryLimit(
    "memory-limit",
    cl::desc("Bytes of live buffers allowed on every device (default: no "
             "limit); the run reports each device's peak against it"),
    cl::init(0), cl::cat(category));
cl::opt<std::string> memoryPolicy(
    "memory-policy",
    cl::desc("With --memory-limit, a task whose output does not fit: wait "
             "(parked until buffers are freed; the device runs other ready "
             "tasks meanwhile; a memory deadlock is an error) or fail"),
    cl::init("wait"), cl::cat(category));
cl::opt<int> idleSpin(
    "idle-spin-us",
    cl::desc("How long an idle worker polls before sleeping, in "
             "microseconds (-1: automatic, 20 when every worker has a core)"),
    cl::init(-1), cl::cat(category));
cl::opt<std::string> injectFault(
    "inject-fault",
    cl::desc("Testing: make one task fail (KIND kernel, alloc, transfer or "
             "hang; TASK a task id or #N, the Nth task of that kind)"),
    cl::value_desc("KIND:TASK"), cl::init(""), cl::cat(category));
cl::opt<double> taskTimeout(
    "task-timeout",
    cl::desc("Watchdog: a task running longer than this ends the run with an "
             "error naming it (default: 30 s plus its work at a pessimistic "
             "rate; 0: off)"),
    cl::value_desc("SECONDS"), cl::init(-1), cl::cat(category));
cl::opt<std::string> inputsPolicy(
    "inputs",
    cl::desc("Where arguments live: every-user (a copy on every device "
             "that reads it, as the placement assumes) or first-user (one "
             "copy, runtime transfers to the others)"),
    cl::init("every-user"), cl::cat(category));
cl::opt<bool> delayTasks(
    "delay-tasks",
    cl::desc("Run cost-only doppler.task ops as delays of their compute "
             "cost (microseconds)"),
    cl::init(false), cl::cat(category));
cl::opt<std::string> exportPlan("export-plan",
                                cl::desc("Write the task graph as a plan for "
                                         "doppler-run-plan and exit"),
                                cl::value_desc("file"), cl::init(""),
                                cl::cat(category));
cl::opt<std::string> writeOutputs("write-outputs",
                                  cl::desc("Write the outputs of the median "
                                           "run: a binary tensor file when "
                                           "the name ends in .bin, else "
                                           "JSON"),
                                  cl::value_desc("file"), cl::init(""),
                                  cl::cat(category));
cl::opt<bool> breakdown(
    "breakdown",
    cl::desc("Also print, per kind of task, the predicted cost (the cost "
             "model's, as the simulator uses it) against the measured time"),
    cl::init(false), cl::cat(category));
cl::opt<std::string> scheduleFile(
    "schedule",
    cl::desc("Write, per task of the median run, its measured start and end "
             "beside the simulated ones (doppler.start, doppler.end) and its "
             "predicted cost, as JSON in microseconds: where the cost model "
             "and the runtime disagree, task by task"),
    cl::value_desc("file"), cl::init(""), cl::cat(category));
cl::opt<std::string> argumentsFile(
    "arguments",
    cl::desc("Run on the arguments in FILE instead of seeded ones: a file "
             "in the format --write-outputs writes (JSON, or the binary "
             "tensor file that a .bin name gets), one entry per function "
             "argument, in order (also what --check and --compare-outputs "
             "give the interpreter)"),
    cl::value_desc("file"), cl::init(""), cl::cat(category));
cl::opt<std::string> compareOutputs(
    "compare-outputs",
    cl::desc("Compare an outputs file (e.g. written by a lowered program) "
             "with the interpreter instead of running"),
    cl::value_desc("file"), cl::init(""), cl::cat(category));

/// JSON has no NaN or infinity: those become strings.
llvm::json::Value jsonNumber(double value) {
  if (std::isfinite(value))
    return value;
  if (std::isnan(value))
    return "nan";
  return value > 0 ? "inf" : "-inf";
}

/// Runs across processes when started by mpirun.
rt::tools::MpiRun mpi;

int fail(const llvm::Twine &message) {
  mpi.failIfActive("doppler-run", message.str()); // ends every rank
  llvm::errs() << "doppler-run: error: " << message << "\n";
  return 1;
}

/// A runtime tensor as the interpreter holds it.
HostTensor toInterpreterTensor(const rt::HostTensor &tensor, Type type) {
  HostTensor result;
  result.elementType = type;
  result.shape.assign(tensor.shape.begin(), tensor.shape.end());
  int64_t count = rt::numElements(tensor.shape);
  result.data.resize(count);
  for (int64_t i = 0; i < count; ++i)
    result.data[i] = rt::elementAt(tensor, i);
  return result;
}

/// The function's arguments from --arguments (read with the reader of
/// --write-outputs files): one tensor per argument, of its element type and
/// shape. Fails with a message already printed.
FailureOr<std::vector<rt::HostTensor>>
loadArguments(func::FuncOp function, const std::string &path) {
  rt::Result<std::vector<rt::HostTensor>> tensors = rt::loadOutputs(path);
  if (!tensors) {
    fail("--arguments: " + tensors.message());
    return failure();
  }
  ArrayRef<Type> types = function.getFunctionType().getInputs();
  if (tensors->size() != types.size()) {
    fail("--arguments: '" + path + "' holds " + llvm::Twine(tensors->size()) +
         " tensor(s) but @" + function.getName() + " takes " +
         llvm::Twine(types.size()) + " argument(s)");
    return failure();
  }
  for (auto [i, tensor, type] : llvm::enumerate(*tensors, types)) {
    auto tensorType = dyn_cast<RankedTensorType>(type);
    std::string expected, element;
    llvm::raw_string_ostream(expected) << type;
    if (tensorType)
      llvm::raw_string_ostream(element) << tensorType.getElementType();
    if (!tensorType || rt::elementTypeName(tensor.type) != element ||
        ArrayRef<int64_t>(tensor.shape) != tensorType.getShape()) {
      fail("--arguments: tensor " + llvm::Twine(i) + " of '" + path +
           "' is " + rt::tensorTypeString(tensor.type, tensor.shape) +
           " but argument " + llvm::Twine(i) + " of @" + function.getName() +
           " is " + expected);
      return failure();
    }
  }
  return std::move(*tensors);
}

/// Relative errors of `outputs` against the interpreter, on `given`
/// arguments or else on seeded inputs. Fails (with a message already
/// printed) when the interpreter cannot run.
LogicalResult compareWithInterpreter(func::FuncOp function,
                                     const rt::Plan *plan,
                                     ArrayRef<rt::HostTensor> outputs,
                                     std::vector<double> &errors,
                                     double &maxError,
                                     const std::vector<rt::HostTensor> *given) {
  FailureOr<SmallVector<HostTensor>> inputs = SmallVector<HostTensor>();
  if (given) {
    for (auto [tensor, type] :
         llvm::zip_equal(*given, function.getFunctionType().getInputs()))
      inputs->push_back(toInterpreterTensor(
          tensor, cast<RankedTensorType>(type).getElementType()));
  } else {
    inputs = makeRandomInputs(function, seed);
  }
  if (failed(inputs))
    return failure();
  if (plan && !given) {
    // The runtime's seeded arguments must be the interpreter's, bit for bit;
    // otherwise a match below would mean nothing.
    rt::Result<rt::HostArguments> seeded =
        rt::makeSeededArguments(*plan, seed);
    if (!seeded) {
      fail(seeded.message());
      return failure();
    }
    const rt::HostArguments &args = *seeded;
    for (auto [i, input] : llvm::enumerate(*inputs)) {
      rt::HostTensor view;
      view.type = plan->arguments[i].type;
      view.shape = plan->arguments[i].shape;
      view.bytes = args.buffers[i];
      for (int64_t k = 0, e = input.data.size(); k < e; ++k)
        if (rt::elementAt(view, k) != input.data[k]) {
          fail("internal error: seeded argument " + llvm::Twine(i) +
               " differs from the interpreter's");
          return failure();
        }
    }
  }
  FailureOr<SmallVector<HostTensor>> reference = interpret(function, *inputs);
  if (failed(reference))
    return failure();
  if (reference->size() != outputs.size()) {
    fail("the function has " + llvm::Twine(reference->size()) +
         " result(s) but " + llvm::Twine(outputs.size()) +
         " output(s) were given");
    return failure();
  }
  maxError = 0;
  for (auto [out, ref] : llvm::zip_equal(outputs, *reference)) {
    double error =
        relativeError(toInterpreterTensor(out, ref.elementType), ref);
    errors.push_back(error);
    maxError = std::isnan(error) || std::isnan(maxError)
                   ? std::nan("")
                   : std::max(maxError, error);
  }
  return success();
}

/// A task's kind as --breakdown and --schedule name it (einsums by their
/// join, contractions apart).
std::string taskKindLabel(const rt::Task &task) {
  std::string kind(rt::taskKindName(task.kind));
  if (task.kind == rt::TaskKind::Einsum)
    kind += task.aggregation
                ? " contraction"
                : " " + std::string(::doppler::joinKindName(task.join));
  return kind;
}

/// A float attribute of `op`, if it has one.
std::optional<double> floatAttr(Operation *op, StringRef attr) {
  if (!op)
    return std::nullopt;
  if (auto value = op->getAttrOfType<FloatAttr>(attr))
    return value.getValueAsDouble();
  return std::nullopt;
}

/// The cost model's cost of task `task` made from `op` (microseconds), as
/// the simulator charges it: a move its producer's transfer cost.
std::optional<double> predictedCost(const rt::Task &task, Operation *op) {
  if (task.kind == rt::TaskKind::Transfer) {
    Operation *producer = op ? op->getOperand(0).getDefiningOp() : nullptr;
    if (auto taskOp = dyn_cast_or_null<TaskOp>(producer))
      return taskOp.getTransfer().convertToDouble();
    return floatAttr(producer, kTransferCostAttr);
  }
  if (auto taskOp = dyn_cast_or_null<TaskOp>(op))
    return taskOp.getCompute().convertToDouble();
  return floatAttr(op, kComputeCostAttr);
}

/// The op behind task `id`, or null.
Operation *opOf(ArrayRef<Operation *> taskOps, rt::ValueId id) {
  return id < static_cast<rt::ValueId>(taskOps.size()) ? taskOps[id] : nullptr;
}

/// Predicted (cost attributes, microseconds) against measured task times,
/// summed per kind of task: where the cost model and the runtime disagree.
void printBreakdown(const rt::Plan &plan, ArrayRef<Operation *> taskOps,
                    const rt::RunResult &run) {
  struct Row {
    int64_t count = 0;
    double predicted = 0, measured = 0;
    bool costed = true;
  };
  std::map<std::string, Row> rows;
  for (rt::ValueId id = 0; id < plan.graph.size(); ++id) {
    const rt::Task &task = plan.graph.task(id);
    if (task.kind == rt::TaskKind::Input || !run.tasks[id].ran)
      continue;
    std::optional<double> predicted = predictedCost(task, opOf(taskOps, id));
    Row &row = rows[taskKindLabel(task)];
    ++row.count;
    row.measured += (run.tasks[id].end - run.tasks[id].start) * 1e6;
    if (predicted)
      row.predicted += *predicted;
    else
      row.costed = false;
  }
  std::vector<std::pair<std::string, Row>> sorted(rows.begin(), rows.end());
  llvm::sort(sorted, [](const auto &a, const auto &b) {
    return a.second.measured > b.second.measured;
  });
  llvm::outs() << llvm::format("  %-24s %6s %14s %14s %9s\n", "task kind",
                               "tasks", "predicted us", "measured us",
                               "meas/pred");
  for (const auto &[kind, row] : sorted) {
    llvm::outs() << llvm::format("  %-24s %6lld ", kind.c_str(),
                                 static_cast<long long>(row.count));
    if (row.costed)
      llvm::outs() << llvm::format(
          "%14.1f %14.1f %9.2f\n", row.predicted, row.measured,
          row.predicted > 0 ? row.measured / row.predicted : 0.0);
    else
      llvm::outs() << llvm::format("%14s %14.1f %9s\n", "(no cost)",
                                   row.measured, "-");
  }
}

/// --schedule: per task that ran in `run`, its measured start and end next
/// to the simulated ones and its predicted cost (microseconds; null where
/// the op has none), with its inputs, so that a script can follow the
/// schedule task by task and gap by gap.
rt::Status writeSchedule(const rt::Plan &plan, ArrayRef<Operation *> taskOps,
                         const rt::RunResult &run, StringRef path) {
  auto number = [](std::optional<double> value) -> llvm::json::Value {
    if (value)
      return *value;
    return nullptr;
  };
  llvm::json::Array tasks;
  for (rt::ValueId id = 0; id < plan.graph.size(); ++id) {
    const rt::Task &task = plan.graph.task(id);
    const rt::TaskTiming &timing = run.tasks[id];
    if (task.kind == rt::TaskKind::Input || !timing.ran)
      continue;
    Operation *op = opOf(taskOps, id);
    auto shapeOf = [](const rt::Shape &shape) {
      llvm::json::Array extents;
      for (int64_t extent : shape)
        extents.push_back(extent);
      return extents;
    };
    llvm::json::Array inputs, inputShapes;
    for (rt::ValueId input : task.inputs) {
      inputs.push_back(static_cast<int64_t>(input));
      inputShapes.push_back(shapeOf(plan.graph.task(input).shape));
    }
    tasks.push_back(llvm::json::Object{
        {"id", static_cast<int64_t>(id)},
        {"kind", taskKindLabel(task)},
        {"name", plan.graph.describe(id)},
        {"device", timing.device},
        {"worker", timing.worker == rt::WorkerKind::Compute ? "compute"
                                                            : "copy"},
        {"bytes", static_cast<int64_t>(plan.graph.byteSize(id))},
        {"shape", shapeOf(task.shape)},
        {"inputs", std::move(inputs)},
        {"input_shapes", std::move(inputShapes)},
        {"start_us", timing.start * 1e6},
        {"end_us", timing.end * 1e6},
        {"predicted_start_us", number(floatAttr(op, kStartAttr))},
        {"predicted_end_us", number(floatAttr(op, kEndAttr))},
        {"predicted_us", number(predictedCost(task, op))}});
  }
  llvm::json::Object root{
      {"measured_makespan_us", run.makespan * 1e6},
      {"predicted_makespan_us",
       number(plan.predictedMakespan
                  ? std::optional<double>(*plan.predictedMakespan * 1e6)
                  : std::nullopt)},
      {"tasks", std::move(tasks)}};
  std::error_code error;
  llvm::raw_fd_ostream os(path, error);
  if (error)
    return rt::Status::failure("cannot write '" + path.str() +
                               "': " + error.message());
  os << llvm::formatv("{0:1}", llvm::json::Value(std::move(root))) << "\n";
  return rt::Status();
}

int runCompareOutputs(func::FuncOp function,
                      const std::vector<rt::HostTensor> *given) {
  rt::Result<std::vector<rt::HostTensor>> outputs =
      rt::loadOutputs(compareOutputs);
  if (!outputs)
    return fail(outputs.message());
  std::vector<double> errors;
  double maxError = 0;
  if (failed(compareWithInterpreter(function, nullptr, *outputs, errors,
                                    maxError, given)))
    return 1;
  bool ok = maxError <= tolerance;
  if (jsonOutput) {
    llvm::json::Array list;
    for (double error : errors)
      list.push_back(jsonNumber(error));
    llvm::json::Object root{{"file", inputFilename.getValue()},
                            {"function", function.getName().str()},
                            {"outputs_file", compareOutputs.getValue()},
                            {"seed", static_cast<int64_t>(seed.getValue())},
                            {"rel_errors", std::move(list)},
                            {"max_rel_error", jsonNumber(maxError)},
                            {"tolerance", tolerance.getValue()},
                            {"ok", ok}};
    llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(root)))
                 << "\n";
  } else {
    for (auto [i, out] : llvm::enumerate(*outputs))
      llvm::outs() << "  " << rt::describeOutput(i, out) << " rel-error "
                   << ::doppler::formatSignificant(errors[i], 3) << "\n";
    char tol[32];
    std::snprintf(tol, sizeof(tol), "%g", tolerance.getValue());
    llvm::outs() << "'" << compareOutputs << "' against the interpreter: max "
                 << "rel-error " << ::doppler::formatSignificant(maxError, 3)
                 << (ok ? " <= " : " > ") << "tolerance " << tol << ": "
                 << (ok ? "ok" : "FAILED") << "\n";
  }
  return ok ? 0 : 1;
}

/// Reads --arguments into `given` (left empty without it); an exit status
/// when the tool must stop.
std::optional<int>
readArguments(func::FuncOp function,
              std::optional<std::vector<rt::HostTensor>> &given) {
  if (argumentsFile.empty())
    return std::nullopt;
  if (!exportPlan.empty())
    return fail("--arguments cannot be used with --export-plan (a plan "
                "holds no argument values)");
  FailureOr<std::vector<rt::HostTensor>> loaded =
      loadArguments(function, argumentsFile);
  if (failed(loaded))
    return 1;
  given = std::move(*loaded);
  return std::nullopt;
}

/// The runtime plan of `function` (the ops behind its tasks in `taskOps`).
FailureOr<rt::Plan> buildPlan(func::FuncOp function,
                              std::vector<Operation *> &taskOps) {
  RuntimeProgramOptions programOptions;
  programOptions.delayTasks = delayTasks;
  programOptions.arguments = inputsPolicy == "first-user"
                                 ? ArgumentPlacement::FirstUser
                                 : ArgumentPlacement::EveryUser;
  return buildRuntimePlan(function, programOptions, &taskOps);
}

/// --export-plan: writes the plan and says so.
int writePlan(const rt::Plan &plan) {
  if (rt::Status status = rt::savePlan(plan, exportPlan); !status)
    return fail(status.message());
  llvm::outs() << "wrote " << exportPlan << ": @" << plan.function << ", "
               << plan.graph.size() << " tasks and inputs on "
               << plan.graph.numDevicesUsed() << " device(s)\n";
  return 0;
}

/// The options that depend on the plan: the device count (--devices, or
/// the devices the plan uses) and --check on tensors. Failure after an
/// error.
FailureOr<int> checkPlanOptions(func::FuncOp function, const rt::Plan &plan) {
  int used = plan.graph.numDevicesUsed();
  int devices = numDevices.getNumOccurrences()
                    ? numDevices.getValue()
                    : plan.devices.value_or(std::max(used, 1));
  if (devices < used) {
    fail("--devices " + llvm::Twine(devices) +
         " is too few: the program uses device " + llvm::Twine(used - 1) +
         " (needs --devices >= " + llvm::Twine(used) + ")");
    return failure();
  }
  if (check && delayTasks &&
      llvm::any_of(function.getOps(),
                   [](Operation &op) { return isa<TaskOp>(op); })) {
    fail("--check needs tensors; doppler.task ops are cost-only");
    return failure();
  }
  return devices;
}

/// Runs `plan` on `devices` devices of the chosen backend (a warm-up, then
/// --repeat timed runs) and fills the run's part of `report`; an exit
/// status on an error.
std::optional<int> runPlan(const rt::Plan &plan, int devices,
                           const std::vector<rt::HostTensor> *given,
                           rt::RunReport &report) {
  rt::tools::BackendChoice backend;
  backend.name = backendName;
  backend.devices = devices;
  backend.linkBandwidth = linkBandwidth;
  backend.linkLatency = linkLatency;
  rt::Result<std::unique_ptr<rt::Backend>> created =
      rt::tools::createBackend(backend);
  if (!created)
    return fail(created.message());
  rt::ExecutorOptions executorOptions;
  executorOptions.order = rt::parseReadyOrder(order).value();
  executorOptions.memoryPolicy = rt::parseMemoryPolicy(memoryPolicy).value();
  if (memoryLimit > 0)
    executorOptions.memoryLimits.assign(static_cast<size_t>(devices),
                                        static_cast<uint64_t>(memoryLimit));
  executorOptions.idleSpinMicroseconds = idleSpin;
  executorOptions.taskTimeoutSeconds = taskTimeout;
  if (!injectFault.empty()) {
    rt::Result<rt::FaultInjection> fault =
        rt::parseFaultInjection(injectFault);
    if (!fault)
      return fail("--inject-fault: " + fault.message());
    executorOptions.fault = *fault;
  }
  if (rt::Status status =
          mpi.setUp(plan, devices, backend.name, executorOptions);
      !status)
    return fail(status.message());
  rt::Executor executor(std::move(*created), executorOptions);

  rt::HostArguments arguments;
  if (given) {
    for (const rt::HostTensor &tensor : *given)
      arguments.buffers.push_back(tensor.bytes);
  } else {
    rt::Result<rt::HostArguments> seeded =
        rt::makeSeededArguments(plan, seed);
    if (!seeded)
      return fail(seeded.message());
    arguments = std::move(*seeded);
  }
  if (rt::Status same = mpi.agreeArguments(arguments); !same)
    return fail(same.message());
  rt::Result<rt::Measurement> measured = rt::measure(
      executor, plan.graph, rt::bindArguments(plan, arguments), repeat);
  if (!measured)
    return fail(measured.message());
  mpi.runsDone();

  report.file = inputFilename;
  report.function = plan.function;
  report.backend = backend.name;
  report.devices = devices;
  report.seed = seed;
  report.repeat = repeat;
  report.graph = &plan.graph;
  report.predicted = plan.predictedMakespan;
  report.measurement = std::move(*measured);
  report.memoryLimits = executorOptions.memoryLimits;
  return std::nullopt;
}

/// The outputs of the median run, the files asked for (--trace,
/// --write-outputs), --check against the interpreter, and the report
/// printed; the exit status.
int finishReport(func::FuncOp function, const rt::Plan &plan,
                 ArrayRef<Operation *> taskOps,
                 const std::vector<rt::HostTensor> *given,
                 rt::RunReport &report) {
  if (mpi.rank() != 0)
    return 0; // Rank 0 has every rank's figures and outputs.
  rt::Result<std::vector<rt::HostTensor>> outputs =
      rt::collectResults(plan, report.measurement.median);
  if (!outputs)
    return fail(outputs.message());
  report.outputs = std::move(*outputs);

  if (!traceFile.empty()) {
    if (rt::Status status =
            report.measurement.median.writeChromeTrace(plan.graph, traceFile);
        !status)
      return fail(status.message());
    report.trace = traceFile;
  }
  if (!scheduleFile.empty())
    if (rt::Status status = writeSchedule(plan, taskOps,
                                          report.measurement.median,
                                          scheduleFile);
        !status)
      return fail(status.message());
  if (!writeOutputs.empty())
    if (rt::Status status = rt::saveOutputs(report.outputs, writeOutputs);
        !status)
      return fail(status.message());
  if (check) {
    double maxError = 0;
    if (failed(compareWithInterpreter(function, &plan, report.outputs,
                                      report.errors, maxError, given)))
      return 1;
    report.maxRelError = maxError;
    report.tolerance = tolerance;
  }
  llvm::outs() << (jsonOutput ? report.json() : report.text());
  if (breakdown && !jsonOutput)
    printBreakdown(plan, taskOps, report.measurement.median);
  return report.ok() ? 0 : 1;
}

int run(ProgramFile &program) {
  FailureOr<func::FuncOp> function = program.load(inputFilename, functionName);
  if (failed(function))
    return 1;
  std::optional<std::vector<rt::HostTensor>> arguments;
  if (std::optional<int> status = readArguments(*function, arguments))
    return *status;
  const std::vector<rt::HostTensor> *given = arguments ? &*arguments : nullptr;
  if (!compareOutputs.empty())
    return runCompareOutputs(*function, given);

  std::vector<Operation *> taskOps;
  FailureOr<rt::Plan> plan = buildPlan(*function, taskOps);
  if (failed(plan))
    return 1;
  if (!exportPlan.empty())
    return mpi.active() ? fail("--export-plan writes a file: run it without "
                               "mpirun")
                        : writePlan(*plan);
  FailureOr<int> devices = checkPlanOptions(*function, *plan);
  if (failed(devices))
    return 1;
  // A memory-planned program (doppler-plan-memory) runs in its planned
  // order unless --order says otherwise: its evictions and memory waits
  // were chosen for that order, and any other order (even priority order,
  // which lets a device skip a task waiting for memory) can deadlock it.
  if (!order.getNumOccurrences() && (*function)->hasAttr(kOffloadAttr))
    order = "planned";
  rt::RunReport report;
  if (std::optional<int> status = runPlan(*plan, *devices, given, report))
    return *status;
  return finishReport(*function, *plan, taskOps, given, report);
}

/// Everything main does once MPI (under mpirun) has started.
int runMain(int argc, char **argv) {
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "Doppler runner: runs a placed function on the runtime and reports "
      "measured vs predicted makespan\n");
  if (backendName != "cpu" && backendName != "cuda")
    return fail("--backend must be cpu or cuda, not '" + backendName + "'");
  if (numDevices.getNumOccurrences() &&
      (numDevices < 1 || numDevices > ::doppler::kMaxDevices))
    return fail("--devices must be in [1, " +
                llvm::Twine(::doppler::kMaxDevices) + "], got " +
                llvm::Twine(numDevices.getValue()));
  if (repeat < 1)
    return fail("--repeat must be >= 1");
  // An empty file name is a mistake, not "leave it out": nothing would be
  // written or read while the run reports success.
  for (const cl::opt<std::string> *path :
       {&writeOutputs, &argumentsFile, &scheduleFile})
    if (path->getNumOccurrences() && path->empty())
      return fail("--" + path->ArgStr.str() + " needs a file name");
  if (!(tolerance >= 0))
    return fail("--tolerance must be a non-negative number");
  if (taskTimeout.getNumOccurrences() &&
      (!(taskTimeout >= 0) || !std::isfinite(taskTimeout)))
    return fail("--task-timeout must be a finite number of seconds >= 0 (0: "
                "no watchdog)");
  if (!(linkBandwidth >= 0) || !std::isfinite(linkBandwidth) ||
      !(linkLatency >= 0) || !std::isfinite(linkLatency))
    return fail("--link-bandwidth and --link-latency must be finite and >= 0");
  if (!rt::parseReadyOrder(order))
    return fail("--order must be fifo, priority, program or planned, not '" +
                order + "'");
  if (!rt::parseMemoryPolicy(memoryPolicy))
    return fail("--memory-policy must be wait or fail, not '" + memoryPolicy +
                "'");
  // Whole bytes, at most 2^63 (the runtime counts in uint64_t). 0 is not
  // "unlimited" (leave the option out for that): a limit of nothing is a
  // mistake, not a request.
  if (memoryLimit.getNumOccurrences() &&
      (!(memoryLimit >= 1) || !(memoryLimit <= 9.2e18) ||
       memoryLimit != std::floor(memoryLimit)))
    return fail("--memory-limit must be a whole number of bytes >= 1 (leave "
                "it out for no limit), got " +
                llvm::formatv("{0}", memoryLimit.getValue()).str());
  if (inputsPolicy != "every-user" && inputsPolicy != "first-user")
    return fail("--inputs must be every-user or first-user, not '" +
                inputsPolicy + "'");

  ProgramFile program;
  return run(program);
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  if (rt::Status started = mpi.start(&argc, &argv); !started)
    return fail(started.message());
  return mpi.finishWith("doppler-run", runMain(argc, argv));
}
