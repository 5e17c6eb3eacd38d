//===- CApi.cpp - Plain C interface to the runtime ------------------------===//
//
// Thin wrappers: each call converts its arguments, forwards to the C++ API
// and turns a failure into a negative return plus a stored message. No C++
// exception crosses the boundary.
//
//===----------------------------------------------------------------------===//

#include "doppler/runtime/CApi.h"
#include "doppler/runtime/CpuBackend.h"
#include "doppler/runtime/Executor.h"
#include "doppler/runtime/Plan.h"

#include <cmath>
#include <cstring>
#include <exception>
#include <iostream>
#include <memory>

using namespace doppler;
using namespace doppler::runtime;

struct DopplerRtGraph {
  // Shared with runs, which need the graph to name tasks in traces.
  std::shared_ptr<TaskGraph> graph = std::make_shared<TaskGraph>();
  std::string error;
  // The function's signature (dopplerRtGraphAddArgument and friends): a
  // Plan whose graph stays empty until one is needed.
  Plan signature;
};

struct DopplerRtExecutor {
  std::unique_ptr<Executor> executor;
};

struct DopplerRtRun {
  std::shared_ptr<const TaskGraph> graph;
  std::optional<RunResult> result;
  std::string error;
};

namespace {

/// Runs `body` (returning Result<ValueId>) and records its error on `graph`.
template <typename Body>
DopplerRtValue buildValue(DopplerRtGraph *graph, Body &&body) {
  if (!graph)
    return -1;
  try {
    Result<ValueId> value = body(*graph->graph);
    if (!value) {
      graph->error = value.message();
      return -1;
    }
    graph->error.clear();
    return *value;
  } catch (const std::exception &e) {
    graph->error = e.what();
  } catch (...) {
    graph->error = "unknown exception";
  }
  return -1;
}

int32_t recordStatus(DopplerRtGraph *graph, const Status &status) {
  graph->error = status.message();
  return status.ok() ? 0 : -1;
}

/// The graph with its signature, as a plan (a copy of the graph).
Plan toPlan(const DopplerRtGraph &graph) {
  Plan plan = graph.signature;
  plan.graph = *graph.graph;
  return plan;
}

Result<ElementType> toElementType(int32_t code) {
  switch (code) {
  case DOPPLER_RT_F32:
    return ElementType::F32;
  case DOPPLER_RT_F64:
    return ElementType::F64;
  case DOPPLER_RT_F16:
    return ElementType::F16;
  case DOPPLER_RT_I32:
    return ElementType::I32;
  case DOPPLER_RT_I64:
    return ElementType::I64;
  default:
    break;
  }
  return Status::failure("unknown element type code " + std::to_string(code));
}

Result<std::vector<int64_t>> toVector(const int64_t *data, int32_t count,
                                      const char *what) {
  if (count < 0 || (count > 0 && !data))
    return Status::failure(std::string("invalid ") + what + " array");
  return std::vector<int64_t>(data, data + count);
}

/// A window geometry from C arrays of `count` entries each (`kernel` may
/// be null: left empty).
Result<WindowGeometry> toGeometry(const int64_t *kernel,
                                  const int64_t *strides,
                                  const int64_t *dilations,
                                  const int64_t *paddingLow,
                                  const int64_t *paddingHigh, int32_t count) {
  WindowGeometry geometry;
  struct Field {
    const int64_t *data;
    const char *name;
    std::vector<int64_t> *values;
  };
  const Field fields[] = {{kernel, "kernel", &geometry.kernel},
                          {strides, "strides", &geometry.strides},
                          {dilations, "dilations", &geometry.dilations},
                          {paddingLow, "padding (low)", &geometry.padLow},
                          {paddingHigh, "padding (high)", &geometry.padHigh}};
  for (const Field &field : fields) {
    if (field.values == &geometry.kernel && !kernel)
      continue;
    Result<std::vector<int64_t>> values =
        toVector(field.data, count, field.name);
    if (!values)
      return values.status();
    *field.values = std::move(*values);
  }
  return geometry;
}

} // namespace

