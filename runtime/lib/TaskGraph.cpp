//===- TaskGraph.cpp - The runtime's task graph ---------------------------===//

#include "doppler/runtime/TaskGraph.h"

#include "Doppler/Support/CheckedSize.h"
#include "Doppler/Support/Limits.h"
#include "Doppler/Support/NumberFormat.h"

#include <algorithm>
#include <atomic>
#include <cmath>

namespace doppler::runtime {
namespace {

// Graph versions are unique process-wide, so a cache keyed by version can
// never confuse two graphs (even one reallocated at the same address).
uint64_t nextVersion() {
  static std::atomic<uint64_t> counter{0};
  return ++counter;
}

Status checkShape(const Shape &shape) {
  for (int64_t extent : shape)
    if (extent < 0)
      return Status::failure("negative extent in shape " +
                             shapeToString(shape));
  return Status();
}

Status checkDevice(int device) {
  if (device < 0)
    return Status::failure("device id " + std::to_string(device) +
                           " is negative");
  if (device >= kMaxDevices)
    return Status::failure("device id " + std::to_string(device) +
                           " is past the limit of " +
                           std::to_string(kMaxDevices) + " devices");
  return Status();
}

/// A duration the runtime emulates (a delay, a transfer's fixed time):
/// finite, non-negative and at most kMaxEmulatedSeconds, or the run would
/// not model a cost but hang.
Status checkEmulatedSeconds(double seconds, const char *what) {
  if (!(seconds >= 0) || !std::isfinite(seconds))
    return Status::failure(std::string(what) +
                           ": duration must be finite and >= 0");
  if (seconds > kMaxEmulatedSeconds)
    return Status::failure(std::string(what) + ": duration " +
                           formatShortest(seconds) +
                           " s is more than the limit of " +
                           formatShortest(kMaxEmulatedSeconds) + " s");
  return Status();
}

/// A window op's element type: what the kernels run (f32, f64).
Status checkWindowType(ElementType type, const char *what) {
  if (type != ElementType::F32 && type != ElementType::F64)
    return Status::failure(std::string(what) + ": element type " +
                           std::string(elementTypeName(type)) +
                           " is not supported (f32 or f64)");
  return Status();
}

/// "3x3" for {3, 3}.
std::string extentsText(const std::vector<int64_t> &values) {
  std::string text;
  for (size_t i = 0; i < values.size(); ++i)
    text += (i ? "x" : "") + std::to_string(values[i]);
  return text;
}

} // namespace

std::string_view taskKindName(TaskKind kind) {
  switch (kind) {
  case TaskKind::Input:
    return "input";
  case TaskKind::Einsum:
    return "einsum";
  case TaskKind::Transfer:
    return "transfer";
  case TaskKind::Fill:
    return "fill";
  case TaskKind::Slice:
    return "slice";
  case TaskKind::Assemble:
    return "assemble";
  case TaskKind::Delay:
    return "delay";
  case TaskKind::Fused:
    return "fused";
  case TaskKind::Evict:
    return "evict";
  case TaskKind::Reload:
    return "reload";
  case TaskKind::Reshape:
    return "reshape";
  case TaskKind::Conv:
    return "conv";
  case TaskKind::Pool:
    return "pool";
  case TaskKind::Gather:
    return "gather";
  }
  return "?";
}

Status TaskGraph::checkValue(ValueId value, const char *role) const {
  if (!contains(value))
    return Status::failure(std::string(role) + " %" + std::to_string(value) +
                           " does not exist (graph has " +
                           std::to_string(size()) + " values)");
  return Status();
}

Status TaskGraph::checkNotOnHost(ValueId value, const char *role) const {
  if (tasks_[value].onHost)
    return Status::failure(std::string(role) + " %" + std::to_string(value) +
                           " is a host value (the output of an evict); only "
                           "a reload may read it");
  return Status();
}

Status TaskGraph::checkOnDevice(ValueId value, int device,
                                size_t operand) const {
  if (Status status = checkValue(value, "operand"); !status)
    return status;
  if (Status status = checkNotOnHost(value, "operand"); !status)
    return status;
  if (tasks_[value].device != device)
    return Status::failure("operand " + std::to_string(operand) + " (%" +
                           std::to_string(value) + ") lives on device " +
                           std::to_string(tasks_[value].device) +
                           ", not on the task's device " +
                           std::to_string(device) + " (add a transfer)");
  return Status();
}

uint64_t TaskGraph::byteSize(ValueId value) const {
  const Task &task = tasks_[value];
  return runtime::byteSize(task.shape, task.type);
}

Result<ValueId> TaskGraph::add(Task task) {
  // Every builder ends here, so no task of any kind holds a size that
  // wraps around: byteSize(), numElements() and the kernels' loops stay exact.
  std::string problem = checkedSizeProblem(task.shape, elementSize(task.type));
  if (!problem.empty())
    return Status::failure(std::string(taskKindName(task.kind)) + " of shape " +
                           shapeToString(task.shape) + " " +
                           std::string(elementTypeName(task.type)) + " " +
                           problem);
  ValueId id = size();
  for (ValueId input : task.inputs)
    if (std::find(task.uniqueInputs.begin(), task.uniqueInputs.end(), input) ==
        task.uniqueInputs.end())
      task.uniqueInputs.push_back(input);
  for (ValueId input : task.uniqueInputs)
    consumers_[input].push_back(id);
  for (ValueId trigger : task.after)
    controlDependents_[trigger].push_back(id);
  numDevicesUsed_ = std::max(numDevicesUsed_, task.device + 1);
  if (task.kind == TaskKind::Input)
    inputIds_.push_back(id);
  tasks_.push_back(std::move(task));
  consumers_.emplace_back();
  controlDependents_.emplace_back();
  isOutput_.push_back(false);
  version_ = nextVersion();
  return id;
}

Result<ValueId> TaskGraph::addInput(int device, Shape shape, ElementType type) {
  if (Status status = checkDevice(device); !status)
    return status.withContext("input");
  if (Status status = checkShape(shape); !status)
    return status.withContext("input");
  Task task;
  task.kind = TaskKind::Input;
  task.device = device;
  task.type = type;
  task.shape = std::move(shape);
  return add(std::move(task));
}

Result<EinsumSignature>
checkRuntimeEinsum(const EinsumSpec &spec, JoinKind join,
                   std::optional<AggKind> aggregation, double scalar,
                   const std::vector<Shape> &inputShapes) {
  std::string error;
  std::optional<EinsumSignature> signature = checkEinsumSignature(
      spec, join,
      joinTakesScalar(join) ? std::optional<double>(scalar) : std::nullopt,
      spec.contracts() ? aggregation : std::nullopt, inputShapes, &error);
  if (!signature)
    return Status::failure(error);
  return std::move(*signature);
}

Result<EinsumSpec> TaskGraph::parseTaskSpec(int device,
                                            std::string_view specText,
                                            const std::vector<ValueId> &inputs,
                                            const std::string &context) const {
  if (Status status = checkDevice(device); !status)
    return status.withContext(context);
  std::string error;
  std::optional<EinsumSpec> spec = EinsumSpec::parse(specText, &error);
  if (!spec)
    return Status::failure(error);
  if (inputs.size() != spec->numInputs())
    return Status::failure(context + ": expects " +
                           std::to_string(spec->numInputs()) +
                           " operand(s), got " + std::to_string(inputs.size()));
  return std::move(*spec);
}

Result<ValueId> TaskGraph::addEinsum(int device, std::string_view specText,
                                     JoinKind join,
                                     std::optional<AggKind> aggregation,
                                     std::vector<ValueId> inputs,
                                     double scalar,
                                     std::optional<ElementType> outputType) {
  std::string context = "einsum '" + std::string(specText) + "'";
  Result<EinsumSpec> spec = parseTaskSpec(device, specText, inputs, context);
  if (!spec)
    return spec.status();
  if (!joinTakesScalar(join))
    scalar = 0;

  ElementType type = ElementType::F32;
  Result<std::vector<Shape>> shapes =
      operandShapes(inputs, device, context, type);
  if (!shapes)
    return shapes.status();
  const ElementType inputType = type;
  if (outputType && *outputType != type) {
    // A conversion: identity over one input, same term, to f32 or f64.
    if (join != JoinKind::Identity || !spec->isIdentity() ||
        type == ElementType::F16 ||
        (*outputType != ElementType::F32 && *outputType != ElementType::F64))
      return Status::failure(
          context + ": converts " + std::string(elementTypeName(type)) +
          " to " + std::string(elementTypeName(*outputType)) +
          "; only the identity join over one input with the output's term "
          "converts, from i32, i64, f32 or f64 to f32 or f64");
    type = *outputType;
  } else if (isIntegerType(type))
    return Status::failure(context + ": operands of element type " +
                           std::string(elementTypeName(type)) +
                           "; einsums take floating-point tensors only "
                           "(integers are gather indices)");
  Result<EinsumSignature> signature =
      checkRuntimeEinsum(*spec, join, aggregation, scalar, *shapes);
  if (!signature)
    return signature.status().withContext(context);

  Task task;
  task.kind = TaskKind::Einsum;
  task.device = device;
  task.type = type;
  task.convertsFrom = inputType;
  task.shape = std::move(signature->outputShape);
  task.inputs = std::move(inputs);
  task.spec = std::move(*spec);
  task.join = join;
  // Aggregating over nothing is the identity; keep "has aggregation" to mean
  // "reduces something".
  task.aggregation = task.spec.contracts() ? aggregation : std::nullopt;
  task.scalar = scalar;
  return add(std::move(task));
}

Result<std::vector<Shape>>
TaskGraph::operandShapes(const std::vector<ValueId> &inputs, int device,
                         const std::string &context, ElementType &type) const {
  std::vector<Shape> shapes;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (Status status = checkOnDevice(inputs[i], device, i); !status)
      return status.withContext(context);
    shapes.push_back(tasks_[inputs[i]].shape);
  }
  if (inputs.empty())
    return shapes;
  type = tasks_[inputs[0]].type;
  for (size_t i = 1; i < inputs.size(); ++i)
    if (tasks_[inputs[i]].type != type)
      return Status::failure(
          context + ": operands have different element types (" +
          std::string(elementTypeName(type)) + " and " +
          std::string(elementTypeName(tasks_[inputs[i]].type)) + ")");
  return shapes;
}

