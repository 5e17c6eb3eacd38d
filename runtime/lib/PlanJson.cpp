//===- PlanJson.cpp - Plans as JSON files ---------------------------------===//

#include "JsonReader.h"

#include "Doppler/Support/Limits.h"
#include "Doppler/Support/ReadFile.h"

#include <algorithm>

#include <cmath>
#include <fstream>
#include <sstream>

namespace doppler::runtime {

using detail::json;
using detail::Reader;

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

namespace {

constexpr const char *kPlanFormat = "doppler-runtime-plan";

json taskToJson(const TaskGraph &graph, ValueId id,
                const std::map<ValueId, int64_t> &inputArgument) {
  const Task &task = graph.task(id);
  json entry = {{"id", id},
                {"kind", std::string(taskKindName(task.kind))},
                {"device", task.device}};
  // Type and shape are implied by the inputs for most kinds; they are
  // written anyway so that the file reads on its own, and checked on load.
  entry["type"] = std::string(elementTypeName(task.type));
  entry["shape"] = task.shape;
  if (!task.inputs.empty())
    entry["inputs"] = task.inputs;
  switch (task.kind) {
  case TaskKind::Input:
    if (auto it = inputArgument.find(id); it != inputArgument.end())
      entry["argument"] = it->second;
    break;
  case TaskKind::Einsum:
    entry["spec"] = task.spec.str();
    entry["join"] = std::string(joinKindName(task.join));
    if (task.aggregation)
      entry["aggregation"] = std::string(aggKindName(*task.aggregation));
    if (joinTakesScalar(task.join))
      entry["scalar"] = task.scalar;
    break;
  case TaskKind::Fused:
    entry["spec"] = task.spec.str();
    entry["program"] = task.program.str();
    break;
  case TaskKind::Transfer:
    if (task.seconds >= 0)
      entry["seconds"] = task.seconds;
    break;
  case TaskKind::Fill:
    entry["value"] = task.scalar;
    break;
  case TaskKind::Slice:
    entry["offsets"] = task.sliceOffsets;
    break;
  case TaskKind::Assemble:
    entry["block_extents"] = task.blockExtents;
    break;
  case TaskKind::Delay:
    entry["seconds"] = task.seconds;
    break;
  case TaskKind::Evict:
    break;
  case TaskKind::Reload:
    if (!task.after.empty())
      entry["after"] = task.after;
    break;
  case TaskKind::Reshape:
    break; // "shape" (written for every task) is the new shape.
  case TaskKind::Conv:
    // The kernel is the weight's spatial extents.
    entry["groups"] = task.groups;
    entry["strides"] = task.window.strides;
    entry["dilations"] = task.window.dilations;
    entry["padding_low"] = task.window.padLow;
    entry["padding_high"] = task.window.padHigh;
    break;
  case TaskKind::Pool:
    entry["pool"] = std::string(poolKindName(task.pool));
    entry["kernel"] = task.window.kernel;
    entry["strides"] = task.window.strides;
    entry["dilations"] = task.window.dilations;
    entry["padding_low"] = task.window.padLow;
    entry["padding_high"] = task.window.padHigh;
    break;
  case TaskKind::Gather:
    entry["axis"] = task.axis;
    break;
  }
  if (task.priority != 0)
    entry["priority"] = task.priority;
  if (!task.label.empty())
    entry["label"] = task.label;
  return entry;
}

} // namespace

std::string planToJson(const Plan &plan) {
  json arguments = json::array();
  for (const PlanArgument &arg : plan.arguments)
    arguments.push_back({{"type", std::string(elementTypeName(arg.type))},
                         {"shape", arg.shape}});
  json tasks = json::array();
  for (ValueId id = 0; id < plan.graph.size(); ++id)
    tasks.push_back(taskToJson(plan.graph, id, plan.inputArgument));
  json root = {{"format", kPlanFormat},
               {"version", kPlanFormatVersion},
               {"function", plan.function},
               {"devices", plan.devices ? *plan.devices
                                        : std::max(plan.graph.numDevicesUsed(),
                                                   1)},
               {"predicted_makespan_s", nullptr},
               {"arguments", std::move(arguments)},
               {"tasks", std::move(tasks)},
               {"results", plan.results}};
  if (plan.predictedMakespan)
    root["predicted_makespan_s"] = *plan.predictedMakespan;
  if (!plan.nodes.empty())
    root["nodes"] = plan.nodes;
  // One task per line: diffs of two plans stay readable.
  std::string text = "{\n";
  bool first = true;
  for (const char *key : {"format", "version", "function", "devices",
                          "predicted_makespan_s", "nodes", "arguments",
                          "results"}) {
    if (!root.contains(key))
      continue;
    text += std::string(first ? "" : ",\n") + "  " + json(key).dump() + ": " +
            root[key].dump();
    first = false;
  }
  text += ",\n  \"tasks\": [";
  for (size_t i = 0; i < root["tasks"].size(); ++i)
    text += std::string(i ? ",\n    " : "\n    ") + root["tasks"][i].dump();
  text += "\n  ]\n}\n";
  return text;
}

Status savePlan(const Plan &plan, const std::string &path) {
  std::ofstream out(path, std::ios::binary);
  if (!out)
    return Status::failure("cannot write '" + path + "'");
  out << planToJson(plan);
  out.close();
  if (!out)
    return Status::failure("cannot write '" + path + "'");
  return Status();
}

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

namespace {

std::optional<TaskKind> parseTaskKind(const std::string &name) {
  for (TaskKind kind :
       {TaskKind::Input, TaskKind::Einsum, TaskKind::Transfer, TaskKind::Fill,
        TaskKind::Slice, TaskKind::Assemble, TaskKind::Delay, TaskKind::Fused,
        TaskKind::Evict, TaskKind::Reload, TaskKind::Reshape, TaskKind::Conv,
        TaskKind::Pool, TaskKind::Gather})
    if (taskKindName(kind) == name)
      return kind;
  return std::nullopt;
}

/// What every task entry has besides its kind's own fields.
struct TaskHeader {
  std::string kindName;
  TaskKind kind;
  int device;
  std::vector<ValueId> inputs;
};

// Reads a required field of `entry` into `var` or returns the error (with
// `reader`, `entry` and `where` in scope).
#define DOPPLER_READ(var, kind, key)                                           \
  Result<const json *> var##Field = reader.field(entry, where, key);           \
  if (!var##Field)                                                             \
    return var##Field.status();                                                \
  auto var = reader.kind(**var##Field, where + "." + key);                     \
  if (!var)                                                                    \
    return var.status();

/// The id (which must be `id`), kind, device and inputs (each an earlier
/// task) of task entry `entry`.
Result<TaskHeader> readTaskHeader(const Reader &reader, const json &entry,
                                  const std::string &where, ValueId id) {
  auto fail = [&](const std::string &what) { return reader.fail(where, what); };
  DOPPLER_READ(taskId, integer, "id");
  if (*taskId != id)
    return fail("has id " + std::to_string(*taskId) +
                "; tasks must be listed "
                "in id order 0, 1, 2, ...");
  DOPPLER_READ(kindName, string, "kind");
  std::optional<TaskKind> kind = parseTaskKind(*kindName);
  if (!kind)
    return fail("unknown task kind '" + *kindName + "'");
  DOPPLER_READ(device, integer, "device");
  // The builders check the range too; this keeps the narrowing exact.
  if (*device < 0 || *device >= kMaxDevices)
    return fail("device " + std::to_string(*device) + " is out of range [0, " +
                std::to_string(kMaxDevices) + ")");
  int dev = static_cast<int>(*device);

  std::vector<ValueId> inputs;
  if (auto it = entry.find("inputs"); it != entry.end()) {
    Result<std::vector<int64_t>> ids = reader.integers(*it, where + ".inputs");
    if (!ids)
      return ids.status();
    inputs = std::move(*ids);
  }
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i] < 0 || inputs[i] >= id)
      return fail("input " + std::to_string(i) + " refers to task " +
                  std::to_string(inputs[i]) +
                  ", which does not exist before this task (a task may only "
                  "read earlier tasks)");
  return TaskHeader{*kindName, *kind, dev, std::move(inputs)};
}

/// `built`, or its error named after the task.
Result<ValueId> named(const Reader &reader, const std::string &where,
                      Result<ValueId> built) {
  if (!built)
    return reader.fail(where, built.message());
  return built;
}

/// An einsum task: spec, join, optional aggregation and scalar.
Result<ValueId> buildEinsumTask(const Reader &reader, const json &entry,
                                const std::string &where,
                                const TaskHeader &header, Plan &plan) {
  auto fail = [&](const std::string &what) { return reader.fail(where, what); };
  DOPPLER_READ(spec, string, "spec");
  DOPPLER_READ(joinName, string, "join");
  std::optional<JoinKind> join = parseJoinKind(*joinName);
  if (!join)
    return fail("unknown join '" + *joinName + "'");
  std::optional<AggKind> aggregation;
  if (auto it = entry.find("aggregation"); it != entry.end()) {
    Result<std::string> name = reader.string(*it, where + ".aggregation");
    if (!name)
      return name.status();
    aggregation = parseAggKind(*name);
    if (!aggregation)
      return fail("unknown aggregation '" + *name + "'");
  }
  double scalar = 0;
  if (auto it = entry.find("scalar"); it != entry.end()) {
    Result<double> value = reader.number(*it, where + ".scalar");
    if (!value)
      return value.status();
    scalar = *value;
  }
  // The result's type: differs from the inputs' in a conversion.
  std::optional<ElementType> type;
  if (auto it = entry.find("type"); it != entry.end()) {
    Result<ElementType> value = reader.type(*it, where + ".type");
    if (!value)
      return value.status();
    type = *value;
  }
  return named(reader, where,
               plan.graph.addEinsum(header.device, *spec, *join, aggregation,
                                    header.inputs, scalar, type));
}

/// A fused task: spec and program (JoinProgram's text).
Result<ValueId> buildFusedTask(const Reader &reader, const json &entry,
                               const std::string &where,
                               const TaskHeader &header, Plan &plan) {
  DOPPLER_READ(spec, string, "spec");
  DOPPLER_READ(program, string, "program");
  return named(reader, where,
               plan.graph.addFused(header.device, *spec, *program,
                                   header.inputs));
}

/// A transfer task (one input): optional fixed seconds.
Result<ValueId> buildTransferTask(const Reader &reader, const json &entry,
                                  const std::string &where,
                                  const TaskHeader &header, Plan &plan) {
  auto fail = [&](const std::string &what) { return reader.fail(where, what); };
  double seconds = -1;
  if (auto it = entry.find("seconds"); it != entry.end()) {
    Result<double> value = reader.number(*it, where + ".seconds");
    if (!value)
      return value.status();
    if (!(*value >= 0) || !std::isfinite(*value))
      return fail("seconds must be finite and >= 0");
    seconds = *value;
  }
  return named(
      reader, where,
      plan.graph.addTransfer(header.inputs[0], header.device, seconds));
}

/// An assemble task: block_extents, an array of integer arrays.
Result<ValueId> buildAssembleTask(const Reader &reader, const json &entry,
                                  const std::string &where,
                                  const TaskHeader &header, Plan &plan) {
  auto fail = [&](const std::string &what) { return reader.fail(where, what); };
  Result<const json *> field = reader.field(entry, where, "block_extents");
  if (!field)
    return field.status();
  if (!(*field)->is_array())
    return fail("block_extents: expected an array of arrays of integers");
  std::vector<std::vector<int64_t>> extents;
  for (size_t d = 0; d < (*field)->size(); ++d) {
    Result<std::vector<int64_t>> dim = reader.integers(
        (**field)[d], where + ".block_extents[" + std::to_string(d) + "]");
    if (!dim)
      return dim.status();
    extents.push_back(std::move(*dim));
  }
  return named(
      reader, where,
      plan.graph.addAssemble(header.device, std::move(extents), header.inputs));
}

/// A delay task: seconds, optional shape and type.
Result<ValueId> buildDelayTask(const Reader &reader, const json &entry,
                               const std::string &where,
                               const TaskHeader &header, Plan &plan) {
  DOPPLER_READ(seconds, number, "seconds");
  Shape shape = {0};
  ElementType type = ElementType::F32;
  if (auto it = entry.find("shape"); it != entry.end()) {
    Result<Shape> value = reader.shape(*it, where + ".shape");
    if (!value)
      return value.status();
    shape = *value;
  }
  if (auto it = entry.find("type"); it != entry.end()) {
    Result<ElementType> value = reader.type(*it, where + ".type");
    if (!value)
      return value.status();
    type = *value;
  }
  return named(
      reader, where,
      plan.graph.addDelay(header.device, *seconds, header.inputs, shape, type));
}

/// An evict task (one input, on the written device).
Result<ValueId> buildEvictTask(const Reader &reader, const std::string &where,
                               const TaskHeader &header, Plan &plan) {
  ValueId input = header.inputs[0];
  if (!plan.graph.task(input).onHost &&
      plan.graph.task(input).device != header.device)
    return reader.fail(where, "an evict runs on its input's device " +
                                  std::to_string(
                                      plan.graph.task(input).device) +
                                  ", not on device " +
                                  std::to_string(header.device));
  return named(reader, where, plan.graph.addEvict(input));
}

/// A reload task (one input, the host value): optional "after", earlier
/// task ids it waits for without reading them.
Result<ValueId> buildReloadTask(const Reader &reader, const json &entry,
                                const std::string &where,
                                const TaskHeader &header, ValueId id,
                                Plan &plan) {
  std::vector<ValueId> after;
  if (auto it = entry.find("after"); it != entry.end()) {
    Result<std::vector<int64_t>> ids = reader.integers(*it, where + ".after");
    if (!ids)
      return ids.status();
    after = std::move(*ids);
  }
  for (size_t i = 0; i < after.size(); ++i)
    if (after[i] < 0 || after[i] >= id)
      return reader.fail(where, "after " + std::to_string(i) +
                                    " refers to task " +
                                    std::to_string(after[i]) +
                                    ", which does not exist before this task "
                                    "(a task may only wait for earlier tasks)");
  return named(reader, where,
               plan.graph.addReload(header.inputs[0], header.device,
                                    std::move(after)));
}

/// The sliding rule of a conv or pool entry: strides, dilations,
/// padding_low and padding_high (each an integer array), into `geometry`.
Status readWindowFields(const Reader &reader, const json &entry,
                        const std::string &where, WindowGeometry &geometry) {
  struct Field {
    const char *key;
    std::vector<int64_t> *values;
  };
  const Field fields[] = {{"strides", &geometry.strides},
                          {"dilations", &geometry.dilations},
                          {"padding_low", &geometry.padLow},
                          {"padding_high", &geometry.padHigh}};
  for (const Field &field : fields) {
    Result<const json *> value = reader.field(entry, where, field.key);
    if (!value)
      return value.status();
    Result<std::vector<int64_t>> numbers =
        reader.integers(**value, where + "." + field.key);
    if (!numbers)
      return numbers.status();
    *field.values = std::move(*numbers);
  }
  return Status();
}

/// A conv task (inputs: the input and the weight): groups and the sliding
/// rule; the kernel is the weight's spatial extents.
Result<ValueId> buildConvTask(const Reader &reader, const json &entry,
                              const std::string &where,
                              const TaskHeader &header, Plan &plan) {
  DOPPLER_READ(groups, integer, "groups");
  WindowGeometry geometry;
  if (Status status = readWindowFields(reader, entry, where, geometry);
      !status)
    return status;
  // The kernel is left empty: the builder takes the weight's extents.
  return named(reader, where,
               plan.graph.addConvolution(header.device, header.inputs[0],
                                         header.inputs[1], *groups,
                                         std::move(geometry)));
}

/// A pool task (one input): pool ("max" or "avg"), kernel and the sliding
/// rule.
Result<ValueId> buildPoolTask(const Reader &reader, const json &entry,
                              const std::string &where,
                              const TaskHeader &header, Plan &plan) {
  DOPPLER_READ(kindName, string, "pool");
  std::optional<PoolKind> kind = parsePoolKind(*kindName);
  if (!kind)
    return reader.fail(where + ".pool", "unknown pool kind '" + *kindName +
                                            "' (expected max or avg)");
  DOPPLER_READ(kernel, integers, "kernel");
  WindowGeometry geometry;
  geometry.kernel = std::move(*kernel);
  if (Status status = readWindowFields(reader, entry, where, geometry);
      !status)
    return status;
  return named(reader, where,
               plan.graph.addPool(header.device, *kind, header.inputs[0],
                                  std::move(geometry)));
}

/// Adds the task `entry` describes through the TaskGraph builder of its
/// kind, reading the kind's own fields. Errors name the task.
Result<ValueId> buildTask(const Reader &reader, const json &entry,
                          const std::string &where, const TaskHeader &header,
                          Plan &plan) {
  auto fail = [&](const std::string &what) { return reader.fail(where, what); };
  const std::vector<ValueId> &inputs = header.inputs;
  const int dev = header.device;
  auto needInputs = [&](size_t count) -> Status {
    if (inputs.size() != count)
      return fail("a " + header.kindName + " task takes " +
                  std::to_string(count) + " input(s), " +
                  std::to_string(inputs.size()) + " given");
    return Status();
  };

  Result<ValueId> built = Status::failure("unreachable");
  switch (header.kind) {
  case TaskKind::Input: {
    if (Status status = needInputs(0); !status)
      return status;
    DOPPLER_READ(type, type, "type");
    DOPPLER_READ(shape, shape, "shape");
    built = plan.graph.addInput(dev, *shape, *type);
    break;
  }
  case TaskKind::Einsum:
    return buildEinsumTask(reader, entry, where, header, plan);
  case TaskKind::Fused:
    return buildFusedTask(reader, entry, where, header, plan);
  case TaskKind::Transfer:
    if (Status status = needInputs(1); !status)
      return status;
    return buildTransferTask(reader, entry, where, header, plan);
  case TaskKind::Fill: {
    if (Status status = needInputs(0); !status)
      return status;
    DOPPLER_READ(type, type, "type");
    DOPPLER_READ(shape, shape, "shape");
    DOPPLER_READ(value, number, "value");
    built = plan.graph.addFill(dev, *shape, *value, *type);
    break;
  }
  case TaskKind::Slice: {
    if (Status status = needInputs(1); !status)
      return status;
    DOPPLER_READ(offsets, integers, "offsets");
    DOPPLER_READ(shape, shape, "shape");
    built = plan.graph.addSlice(dev, inputs[0], *offsets, *shape);
    break;
  }
  case TaskKind::Reshape: {
    if (Status status = needInputs(1); !status)
      return status;
    DOPPLER_READ(shape, shape, "shape");
    built = plan.graph.addReshape(dev, inputs[0], *shape);
    break;
  }
  case TaskKind::Conv:
    if (Status status = needInputs(2); !status)
      return status;
    return buildConvTask(reader, entry, where, header, plan);
  case TaskKind::Pool:
    if (Status status = needInputs(1); !status)
      return status;
    return buildPoolTask(reader, entry, where, header, plan);
  case TaskKind::Gather: {
    if (Status status = needInputs(2); !status)
      return status;
    DOPPLER_READ(axis, integer, "axis");
    built = plan.graph.addGather(dev, inputs[0], inputs[1], *axis);
    break;
  }
  case TaskKind::Assemble:
    return buildAssembleTask(reader, entry, where, header, plan);
  case TaskKind::Delay:
    return buildDelayTask(reader, entry, where, header, plan);
  case TaskKind::Evict:
    if (Status status = needInputs(1); !status)
      return status;
    return buildEvictTask(reader, where, header, plan);
  case TaskKind::Reload:
    if (Status status = needInputs(1); !status)
      return status;
    return buildReloadTask(reader, entry, where, header, plan.graph.size(),
                           plan);
  }
  return named(reader, where, std::move(built));
}

/// Checks the written type and shape of task `built` against what its
/// inputs imply, sets its priority and label, and binds an input to its
/// argument.
Status readTaskExtras(const Reader &reader, const json &entry,
                      const std::string &where, TaskKind kind, ValueId built,
                      Plan &plan) {
  auto fail = [&](const std::string &what) { return reader.fail(where, what); };
  // Written type and shape must be what the inputs imply.
  const Task &task = plan.graph.task(built);
  if (auto it = entry.find("type"); it != entry.end()) {
    Result<ElementType> type = reader.type(*it, where + ".type");
    if (!type)
      return type.status();
    if (*type != task.type)
      return fail("type " + std::string(elementTypeName(*type)) +
                  " does not match the " +
                  std::string(elementTypeName(task.type)) +
                  " its inputs imply");
  }
  if (auto it = entry.find("shape"); it != entry.end()) {
    Result<Shape> shape = reader.shape(*it, where + ".shape");
    if (!shape)
      return shape.status();
    if (*shape != task.shape)
      return fail("shape " + shapeToString(*shape) + " does not match the " +
                  shapeToString(task.shape) + " its inputs imply");
  }
  if (auto it = entry.find("priority"); it != entry.end()) {
    Result<int64_t> priority = reader.integer(*it, where + ".priority");
    if (!priority)
      return priority.status();
    (void)plan.graph.setPriority(built, *priority);
  }
  if (auto it = entry.find("label"); it != entry.end()) {
    Result<std::string> label = reader.string(*it, where + ".label");
    if (!label)
      return label.status();
    (void)plan.graph.setLabel(built, *label);
  }
  if (kind == TaskKind::Input) {
    Result<const json *> field = reader.field(entry, where, "argument");
    if (!field)
      return field.status();
    Result<int64_t> argument = reader.integer(**field, where + ".argument");
    if (!argument)
      return argument.status();
    if (Status status = plan.bindArgument(built, *argument); !status)
      return fail(status.message());
  }
  return Status();
}

#undef DOPPLER_READ

/// Rebuilds task `id` through the TaskGraph builders.
Result<ValueId> readTask(const Reader &reader, const json &entry, ValueId id,
                         Plan &plan) {
  std::string where = "tasks[" + std::to_string(id) + "]";
  if (!entry.is_object())
    return reader.fail(where, "expected an object");
  Result<TaskHeader> header = readTaskHeader(reader, entry, where, id);
  if (!header)
    return header.status();
  Result<ValueId> built = buildTask(reader, entry, where, *header, plan);
  if (!built)
    return built.status();
  if (Status status =
          readTaskExtras(reader, entry, where, header->kind, *built, plan);
      !status)
    return status;
  return built;
}

Result<Plan> readPlan(const json &root, const Reader &reader) {
  if (!root.is_object())
    return Status::failure(reader.source() +
                           ": expected a JSON object (a Doppler plan)");
  if (Status status = reader.formatAndVersion(root, "plan", kPlanFormat,
                                              kPlanFormatVersion);
      !status)
    return status;

  Plan plan;
  if (auto it = root.find("function"); it != root.end()) {
    Result<std::string> name = reader.string(*it, "function");
    if (!name)
      return name.status();
    plan.function = *name;
  }
  if (auto it = root.find("devices"); it != root.end()) {
    if (!it->is_number_integer() || it->get<int64_t>() < 1 ||
        it->get<int64_t>() > kMaxDevices)
      return reader.fail("devices", "expected an integer in [1, " +
                                        std::to_string(kMaxDevices) +
                                        "], got " + it->dump());
    plan.devices = static_cast<int>(it->get<int64_t>());
  }
  if (auto it = root.find("nodes"); it != root.end()) {
    if (!it->is_array() || (plan.devices && it->size() != size_t(*plan.devices)))
      return reader.fail("nodes", "expected one node id per device, got " +
                                      it->dump());
    for (const json &node : *it) {
      if (!node.is_number_integer() || node.get<int64_t>() < 0 ||
          node.get<int64_t>() >= kMaxDevices)
        return reader.fail("nodes", "expected node ids in [0, " +
                                        std::to_string(kMaxDevices) +
                                        "), got " + node.dump());
      plan.nodes.push_back(static_cast<int>(node.get<int64_t>()));
    }
  }
  if (auto it = root.find("predicted_makespan_s");
      it != root.end() && !it->is_null()) {
    Result<double> value = reader.number(*it, "predicted_makespan_s");
    if (!value)
      return value.status();
    if (!(*value >= 0) || !std::isfinite(*value))
      return reader.fail("predicted_makespan_s",
                         "expected a finite number >= 0 (or null), got " +
                             it->dump());
    plan.predictedMakespan = *value;
  }

  Result<const json *> arguments = reader.field(root, "plan", "arguments");
  if (!arguments)
    return arguments.status();
  if (!(*arguments)->is_array())
    return reader.fail("arguments", "expected an array");
  for (size_t i = 0; i < (*arguments)->size(); ++i) {
    const json &arg = (**arguments)[i];
    std::string where = "arguments[" + std::to_string(i) + "]";
    if (!arg.is_object())
      return reader.fail(where, "expected an object");
    ElementType type;
    Shape shape;
    if (Status status = reader.typeAndShape(arg, where, type, shape); !status)
      return status;
    plan.addArgument(type, shape);
  }

  Result<const json *> tasks = reader.field(root, "plan", "tasks");
  if (!tasks)
    return tasks.status();
  if (!(*tasks)->is_array())
    return reader.fail("tasks", "expected an array");
  for (size_t i = 0; i < (*tasks)->size(); ++i) {
    Result<ValueId> task =
        readTask(reader, (**tasks)[i], static_cast<ValueId>(i), plan);
    if (!task)
      return task.status();
  }

  Result<const json *> results = reader.field(root, "plan", "results");
  if (!results)
    return results.status();
  Result<std::vector<int64_t>> ids = reader.integers(**results, "results");
  if (!ids)
    return ids.status();
  for (size_t i = 0; i < ids->size(); ++i) {
    ValueId id = (*ids)[i];
    if (!plan.graph.contains(id))
      return reader.fail("results[" + std::to_string(i) + "]",
                         "task " + std::to_string(id) + " does not exist (" +
                             std::to_string(plan.graph.size()) + " tasks)");
    if (Status status = plan.addResult(id); !status)
      return reader.fail("results[" + std::to_string(i) + "]",
                         status.message());
  }
  if (Status status = plan.verify(); !status)
    return Status::failure(reader.source() + ": " + status.message());
  if (plan.devices && plan.graph.numDevicesUsed() > *plan.devices)
    return reader.fail("devices", "the plan declares " +
                                      std::to_string(*plan.devices) +
                                      " device(s) but a task runs on device " +
                                      std::to_string(
                                          plan.graph.numDevicesUsed() - 1));
  return plan;
}

} // namespace

/// "line L, column C" of byte offset `offset` (1-based, as editors count).
std::string positionOf(const std::string &text, size_t offset) {
  size_t line = 1, column = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

Result<json> detail::parseJson(const std::string &text,
                               const std::string &source) {
  try {
    return json::parse(text);
  } catch (const json::parse_error &error) {
    // error.byte is one past the offending character (1-based).
    size_t offset = error.byte > 0 ? error.byte - 1 : 0;
    std::string what = offset >= text.size()
                           ? "unexpected end of file (truncated?)"
                           : "syntax error";
    return Status::failure(source + ": not valid JSON: " + what + " at " +
                           positionOf(text, offset));
  }
}

Result<std::string> detail::readFile(const std::string &path) {
  std::string error;
  std::optional<std::string> text = readFileCapped(path, &error);
  if (!text)
    return Status::failure(error);
  return std::move(*text);
}

Result<Plan> planFromJson(const std::string &text, const std::string &source) {
  try {
    Result<json> root = detail::parseJson(text, source);
    if (!root)
      return root.status();
    return readPlan(*root, Reader(source));
  } catch (const std::exception &error) {
    return Status::failure(source + ": " + error.what());
  }
}

Result<Plan> loadPlan(const std::string &path) {
  Result<std::string> text = detail::readFile(path);
  if (!text)
    return text.status();
  return planFromJson(*text, path);
}

} // namespace doppler::runtime