extern "C" {

DopplerRtGraph *dopplerRtGraphCreate(void) {
  try {
    return new DopplerRtGraph();
  } catch (...) {
    return nullptr;
  }
}

void dopplerRtGraphDestroy(DopplerRtGraph *graph) { delete graph; }

const char *dopplerRtGraphError(const DopplerRtGraph *graph) {
  return graph ? graph->error.c_str() : "null graph";
}

DopplerRtValue dopplerRtGraphAddInput(DopplerRtGraph *graph, int32_t device,
                                      int32_t elementType, const int64_t *shape,
                                      int32_t rank) {
  return buildValue(graph, [&](TaskGraph &g) -> Result<ValueId> {
    Result<ElementType> type = toElementType(elementType);
    if (!type)
      return type.status();
    Result<std::vector<int64_t>> dims = toVector(shape, rank, "shape");
    if (!dims)
      return dims.status();
    return g.addInput(device, std::move(*dims), *type);
  });
}

DopplerRtValue dopplerRtGraphAddEinsum(DopplerRtGraph *graph, int32_t device,
                                       const char *spec, const char *join,
                                       const char *aggregation, double scalar,
                                       const DopplerRtValue *inputs,
                                       int32_t numInputs) {
  return buildValue(graph, [&](TaskGraph &g) -> Result<ValueId> {
    if (!spec || !join)
      return Status::failure("einsum needs a spec and a join");
    std::optional<JoinKind> joinKind = parseJoinKind(join);
    if (!joinKind)
      return Status::failure("unknown join '" + std::string(join) + "'");
    std::optional<AggKind> aggKind;
    if (aggregation && *aggregation) {
      aggKind = parseAggKind(aggregation);
      if (!aggKind)
        return Status::failure("unknown aggregation '" +
                               std::string(aggregation) + "'");
    }
    Result<std::vector<int64_t>> operands =
        toVector(inputs, numInputs, "inputs");
    if (!operands)
      return operands.status();
    return g.addEinsum(device, spec, *joinKind, aggKind, std::move(*operands),
                       scalar);
  });
}

DopplerRtValue dopplerRtGraphAddFused(DopplerRtGraph *graph, int32_t device,
                                      const char *spec, const char *program,
                                      const DopplerRtValue *inputs,
                                      int32_t numInputs) {
  return buildValue(graph, [&](TaskGraph &g) -> Result<ValueId> {
    if (!spec || !program)
      return Status::failure("fused needs a spec and a program");
    Result<std::vector<int64_t>> operands =
        toVector(inputs, numInputs, "inputs");
    if (!operands)
      return operands.status();
    return g.addFused(device, spec, program, std::move(*operands));
  });
}

DopplerRtValue dopplerRtGraphAddTransfer(DopplerRtGraph *graph,
                                         DopplerRtValue input, int32_t device) {
  return buildValue(graph,
                    [&](TaskGraph &g) { return g.addTransfer(input, device); });
}

DopplerRtValue dopplerRtGraphAddFill(DopplerRtGraph *graph, int32_t device,
                                     int32_t elementType, const int64_t *shape,
                                     int32_t rank, double value) {
  return buildValue(graph, [&](TaskGraph &g) -> Result<ValueId> {
    Result<ElementType> type = toElementType(elementType);
    if (!type)
      return type.status();
    Result<std::vector<int64_t>> dims = toVector(shape, rank, "shape");
    if (!dims)
      return dims.status();
    return g.addFill(device, std::move(*dims), value, *type);
  });
}

DopplerRtValue dopplerRtGraphAddSlice(DopplerRtGraph *graph, int32_t device,
                                      DopplerRtValue input,
                                      const int64_t *offsets,
                                      const int64_t *sizes, int32_t rank) {
  return buildValue(graph, [&](TaskGraph &g) -> Result<ValueId> {
    Result<std::vector<int64_t>> starts = toVector(offsets, rank, "offsets");
    Result<std::vector<int64_t>> extents = toVector(sizes, rank, "sizes");
    if (!starts)
      return starts.status();
    if (!extents)
      return extents.status();
    return g.addSlice(device, input, std::move(*starts), std::move(*extents));
  });
}

DopplerRtValue dopplerRtGraphAddReshape(DopplerRtGraph *graph, int32_t device,
                                        DopplerRtValue input,
                                        const int64_t *shape, int32_t rank) {
  return buildValue(graph, [&](TaskGraph &g) -> Result<ValueId> {
    Result<std::vector<int64_t>> dims = toVector(shape, rank, "shape");
    if (!dims)
      return dims.status();
    return g.addReshape(device, input, std::move(*dims));
  });
}

DopplerRtValue dopplerRtGraphAddGather(DopplerRtGraph *graph, int32_t device,
                                       DopplerRtValue table,
                                       DopplerRtValue indices, int64_t axis) {
  return buildValue(graph, [&](TaskGraph &g) {
    return g.addGather(device, table, indices, axis);
  });
}

DopplerRtValue dopplerRtGraphAddConvolution(
    DopplerRtGraph *graph, int32_t device, DopplerRtValue input,
    DopplerRtValue weight, int64_t groups, const int64_t *strides,
    const int64_t *dilations, const int64_t *paddingLow,
    const int64_t *paddingHigh, int32_t spatialDims) {
  return buildValue(graph, [&](TaskGraph &g) -> Result<ValueId> {
    Result<WindowGeometry> geometry =
        toGeometry(nullptr, strides, dilations, paddingLow, paddingHigh,
                   spatialDims);
    if (!geometry)
      return geometry.status().withContext("conv");
    // The kernel: the weight's spatial extents (addConvolution fills it).
    return g.addConvolution(device, input, weight, groups,
                            std::move(*geometry));
  });
}

DopplerRtValue dopplerRtGraphAddPool(DopplerRtGraph *graph, int32_t device,
                                     const char *kind, DopplerRtValue input,
                                     const int64_t *kernel,
                                     const int64_t *strides,
                                     const int64_t *dilations,
                                     const int64_t *paddingLow,
                                     const int64_t *paddingHigh,
                                     int32_t spatialDims) {
  return buildValue(graph, [&](TaskGraph &g) -> Result<ValueId> {
    std::optional<PoolKind> poolKind =
        kind ? parsePoolKind(kind) : std::nullopt;
    if (!poolKind)
      return Status::failure("pool: unknown kind '" +
                             std::string(kind ? kind : "(null)") +
                             "' (expected max or avg)");
    Result<WindowGeometry> geometry = toGeometry(
        kernel, strides, dilations, paddingLow, paddingHigh, spatialDims);
    if (!geometry)
      return geometry.status().withContext("pool");
    return g.addPool(device, *poolKind, input, std::move(*geometry));
  });
}

DopplerRtValue dopplerRtGraphAddAssemble(DopplerRtGraph *graph, int32_t device,
                                         const int64_t *gridShape, int32_t rank,
                                         const int64_t *blockExtents,
                                         const DopplerRtValue *blocks,
                                         int32_t numBlocks) {
  return buildValue(graph, [&](TaskGraph &g) -> Result<ValueId> {
    Result<std::vector<int64_t>> grid = toVector(gridShape, rank, "grid");
    if (!grid)
      return grid.status();
    int64_t totalExtents = 0;
    for (int64_t count : *grid) {
      if (count < 0 || count > (int64_t(1) << 30))
        return Status::failure("invalid grid shape");
      totalExtents += count;
    }
    Result<std::vector<int64_t>> flat = toVector(
        blockExtents, static_cast<int32_t>(totalExtents), "block extents");
    if (!flat)
      return flat.status();
    std::vector<std::vector<int64_t>> extents;
    size_t next = 0;
    for (int64_t count : *grid) {
      extents.emplace_back(flat->begin() + next, flat->begin() + next + count);
      next += count;
    }
    Result<std::vector<int64_t>> operands =
        toVector(blocks, numBlocks, "blocks");
    if (!operands)
      return operands.status();
    return g.addAssemble(device, std::move(extents), std::move(*operands));
  });
}

DopplerRtValue dopplerRtGraphAddDelay(DopplerRtGraph *graph, int32_t device,
                                      double seconds,
                                      const DopplerRtValue *inputs,
                                      int32_t numInputs) {
  return buildValue(graph, [&](TaskGraph &g) -> Result<ValueId> {
    Result<std::vector<int64_t>> operands =
        toVector(inputs, numInputs, "inputs");
    if (!operands)
      return operands.status();
    return g.addDelay(device, seconds, std::move(*operands));
  });
}

DopplerRtValue dopplerRtGraphAddEvict(DopplerRtGraph *graph,
                                      DopplerRtValue input) {
  return buildValue(graph, [&](TaskGraph &g) { return g.addEvict(input); });
}

DopplerRtValue dopplerRtGraphAddReload(DopplerRtGraph *graph,
                                       DopplerRtValue stash, int32_t device,
                                       const DopplerRtValue *after,
                                       int32_t numAfter) {
  return buildValue(graph, [&](TaskGraph &g) -> Result<ValueId> {
    Result<std::vector<int64_t>> triggers = toVector(after, numAfter, "after");
    if (!triggers)
      return triggers.status();
    return g.addReload(stash, device, std::move(*triggers));
  });
}

int32_t dopplerRtGraphAddArgument(DopplerRtGraph *graph, int32_t elementType,
                                  const int64_t *shape, int32_t rank) {
  if (!graph)
    return -1;
  try {
    Result<ElementType> type = toElementType(elementType);
    if (!type)
      return recordStatus(graph, type.status());
    Result<std::vector<int64_t>> dims = toVector(shape, rank, "shape");
    if (!dims)
      return recordStatus(graph, dims.status());
    for (int64_t extent : *dims)
      if (extent < 0)
        return recordStatus(graph,
                            Status::failure("negative extent in argument"));
    graph->error.clear();
    return static_cast<int32_t>(
        graph->signature.addArgument(*type, std::move(*dims)));
  } catch (...) {
    graph->error = "out of memory";
    return -1;
  }
}

int32_t dopplerRtGraphBindArgument(DopplerRtGraph *graph, DopplerRtValue input,
                                   int32_t argument) {
  if (!graph)
    return -1;
  const TaskGraph &g = *graph->graph;
  std::vector<PlanArgument> &arguments = graph->signature.arguments;
  if (!g.contains(input) || g.task(input).kind != TaskKind::Input)
    return recordStatus(graph, Status::failure("%" + std::to_string(input) +
                                               " is not a graph input"));
  if (argument < 0 || argument >= static_cast<int32_t>(arguments.size()))
    return recordStatus(graph,
                        Status::failure("argument " + std::to_string(argument) +
                                        " was not declared"));
  const PlanArgument &arg = arguments[argument];
  if (g.task(input).type != arg.type || g.task(input).shape != arg.shape)
    return recordStatus(
        graph, Status::failure("graph input %" + std::to_string(input) +
                               " and argument " + std::to_string(argument) +
                               " differ in type or shape"));
  graph->signature.inputArgument[input] = argument;
  graph->error.clear();
  return 0;
}

int32_t dopplerRtGraphAddResult(DopplerRtGraph *graph, DopplerRtValue value) {
  if (!graph)
    return -1;
  if (Status status = graph->graph->markOutput(value); !status)
    return recordStatus(graph, status);
  graph->signature.results.push_back(value);
  graph->error.clear();
  return 0;
}

void dopplerRtGraphSetFunction(DopplerRtGraph *graph, const char *name,
                               double predictedMakespan) {
  if (!graph)
    return;
  graph->signature.function = name ? name : "";
  if (predictedMakespan >= 0 && std::isfinite(predictedMakespan))
    graph->signature.predictedMakespan = predictedMakespan;
  else
    graph->signature.predictedMakespan.reset();
}

DopplerRtValue dopplerRtGraphAddTimedTransfer(DopplerRtGraph *graph,
                                              DopplerRtValue input,
                                              int32_t device, double seconds) {
  return buildValue(graph, [&](TaskGraph &g) -> Result<ValueId> {
    if (!(seconds >= 0))
      return Status::failure("timed transfer: seconds must be >= 0");
    return g.addTransfer(input, device, seconds);
  });
}

int32_t dopplerRtGraphWritePlan(DopplerRtGraph *graph, const char *path) {
  if (!graph)
    return -1;
  if (!path)
    return recordStatus(graph, Status::failure("no plan path"));
  try {
    Plan plan = toPlan(*graph);
    if (Status status = plan.verify(); !status)
      return recordStatus(graph, status);
    return recordStatus(graph, savePlan(plan, path));
  } catch (const std::exception &e) {
    return recordStatus(graph, Status::failure(e.what()));
  }
}

int32_t dopplerRtGraphRunSeeded(DopplerRtGraph *graph, int32_t numDevices,
                                uint64_t seed, const char *outputsPath) {
  if (!graph)
    return -1;
  auto failWith = [&](const Status &status) {
    std::cerr << "doppler runtime: error: " << status.message() << "\n";
    return recordStatus(graph, status);
  };
  try {
    Plan plan = toPlan(*graph);
    if (Status status = plan.verify(); !status)
      return failWith(status);
    CpuBackendOptions options;
    options.numDevices = numDevices;
    Result<std::unique_ptr<Backend>> backend = createCpuBackend(options);
    if (!backend)
      return failWith(backend.status());
    Executor executor(std::move(*backend));
    Result<HostArguments> arguments = makeSeededArguments(plan, seed);
    if (!arguments)
      return failWith(arguments.status());
    Result<RunResult> run =
        executor.run(plan.graph, bindArguments(plan, *arguments));
    if (!run)
      return failWith(run.status());
    Result<std::vector<HostTensor>> results = collectResults(plan, *run);
    if (!results)
      return failWith(results.status());
    for (size_t i = 0; i < results->size(); ++i)
      std::cout << describeOutput(i, (*results)[i]) << "\n";
    std::cout.flush();
    if (outputsPath && *outputsPath)
      if (Status status = saveOutputs(*results, outputsPath); !status)
        return failWith(status);
    graph->error.clear();
    return 0;
  } catch (const std::exception &e) {
    return failWith(Status::failure(e.what()));
  }
}

int32_t dopplerRtGraphMarkOutput(DopplerRtGraph *graph, DopplerRtValue value) {
  if (!graph)
    return -1;
  return recordStatus(graph, graph->graph->markOutput(value));
}

int32_t dopplerRtGraphSetPriority(DopplerRtGraph *graph, DopplerRtValue value,
                                  int64_t priority) {
  if (!graph)
    return -1;
  return recordStatus(graph, graph->graph->setPriority(value, priority));
}

DopplerRtExecutor *dopplerRtCpuExecutorCreate(int32_t numDevices,
                                              double linkBandwidth,
                                              double linkLatency) {
  try {
    CpuBackendOptions options;
    options.numDevices = numDevices;
    options.linkBandwidth = linkBandwidth;
    options.linkLatency = linkLatency;
    Result<std::unique_ptr<Backend>> backend = createCpuBackend(options);
    if (!backend)
      return nullptr;
    auto *handle = new DopplerRtExecutor();
    handle->executor = std::make_unique<Executor>(std::move(*backend));
    return handle;
  } catch (...) {
    return nullptr;
  }
}

void dopplerRtExecutorDestroy(DopplerRtExecutor *executor) { delete executor; }

int32_t dopplerRtExecutorSetMemoryLimit(DopplerRtExecutor *executor,
                                        int32_t device, uint64_t bytes) {
  if (!executor || device < 0 || device >= executor->executor->numDevices())
    return -1;
  executor->executor->setMemoryLimit(device, bytes);
  return 0;
}

void dopplerRtExecutorSetPriorityOrder(DopplerRtExecutor *executor,
                                       int32_t byPriority) {
  if (executor)
    executor->executor->setReadyOrder(byPriority ? ReadyOrder::Priority
                                                 : ReadyOrder::Fifo);
}

int32_t dopplerRtExecutorSetReadyOrder(DopplerRtExecutor *executor,
                                       int32_t order) {
  if (!executor)
    return -1;
  switch (order) {
  case DOPPLER_RT_ORDER_FIFO:
    executor->executor->setReadyOrder(ReadyOrder::Fifo);
    return 0;
  case DOPPLER_RT_ORDER_PRIORITY:
    executor->executor->setReadyOrder(ReadyOrder::Priority);
    return 0;
  case DOPPLER_RT_ORDER_PROGRAM:
    executor->executor->setReadyOrder(ReadyOrder::Program);
    return 0;
  case DOPPLER_RT_ORDER_PLANNED:
    executor->executor->setReadyOrder(ReadyOrder::Planned);
    return 0;
  default:
    return -1;
  }
}

int32_t dopplerRtExecutorSetMemoryPolicy(DopplerRtExecutor *executor,
                                         int32_t policy) {
  if (!executor)
    return -1;
  switch (policy) {
  case DOPPLER_RT_MEMORY_FAIL:
    executor->executor->setMemoryPolicy(MemoryPolicy::Fail);
    return 0;
  case DOPPLER_RT_MEMORY_WAIT:
    executor->executor->setMemoryPolicy(MemoryPolicy::Wait);
    return 0;
  default:
    return -1;
  }
}

DopplerRtRun *dopplerRtExecutorRun(DopplerRtExecutor *executor,
                                   const DopplerRtGraph *graph,
                                   const DopplerRtValue *inputs,
                                   const void *const *data, int32_t numInputs) {
  if (!executor || !graph)
    return nullptr;
  try {
    auto *run = new DopplerRtRun();
    run->graph = graph->graph;
    if (numInputs < 0 || (numInputs > 0 && (!inputs || !data))) {
      run->error = "invalid input bindings";
      return run;
    }
    InputBindings bindings;
    for (int32_t i = 0; i < numInputs; ++i)
      bindings[inputs[i]] = data[i];
    Result<RunResult> result = executor->executor->run(*graph->graph, bindings);
    if (result)
      run->result = std::move(*result);
    else
      run->error = result.message();
    return run;
  } catch (...) {
    return nullptr;
  }
}

const char *dopplerRtRunError(const DopplerRtRun *run) {
  if (!run)
    return "null run";
  return run->result ? nullptr : run->error.c_str();
}

double dopplerRtRunMakespan(const DopplerRtRun *run) {
  return run && run->result ? run->result->makespan : 0.0;
}

int32_t dopplerRtRunTaskTime(const DopplerRtRun *run, DopplerRtValue value,
                             double *start, double *end) {
  if (!run || !run->result || value < 0 ||
      value >= static_cast<DopplerRtValue>(run->result->tasks.size()))
    return -1;
  const TaskTiming &timing = run->result->tasks[value];
  if (!timing.ran)
    return -1;
  if (start)
    *start = timing.start;
  if (end)
    *end = timing.end;
  return 0;
}

uint64_t dopplerRtRunPeakBytes(const DopplerRtRun *run, int32_t device) {
  if (!run || !run->result || device < 0 ||
      device >= static_cast<int32_t>(run->result->devices.size()))
    return 0;
  return run->result->devices[device].peakBytes;
}

uint64_t dopplerRtRunHostPeakBytes(const DopplerRtRun *run) {
  if (!run || !run->result)
    return 0;
  return run->result->hostPeakBytes;
}

int32_t dopplerRtRunReadOutput(const DopplerRtRun *run, DopplerRtValue value,
                               void *dst, uint64_t bytes) {
  if (!run || !run->result || (!dst && bytes))
    return -1;
  auto it = run->result->outputs.find(value);
  if (it == run->result->outputs.end() || it->second.bytes.size() != bytes)
    return -1;
  if (bytes)
    std::memcpy(dst, it->second.bytes.data(), bytes);
  return 0;
}

int32_t dopplerRtRunWriteTrace(const DopplerRtRun *run, const char *path) {
  if (!run || !run->result || !path)
    return -1;
  try {
    return run->result->writeChromeTrace(*run->graph, path).ok() ? 0 : -1;
  } catch (...) {
    return -1;
  }
}

void dopplerRtRunDestroy(DopplerRtRun *run) { delete run; }

} // extern "C"