Result<ValueId> TaskGraph::addFused(int device, std::string_view specText,
                                    std::string_view programText,
                                    std::vector<ValueId> inputs) {
  std::string context = "fused '" + std::string(specText) + "'";
  Result<EinsumSpec> spec = parseTaskSpec(device, specText, inputs, context);
  if (!spec)
    return spec.status();
  ElementType type = ElementType::F32;
  Result<std::vector<Shape>> shapes =
      operandShapes(inputs, device, context, type);
  if (!shapes)
    return shapes.status();
  if (isIntegerType(type))
    return Status::failure(context + ": operands of element type " +
                           std::string(elementTypeName(type)) +
                           "; fused ops take floating-point tensors only "
                           "(integers are gather indices)");
  JoinProgram program;
  std::string error;
  std::optional<EinsumSignature> signature =
      checkFusedSignature(*spec, programText, *shapes, &program, &error);
  if (!signature)
    return Status::failure(context + ": " + error);

  Task task;
  task.kind = TaskKind::Fused;
  task.device = device;
  task.type = type;
  task.shape = std::move(signature->outputShape);
  task.inputs = std::move(inputs);
  task.spec = std::move(*spec);
  task.program = std::move(program);
  return add(std::move(task));
}

Result<ValueId> TaskGraph::addTransfer(ValueId input, int device,
                                       double fixedSeconds) {
  if (Status status = checkDevice(device); !status)
    return status.withContext("transfer");
  if (Status status = checkValue(input, "transfer source"); !status)
    return status;
  if (Status status = checkNotOnHost(input, "transfer source"); !status)
    return status;
  // A negative duration means "costed by the link"; any other is emulated.
  if (std::isnan(fixedSeconds))
    return Status::failure("transfer: fixed duration is NaN");
  if (fixedSeconds >= 0)
    if (Status status = checkEmulatedSeconds(fixedSeconds, "transfer");
        !status)
      return status;
  Task task;
  task.kind = TaskKind::Transfer;
  task.device = device;
  task.type = tasks_[input].type;
  task.shape = tasks_[input].shape;
  task.inputs = {input};
  task.seconds = fixedSeconds < 0 ? -1 : fixedSeconds;
  return add(std::move(task));
}

Result<ValueId> TaskGraph::onDevice(ValueId value, int device) {
  if (Status status = checkValue(value, "value"); !status)
    return status;
  if (Status status = checkNotOnHost(value, "value"); !status)
    return status;
  if (tasks_[value].device == device)
    return value;
  auto key = std::make_pair(value, device);
  if (auto it = transferCache_.find(key); it != transferCache_.end())
    return it->second;
  Result<ValueId> moved = addTransfer(value, device);
  if (moved)
    transferCache_[key] = *moved;
  return moved;
}

Result<ValueId> TaskGraph::addEvict(ValueId input) {
  if (Status status = checkValue(input, "evict source"); !status)
    return status;
  if (Status status = checkNotOnHost(input, "evict source"); !status)
    return status;
  Task task;
  task.kind = TaskKind::Evict;
  task.device = tasks_[input].device;
  task.onHost = true;
  task.type = tasks_[input].type;
  task.shape = tasks_[input].shape;
  task.inputs = {input};
  return add(std::move(task));
}

Result<ValueId> TaskGraph::addReload(ValueId stash, int device,
                                     std::vector<ValueId> after) {
  if (Status status = checkDevice(device); !status)
    return status.withContext("reload");
  if (Status status = checkValue(stash, "reload source"); !status)
    return status;
  if (!tasks_[stash].onHost)
    return Status::failure("reload source %" + std::to_string(stash) +
                           " is not a host value (reload the output of an "
                           "evict)");
  Task task;
  task.kind = TaskKind::Reload;
  task.device = device;
  task.type = tasks_[stash].type;
  task.shape = tasks_[stash].shape;
  task.inputs = {stash};
  for (ValueId trigger : after) {
    if (Status status = checkValue(trigger, "reload control dependency");
        !status)
      return status;
    if (trigger != stash && std::find(task.after.begin(), task.after.end(),
                                      trigger) == task.after.end())
      task.after.push_back(trigger);
  }
  std::sort(task.after.begin(), task.after.end());
  return add(std::move(task));
}

Result<ValueId> TaskGraph::addFill(int device, Shape shape, double value,
                                   ElementType type) {
  if (Status status = checkDevice(device); !status)
    return status.withContext("fill");
  if (Status status = checkShape(shape); !status)
    return status.withContext("fill");
  Task task;
  task.kind = TaskKind::Fill;
  task.device = device;
  task.type = type;
  task.shape = std::move(shape);
  task.scalar = value;
  return add(std::move(task));
}

Result<ValueId> TaskGraph::addSlice(int device, ValueId input,
                                    std::vector<int64_t> offsets,
                                    std::vector<int64_t> sizes) {
  if (Status status = checkDevice(device); !status)
    return status.withContext("slice");
  if (Status status = checkOnDevice(input, device, 0); !status)
    return status.withContext("slice");
  const Shape &inShape = tasks_[input].shape;
  if (offsets.size() != inShape.size() || sizes.size() != inShape.size())
    return Status::failure("slice: input has rank " +
                           std::to_string(inShape.size()) + " but " +
                           std::to_string(offsets.size()) + " offsets and " +
                           std::to_string(sizes.size()) + " sizes were given");
  for (size_t d = 0; d < inShape.size(); ++d)
    if (offsets[d] < 0 || sizes[d] < 0 || offsets[d] + sizes[d] > inShape[d])
      return Status::failure("slice: dimension " + std::to_string(d) +
                             " range [" + std::to_string(offsets[d]) + ", " +
                             std::to_string(offsets[d] + sizes[d]) +
                             ") is outside [0, " + std::to_string(inShape[d]) +
                             ")");
  Task task;
  task.kind = TaskKind::Slice;
  task.device = device;
  task.type = tasks_[input].type;
  task.shape = std::move(sizes);
  task.inputs = {input};
  task.sliceOffsets = std::move(offsets);
  return add(std::move(task));
}

Result<ValueId> TaskGraph::addReshape(int device, ValueId input, Shape shape) {
  if (Status status = checkDevice(device); !status)
    return status.withContext("reshape");
  if (Status status = checkOnDevice(input, device, 0); !status)
    return status.withContext("reshape");
  if (Status status = checkShape(shape); !status)
    return status.withContext("reshape");
  const Task &source = tasks_[input];
  // The count of an unchecked shape may wrap: check it before comparing.
  std::string problem = checkedSizeProblem(shape, elementSize(source.type));
  if (!problem.empty())
    return Status::failure("reshape: shape " + shapeToString(shape) + " " +
                           problem);
  if (numElements(shape) != numElements(source.shape))
    return Status::failure(
        "reshape: shape " + shapeToString(shape) + " has " +
        std::to_string(numElements(shape)) + " elements but the input %" +
        std::to_string(input) + " (" + shapeToString(source.shape) + ") has " +
        std::to_string(numElements(source.shape)));
  Task task;
  task.kind = TaskKind::Reshape;
  task.device = device;
  task.type = source.type;
  task.shape = std::move(shape);
  task.inputs = {input};
  return add(std::move(task));
}

Result<ValueId> TaskGraph::addGather(int device, ValueId table,
                                     ValueId indices, int64_t axis) {
  const std::string context = "gather";
  if (Status status = checkDevice(device); !status)
    return status.withContext(context);
  if (Status status = checkOnDevice(table, device, 0); !status)
    return status.withContext(context);
  if (Status status = checkOnDevice(indices, device, 1); !status)
    return status.withContext(context);
  const Task &source = tasks_[table];
  const Task &index = tasks_[indices];
  if (index.type == ElementType::F16)
    return Status::failure(context + ": indices %" + std::to_string(indices) +
                           " have element type " +
                           std::string(elementTypeName(index.type)) +
                           "; they must be i32, i64, f32 or f64");
  int64_t rank = static_cast<int64_t>(source.shape.size());
  if (axis < 0 || axis >= rank)
    return Status::failure(context + ": axis " + std::to_string(axis) +
                           " is outside [0, " + std::to_string(rank) +
                           ") for the table " + shapeToString(source.shape));
  Shape shape(source.shape.begin(), source.shape.begin() + axis);
  shape.insert(shape.end(), index.shape.begin(), index.shape.end());
  shape.insert(shape.end(), source.shape.begin() + axis + 1,
               source.shape.end());
  Task task;
  task.kind = TaskKind::Gather;
  task.device = device;
  task.type = source.type;
  task.shape = std::move(shape);
  task.inputs = {table, indices};
  task.axis = axis;
  return add(std::move(task)); // add() checks the result's size.
}

Result<ValueId> TaskGraph::addConvolution(int device, ValueId input,
                                          ValueId weight, int64_t groups,
                                          WindowGeometry geometry) {
  const std::string context = "conv";
  if (Status status = checkDevice(device); !status)
    return status.withContext(context);
  ElementType type = ElementType::F32;
  Result<std::vector<Shape>> shapes =
      operandShapes({input, weight}, device, context, type);
  if (!shapes)
    return shapes.status();
  if (Status status = checkWindowType(type, "conv"); !status)
    return status;
  const Shape &weightShape = (*shapes)[1];
  if (geometry.kernel.empty()) {
    if (weightShape.size() != geometry.strides.size() + 2)
      return Status::failure(
          context + ": the weight " + shapeToString(weightShape) +
          " must have rank " + std::to_string(geometry.strides.size() + 2) +
          " (F, C/groups and one kernel extent per stride; " +
          std::to_string(geometry.strides.size()) + " strides given)");
    geometry.kernel.assign(weightShape.begin() + 2, weightShape.end());
  }
  std::string error;
  std::optional<std::vector<int64_t>> shape = convolutionResultShape(
      (*shapes)[0], weightShape, groups, geometry, &error);
  if (!shape)
    return Status::failure(context + ": " + error);
  Task task;
  task.kind = TaskKind::Conv;
  task.device = device;
  task.type = type;
  task.shape = std::move(*shape);
  task.inputs = {input, weight};
  task.window = std::move(geometry);
  task.groups = groups;
  return add(std::move(task));
}

Result<ValueId> TaskGraph::addPool(int device, PoolKind kind, ValueId input,
                                   WindowGeometry geometry) {
  const std::string context = "pool " + std::string(poolKindName(kind));
  if (kind != PoolKind::Max && kind != PoolKind::Avg)
    return Status::failure("pool: unknown kind " +
                           std::to_string(static_cast<uint32_t>(kind)));
  if (Status status = checkDevice(device); !status)
    return status.withContext(context);
  if (Status status = checkOnDevice(input, device, 0); !status)
    return status.withContext(context);
  const Task &source = tasks_[input];
  if (Status status = checkWindowType(source.type, "pool"); !status)
    return status;
  std::string error;
  std::optional<std::vector<int64_t>> shape =
      poolResultShape(source.shape, geometry, &error);
  if (!shape)
    return Status::failure(context + ": " + error);
  Task task;
  task.kind = TaskKind::Pool;
  task.device = device;
  task.type = source.type;
  task.shape = std::move(*shape);
  task.inputs = {input};
  task.window = std::move(geometry);
  task.pool = kind;
  return add(std::move(task));
}

Result<ValueId>
TaskGraph::addAssemble(int device,
                       std::vector<std::vector<int64_t>> blockExtents,
                       std::vector<ValueId> blocks) {
  if (Status status = checkDevice(device); !status)
    return status.withContext("assemble");
  size_t rank = blockExtents.size();
  int64_t numBlocks = 1;
  Shape shape(rank, 0);
  for (size_t d = 0; d < rank; ++d) {
    if (blockExtents[d].empty())
      return Status::failure("assemble: dimension " + std::to_string(d) +
                             " has no blocks");
    numBlocks *= static_cast<int64_t>(blockExtents[d].size());
    for (int64_t extent : blockExtents[d]) {
      if (extent < 0)
        return Status::failure("assemble: negative block extent on "
                               "dimension " +
                               std::to_string(d));
      shape[d] += extent;
    }
  }
  if (static_cast<int64_t>(blocks.size()) != numBlocks)
    return Status::failure("assemble: the grid has " +
                           std::to_string(numBlocks) + " blocks but " +
                           std::to_string(blocks.size()) + " were given");
  std::vector<size_t> coord(rank, 0);
  for (size_t b = 0; b < blocks.size(); ++b) {
    if (Status status = checkOnDevice(blocks[b], device, b); !status)
      return status.withContext("assemble");
    const Task &block = tasks_[blocks[b]];
    if (block.type != tasks_[blocks[0]].type)
      return Status::failure("assemble: blocks have different element types");
    Shape expected(rank);
    for (size_t d = 0; d < rank; ++d)
      expected[d] = blockExtents[d][coord[d]];
    if (block.shape != expected)
      return Status::failure("assemble: block " + std::to_string(b) + " (%" +
                             std::to_string(blocks[b]) + ") has shape " +
                             shapeToString(block.shape) + ", expected " +
                             shapeToString(expected));
    // Next grid coordinate, row-major.
    for (size_t d = rank; d-- > 0;) {
      if (++coord[d] < blockExtents[d].size())
        break;
      coord[d] = 0;
    }
  }
  Task task;
  task.kind = TaskKind::Assemble;
  task.device = device;
  task.type = tasks_[blocks[0]].type;
  task.shape = std::move(shape);
  task.inputs = std::move(blocks);
  task.blockExtents = std::move(blockExtents);
  return add(std::move(task));
}

Result<ValueId> TaskGraph::addDelay(int device, double seconds,
                                    std::vector<ValueId> inputs, Shape shape,
                                    ElementType type) {
  if (Status status = checkDevice(device); !status)
    return status.withContext("delay");
  if (Status status = checkEmulatedSeconds(seconds, "delay"); !status)
    return status;
  if (Status status = checkShape(shape); !status)
    return status.withContext("delay");
  for (size_t i = 0; i < inputs.size(); ++i)
    if (Status status = checkOnDevice(inputs[i], device, i); !status)
      return status.withContext("delay");
  Task task;
  task.kind = TaskKind::Delay;
  task.device = device;
  task.type = type;
  task.shape = std::move(shape);
  task.inputs = std::move(inputs);
  task.seconds = seconds;
  return add(std::move(task));
}

Status TaskGraph::markOutput(ValueId value) {
  if (Status status = checkValue(value, "output"); !status)
    return status;
  if (tasks_[value].onHost)
    return Status::failure("output %" + std::to_string(value) +
                           " is a host value (reload it onto a device)");
  if (!isOutput_[value]) {
    isOutput_[value] = true;
    outputIds_.push_back(value);
    version_ = nextVersion();
  }
  return Status();
}

Status TaskGraph::setPriority(ValueId value, int64_t priority) {
  if (Status status = checkValue(value, "value"); !status)
    return status;
  tasks_[value].priority = priority;
  version_ = nextVersion();
  return Status();
}

Status TaskGraph::setLabel(ValueId value, std::string label) {
  if (Status status = checkValue(value, "value"); !status)
    return status;
  tasks_[value].label = std::move(label);
  return Status();
}

std::string TaskGraph::describe(ValueId value) const {
  if (!contains(value))
    return "%" + std::to_string(value);
  const Task &task = tasks_[value];
  std::string text = "%" + std::to_string(value) + " ";
  if (!task.label.empty())
    return text + task.label;
  text += taskKindName(task.kind);
  switch (task.kind) {
  case TaskKind::Einsum:
    text += " " + task.spec.str() + " " + std::string(joinKindName(task.join));
    if (task.aggregation)
      text += "/" + std::string(aggKindName(*task.aggregation));
    break;
  case TaskKind::Fused:
    text += " " + task.spec.str() + " " + task.program.str();
    break;
  case TaskKind::Transfer:
    text += " " + std::to_string(tasks_[task.inputs[0]].device) + "->" +
            std::to_string(task.device);
    break;
  case TaskKind::Evict:
    text += " " + std::to_string(task.device) + "->host";
    break;
  case TaskKind::Reload:
    text += " host->" + std::to_string(task.device);
    break;
  case TaskKind::Conv:
    text += " " + extentsText(task.window.kernel) + " stride " +
            extentsText(task.window.strides) + " groups " +
            std::to_string(task.groups);
    break;
  case TaskKind::Pool:
    text += " " + std::string(poolKindName(task.pool)) + " " +
            extentsText(task.window.kernel) + " stride " +
            extentsText(task.window.strides);
    break;
  case TaskKind::Gather:
    text += " axis " + std::to_string(task.axis);
    break;
  default:
    break;
  }
  return text;
}

} // namespace doppler::runtime
