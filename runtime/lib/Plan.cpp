//===- Plan.cpp - A task graph with its function's signature --------------===//

#include "doppler/runtime/Plan.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

namespace doppler::runtime {

using nlohmann::json;

//===----------------------------------------------------------------------===//
// Bookkeeping
//===----------------------------------------------------------------------===//

int64_t Plan::addArgument(ElementType type, Shape shape) {
  arguments.push_back({type, std::move(shape)});
  return static_cast<int64_t>(arguments.size()) - 1;
}

Status Plan::bindArgument(ValueId input, int64_t argument) {
  if (!graph.contains(input) || graph.task(input).kind != TaskKind::Input)
    return Status::failure("%" + std::to_string(input) +
                           " is not a graph input");
  if (argument < 0 || argument >= static_cast<int64_t>(arguments.size()))
    return Status::failure("argument " + std::to_string(argument) +
                           " does not exist (" +
                           std::to_string(arguments.size()) + " declared)");
  const Task &task = graph.task(input);
  const PlanArgument &arg = arguments[argument];
  if (task.type != arg.type || task.shape != arg.shape)
    return Status::failure("graph input %" + std::to_string(input) + " is " +
                           tensorTypeString(task.type, task.shape) +
                           " but argument " + std::to_string(argument) +
                           " is " + tensorTypeString(arg.type, arg.shape));
  inputArgument[input] = argument;
  return Status();
}

Status Plan::addResult(ValueId value) {
  if (Status status = graph.markOutput(value); !status)
    return status;
  results.push_back(value);
  return Status();
}

Status Plan::verify() const {
  for (ValueId input : graph.inputs()) {
    auto it = inputArgument.find(input);
    if (it == inputArgument.end())
      return Status::failure("graph input %" + std::to_string(input) +
                             " is bound to no argument");
    int64_t argument = it->second;
    if (argument < 0 || argument >= static_cast<int64_t>(arguments.size()))
      return Status::failure("graph input %" + std::to_string(input) +
                             " is bound to argument " +
                             std::to_string(argument) +
                             ", which does not "
                             "exist");
    const Task &task = graph.task(input);
    const PlanArgument &arg = arguments[argument];
    if (task.type != arg.type || task.shape != arg.shape)
      return Status::failure("graph input %" + std::to_string(input) + " is " +
                             tensorTypeString(task.type, task.shape) +
                             " but its argument " + std::to_string(argument) +
                             " is " + tensorTypeString(arg.type, arg.shape));
  }
  for (const auto &[input, argument] : inputArgument)
    if (!graph.contains(input) || graph.task(input).kind != TaskKind::Input)
      return Status::failure("argument binding for %" + std::to_string(input) +
                             ", which is not a graph input");
  for (ValueId result : results)
    if (!graph.contains(result) || !graph.isOutput(result))
      return Status::failure("result %" + std::to_string(result) +
                             " is not a graph output");
  return Status();
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

namespace {

constexpr const char *kPlanFormat = "doppler-runtime-plan";
constexpr const char *kOutputsFormat = "doppler-outputs";
constexpr int kOutputsVersion = 1;

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
               {"devices", plan.graph.numDevicesUsed()},
               {"predicted_makespan_s", nullptr},
               {"arguments", std::move(arguments)},
               {"tasks", std::move(tasks)},
               {"results", plan.results}};
  if (plan.predictedMakespan)
    root["predicted_makespan_s"] = *plan.predictedMakespan;
  // One task per line: diffs of two plans stay readable.
  std::string text = "{\n";
  bool first = true;
  for (const char *key : {"format", "version", "function", "devices",
                          "predicted_makespan_s", "arguments", "results"}) {
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

/// Typed access to JSON fields; errors name the field ("tasks[3].spec").
class Reader {
public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  Status fail(const std::string &where, const std::string &what) const {
    return Status::failure(source_ + ": " + where + ": " + what);
  }

  Result<const json *> field(const json &object, const std::string &where,
                             const char *key) const {
    auto it = object.find(key);
    if (it == object.end())
      return fail(where, std::string("missing field '") + key + "'");
    return &*it;
  }

  Result<int64_t> integer(const json &value, const std::string &where) const {
    if (!value.is_number_integer())
      return fail(where, "expected an integer");
    return value.get<int64_t>();
  }

  Result<double> number(const json &value, const std::string &where) const {
    if (!value.is_number())
      return fail(where, "expected a number");
    return value.get<double>();
  }

  Result<std::string> string(const json &value,
                             const std::string &where) const {
    if (!value.is_string())
      return fail(where, "expected a string");
    return value.get<std::string>();
  }

  Result<std::vector<int64_t>> integers(const json &value,
                                        const std::string &where) const {
    if (!value.is_array())
      return fail(where, "expected an array of integers");
    std::vector<int64_t> result;
    for (size_t i = 0; i < value.size(); ++i) {
      if (!value[i].is_number_integer())
        return fail(where + "[" + std::to_string(i) + "]",
                    "expected an integer");
      result.push_back(value[i].get<int64_t>());
    }
    return result;
  }

  Result<Shape> shape(const json &value, const std::string &where) const {
    Result<std::vector<int64_t>> dims = integers(value, where);
    if (!dims)
      return dims.status();
    for (int64_t extent : *dims)
      if (extent < 0)
        return fail(where, "negative extent");
    return *dims;
  }

  Result<ElementType> type(const json &value, const std::string &where) const {
    Result<std::string> name = string(value, where);
    if (!name)
      return name.status();
    std::optional<ElementType> parsed = parseElementType(*name);
    if (!parsed)
      return fail(where, "unknown element type '" + *name +
                             "' (expected f32, f64 or f16)");
    return *parsed;
  }

  const std::string &source() const { return source_; }

private:
  std::string source_;
};

std::optional<TaskKind> parseTaskKind(const std::string &name) {
  for (TaskKind kind :
       {TaskKind::Input, TaskKind::Einsum, TaskKind::Transfer, TaskKind::Fill,
        TaskKind::Slice, TaskKind::Assemble, TaskKind::Delay})
    if (taskKindName(kind) == name)
      return kind;
  return std::nullopt;
}

/// Rebuilds task `id` through the TaskGraph builders.
Result<ValueId> readTask(const Reader &reader, const json &entry, ValueId id,
                         Plan &plan) {
  std::string where = "tasks[" + std::to_string(id) + "]";
  auto fail = [&](const std::string &what) { return reader.fail(where, what); };
  if (!entry.is_object())
    return fail("expected an object");

// Reads a required field into `var` or returns the error.
#define DOPPLER_READ(var, kind, key)                                           \
  Result<const json *> var##Field = reader.field(entry, where, key);           \
  if (!var##Field)                                                             \
    return var##Field.status();                                                \
  auto var = reader.kind(**var##Field, where + "." + key);                     \
  if (!var)                                                                    \
    return var.status();

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
  if (*device < 0 || *device > (1 << 20))
    return fail("device " + std::to_string(*device) + " is out of range");
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
  auto needInputs = [&](size_t count) -> Status {
    if (inputs.size() != count)
      return fail("a " + *kindName + " task takes " + std::to_string(count) +
                  " input(s), " + std::to_string(inputs.size()) + " given");
    return Status();
  };

  Result<ValueId> built = Status::failure("unreachable");
  switch (*kind) {
  case TaskKind::Input: {
    if (Status status = needInputs(0); !status)
      return status;
    DOPPLER_READ(type, type, "type");
    DOPPLER_READ(shape, shape, "shape");
    built = plan.graph.addInput(dev, *shape, *type);
    break;
  }
  case TaskKind::Einsum: {
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
    built =
        plan.graph.addEinsum(dev, *spec, *join, aggregation, inputs, scalar);
    break;
  }
  case TaskKind::Transfer: {
    if (Status status = needInputs(1); !status)
      return status;
    double seconds = -1;
    if (auto it = entry.find("seconds"); it != entry.end()) {
      Result<double> value = reader.number(*it, where + ".seconds");
      if (!value)
        return value.status();
      if (!(*value >= 0) || !std::isfinite(*value))
        return fail("seconds must be finite and >= 0");
      seconds = *value;
    }
    built = plan.graph.addTransfer(inputs[0], dev, seconds);
    break;
  }
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
  case TaskKind::Assemble: {
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
    built = plan.graph.addAssemble(dev, std::move(extents), inputs);
    break;
  }
  case TaskKind::Delay: {
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
    built = plan.graph.addDelay(dev, *seconds, inputs, shape, type);
    break;
  }
  }
#undef DOPPLER_READ
  if (!built)
    return fail(built.message());

  // Written type and shape must be what the inputs imply.
  const Task &task = plan.graph.task(*built);
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
    (void)plan.graph.setPriority(*built, *priority);
  }
  if (auto it = entry.find("label"); it != entry.end()) {
    Result<std::string> label = reader.string(*it, where + ".label");
    if (!label)
      return label.status();
    (void)plan.graph.setLabel(*built, *label);
  }
  if (*kind == TaskKind::Input) {
    Result<const json *> field = reader.field(entry, where, "argument");
    if (!field)
      return field.status();
    Result<int64_t> argument = reader.integer(**field, where + ".argument");
    if (!argument)
      return argument.status();
    if (Status status = plan.bindArgument(*built, *argument); !status)
      return fail(status.message());
  }
  return built;
}

Result<Plan> readPlan(const json &root, const Reader &reader) {
  if (!root.is_object())
    return Status::failure(reader.source() +
                           ": expected a JSON object (a Doppler plan)");
  auto formatIt = root.find("format");
  if (formatIt == root.end() || !formatIt->is_string() ||
      *formatIt != kPlanFormat)
    return Status::failure(reader.source() +
                           ": not a Doppler plan (\"format\" must be \"" +
                           kPlanFormat + "\")");
  auto versionIt = root.find("version");
  if (versionIt == root.end() || !versionIt->is_number_integer())
    return reader.fail("version", "missing or not an integer");
  if (versionIt->get<int64_t>() != kPlanFormatVersion)
    return Status::failure(reader.source() + ": unsupported plan version " +
                           versionIt->dump() + " (this runner reads version " +
                           std::to_string(kPlanFormatVersion) + ")");

  Plan plan;
  if (auto it = root.find("function"); it != root.end()) {
    Result<std::string> name = reader.string(*it, "function");
    if (!name)
      return name.status();
    plan.function = *name;
  }
  if (auto it = root.find("predicted_makespan_s");
      it != root.end() && !it->is_null()) {
    Result<double> value = reader.number(*it, "predicted_makespan_s");
    if (!value)
      return value.status();
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
    Result<const json *> typeField = reader.field(arg, where, "type");
    if (!typeField)
      return typeField.status();
    Result<ElementType> type = reader.type(**typeField, where + ".type");
    if (!type)
      return type.status();
    Result<const json *> shapeField = reader.field(arg, where, "shape");
    if (!shapeField)
      return shapeField.status();
    Result<Shape> shape = reader.shape(**shapeField, where + ".shape");
    if (!shape)
      return shape.status();
    plan.addArgument(*type, *shape);
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
  return plan;
}

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

Result<json> parseJson(const std::string &text, const std::string &source) {
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

Result<std::string> readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Status::failure("cannot open '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad())
    return Status::failure("cannot read '" + path + "'");
  return text.str();
}

} // namespace

Result<Plan> planFromJson(const std::string &text, const std::string &source) {
  try {
    Result<json> root = parseJson(text, source);
    if (!root)
      return root.status();
    return readPlan(*root, Reader(source));
  } catch (const std::exception &error) {
    return Status::failure(source + ": " + error.what());
  }
}

Result<Plan> loadPlan(const std::string &path) {
  Result<std::string> text = readFile(path);
  if (!text)
    return text.status();
  return planFromJson(*text, path);
}

//===----------------------------------------------------------------------===//
// Seeded arguments, checksums, outputs
//===----------------------------------------------------------------------===//

uint16_t doubleToHalf(double value) {
  uint16_t sign = std::signbit(value) ? 0x8000 : 0;
  if (std::isnan(value))
    return sign | 0x7e00;
  double magnitude = std::fabs(value);
  // 65520 is halfway between the largest half (65504) and 2^16; ties go to
  // the even neighbour, which is infinity.
  if (magnitude >= 65520.0)
    return sign | 0x7c00;
  if (magnitude < 0x1.0p-14) {
    // Subnormal: a multiple of 2^-24. Scaling by a power of two is exact, so
    // one rounding (nearbyint, round to nearest even) happens.
    auto units = static_cast<uint16_t>(std::nearbyint(magnitude * 0x1.0p24));
    return sign | units; // 1024 units is the smallest normal: still right.
  }
  int exponent;
  std::frexp(magnitude, &exponent); // magnitude in [2^(e-1), 2^e)
  int e = exponent - 1;
  double mantissa =
      std::nearbyint(std::ldexp(magnitude, 10 - e)); // [1024, 2048]
  if (mantissa >= 2048) {
    mantissa = 1024;
    ++e;
  }
  if (e + 15 >= 31)
    return sign | 0x7c00;
  return sign | static_cast<uint16_t>(((e + 15) << 10) |
                                      (static_cast<int>(mantissa) - 1024));
}

HostArguments makeSeededArguments(const std::vector<PlanArgument> &arguments,
                                  uint64_t seed) {
  // Must match mlir::doppler::makeRandomInputs (lib/Interpreter): one
  // generator for all arguments, in order; 53 bits -> [0, 1) -> [-1, 1).
  std::mt19937_64 generator(seed);
  HostArguments result;
  for (const PlanArgument &arg : arguments) {
    int64_t count = numElements(arg.shape);
    std::vector<unsigned char> bytes(byteSize(arg.shape, arg.type));
    for (int64_t i = 0; i < count; ++i) {
      double unit = static_cast<double>(generator() >> 11) * 0x1.0p-53;
      double value = 2.0 * unit - 1.0;
      switch (arg.type) {
      case ElementType::F32: {
        float rounded = static_cast<float>(value);
        std::memcpy(bytes.data() + i * sizeof(float), &rounded, sizeof(float));
        break;
      }
      case ElementType::F64:
        std::memcpy(bytes.data() + i * sizeof(double), &value, sizeof(double));
        break;
      case ElementType::F16: {
        uint16_t half = doubleToHalf(value);
        std::memcpy(bytes.data() + i * sizeof(uint16_t), &half,
                    sizeof(uint16_t));
        break;
      }
      }
    }
    result.buffers.push_back(std::move(bytes));
  }
  return result;
}

InputBindings bindArguments(const Plan &plan, const HostArguments &arguments) {
  InputBindings bindings;
  for (const auto &[input, argument] : plan.inputArgument)
    if (argument >= 0 &&
        argument < static_cast<int64_t>(arguments.buffers.size()))
      bindings[input] = arguments.buffers[argument].data();
  return bindings;
}

double elementAt(const HostTensor &tensor, int64_t i) {
  switch (tensor.type) {
  case ElementType::F32:
    return tensor.f32()[i];
  case ElementType::F64:
    return tensor.f64()[i];
  case ElementType::F16: {
    uint16_t bits;
    std::memcpy(&bits, tensor.bytes.data() + i * sizeof(uint16_t),
                sizeof(bits));
    return halfToFloat(bits);
  }
  }
  return 0;
}

Checksum checksum(const HostTensor &tensor) {
  // Same order and accumulation as the interpreter's checksum().
  Checksum sum;
  double squares = 0;
  int64_t count = numElements(tensor.shape);
  for (int64_t i = 0; i < count; ++i) {
    double value = elementAt(tensor, i);
    sum.sum += value;
    squares += value * value;
  }
  sum.l2 = std::sqrt(squares);
  return sum;
}

std::string tensorTypeString(ElementType type, const Shape &shape) {
  std::string text(elementTypeName(type));
  text += "[";
  for (size_t d = 0; d < shape.size(); ++d)
    text += (d ? "x" : "") + std::to_string(shape[d]);
  return text + "]";
}

std::string describeOutput(size_t index, const HostTensor &tensor) {
  Checksum sum = checksum(tensor);
  auto format = [](double value) -> std::string {
    if (std::isnan(value))
      return "nan";
    char text[32];
    std::snprintf(text, sizeof(text), "%.9g", value);
    return text;
  };
  return "output " + std::to_string(index) + ": " +
         tensorTypeString(tensor.type, tensor.shape) + " sum " +
         format(sum.sum) + " l2 " + format(sum.l2);
}

Result<std::vector<HostTensor>> collectResults(const Plan &plan,
                                               const RunResult &run) {
  std::vector<HostTensor> results;
  for (ValueId value : plan.results) {
    auto it = run.outputs.find(value);
    if (it == run.outputs.end())
      return Status::failure("the run has no output %" + std::to_string(value));
    results.push_back(it->second);
  }
  return results;
}

Status saveOutputs(const std::vector<HostTensor> &outputs,
                   const std::string &path) {
  json list = json::array();
  for (const HostTensor &tensor : outputs) {
    json data = json::array();
    int64_t count = numElements(tensor.shape);
    for (int64_t i = 0; i < count; ++i) {
      double value = elementAt(tensor, i);
      // JSON has no NaN or infinity.
      if (std::isfinite(value))
        data.push_back(value);
      else
        data.push_back(std::isnan(value) ? "nan" : value > 0 ? "inf" : "-inf");
    }
    list.push_back({{"type", std::string(elementTypeName(tensor.type))},
                    {"shape", tensor.shape},
                    {"data", std::move(data)}});
  }
  json root = {{"format", kOutputsFormat},
               {"version", kOutputsVersion},
               {"outputs", std::move(list)}};
  std::ofstream out(path, std::ios::binary);
  if (!out)
    return Status::failure("cannot write '" + path + "'");
  out << root.dump() << "\n";
  out.close();
  if (!out)
    return Status::failure("cannot write '" + path + "'");
  return Status();
}

Result<std::vector<HostTensor>> loadOutputs(const std::string &path) {
  Result<std::string> text = readFile(path);
  if (!text)
    return text.status();
  try {
    Result<json> root = parseJson(*text, path);
    if (!root)
      return root.status();
    Reader reader(path);
    if (!root->is_object() || root->value("format", "") != kOutputsFormat)
      return Status::failure(path +
                             ": not a Doppler outputs file (\"format\" "
                             "must be \"" +
                             std::string(kOutputsFormat) + "\")");
    if (root->value("version", -1) != kOutputsVersion)
      return Status::failure(path +
                             ": unsupported outputs version (this "
                             "reader reads version " +
                             std::to_string(kOutputsVersion) + ")");
    Result<const json *> list = reader.field(*root, "file", "outputs");
    if (!list)
      return list.status();
    if (!(*list)->is_array())
      return reader.fail("outputs", "expected an array");
    std::vector<HostTensor> outputs;
    for (size_t i = 0; i < (*list)->size(); ++i) {
      const json &entry = (**list)[i];
      std::string where = "outputs[" + std::to_string(i) + "]";
      if (!entry.is_object())
        return reader.fail(where, "expected an object");
      HostTensor tensor;
      Result<const json *> typeField = reader.field(entry, where, "type");
      if (!typeField)
        return typeField.status();
      Result<ElementType> type = reader.type(**typeField, where + ".type");
      if (!type)
        return type.status();
      Result<const json *> shapeField = reader.field(entry, where, "shape");
      if (!shapeField)
        return shapeField.status();
      Result<Shape> shape = reader.shape(**shapeField, where + ".shape");
      if (!shape)
        return shape.status();
      Result<const json *> data = reader.field(entry, where, "data");
      if (!data)
        return data.status();
      int64_t count = numElements(*shape);
      if (!(*data)->is_array() ||
          static_cast<int64_t>((*data)->size()) != count)
        return reader.fail(where + ".data",
                           "expected " + std::to_string(count) + " numbers");
      tensor.type = *type;
      tensor.shape = *shape;
      tensor.bytes.resize(byteSize(*shape, *type));
      for (int64_t k = 0; k < count; ++k) {
        const json &item = (**data)[k];
        double value;
        if (item.is_number()) {
          value = item.get<double>();
        } else if (item == "nan") {
          value = std::nan("");
        } else if (item == "inf" || item == "-inf") {
          value = item == "inf" ? HUGE_VAL : -HUGE_VAL;
        } else {
          return reader.fail(where + ".data[" + std::to_string(k) + "]",
                             "expected a number");
        }
        unsigned char *dst = tensor.bytes.data();
        if (*type == ElementType::F32) {
          float f = static_cast<float>(value);
          std::memcpy(dst + k * sizeof(float), &f, sizeof(f));
        } else if (*type == ElementType::F64) {
          std::memcpy(dst + k * sizeof(double), &value, sizeof(value));
        } else {
          uint16_t h = doubleToHalf(value);
          std::memcpy(dst + k * sizeof(uint16_t), &h, sizeof(h));
        }
      }
      outputs.push_back(std::move(tensor));
    }
    return outputs;
  } catch (const std::exception &error) {
    return Status::failure(path + ": " + error.what());
  }
}

//===----------------------------------------------------------------------===//
// Timing and reports
//===----------------------------------------------------------------------===//

Result<Measurement> measure(Executor &executor, const TaskGraph &graph,
                            const InputBindings &bindings, int repeat) {
  Result<RunResult> warmUp = executor.run(graph, bindings);
  if (!warmUp)
    return warmUp.status();
  std::vector<RunResult> runs;
  for (int i = 0; i < repeat; ++i) {
    Result<RunResult> run = executor.run(graph, bindings);
    if (!run)
      return run.status();
    runs.push_back(std::move(*run));
  }
  if (runs.empty())
    return Status::failure("no timed runs (repeat must be >= 1)");
  Measurement result;
  std::vector<size_t> order(runs.size());
  for (size_t i = 0; i < runs.size(); ++i) {
    order[i] = i;
    result.makespans.push_back(runs[i].makespan);
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return runs[a].makespan < runs[b].makespan;
  });
  result.median = std::move(runs[order[(order.size() - 1) / 2]]);
  return result;
}

std::string formatNumber(double value, int digits) {
  if (std::isnan(value))
    return "nan";
  char text[40];
  std::snprintf(text, sizeof(text), "%.*g", digits, value);
  return text;
}

namespace {

/// JSON has no NaN or infinity: those become strings.
json jsonNumber(double value) {
  if (std::isfinite(value))
    return value;
  if (std::isnan(value))
    return "nan";
  return value > 0 ? "inf" : "-inf";
}

std::map<std::string, int64_t> tasksByKind(const TaskGraph &graph) {
  std::map<std::string, int64_t> counts;
  for (ValueId id = 0; id < graph.size(); ++id)
    if (graph.task(id).kind != TaskKind::Input)
      ++counts[std::string(taskKindName(graph.task(id).kind))];
  return counts;
}

int64_t numTasks(const TaskGraph &graph) {
  return graph.size() - static_cast<int64_t>(graph.inputs().size());
}

} // namespace

std::string RunReport::json() const {
  nlohmann::json perDevice = nlohmann::json::array();
  const RunResult &run = measurement.median;
  for (size_t d = 0; d < run.devices.size(); ++d) {
    const DeviceStats &stats = run.devices[d];
    perDevice.push_back({{"device", d},
                         {"utilization", jsonNumber(stats.utilization)},
                         {"compute_busy_s", stats.computeBusy},
                         {"copy_busy_s", stats.copyBusy},
                         {"compute_tasks", stats.computeTasks},
                         {"copy_tasks", stats.copyTasks},
                         {"peak_bytes", stats.peakBytes}});
  }
  nlohmann::json outputsJson = nlohmann::json::array();
  for (size_t i = 0; i < outputs.size(); ++i) {
    Checksum sum = checksum(outputs[i]);
    nlohmann::json entry = {
        {"index", i},
        {"type", tensorTypeString(outputs[i].type, outputs[i].shape)},
        {"sum", jsonNumber(sum.sum)},
        {"l2", jsonNumber(sum.l2)}};
    if (i < errors.size())
      entry["rel_error"] = jsonNumber(errors[i]);
    outputsJson.push_back(std::move(entry));
  }
  nlohmann::json root = {{"file", file},
                         {"function", function},
                         {"backend", backend},
                         {"devices", devices},
                         {"seed", seed},
                         {"repeat", repeat},
                         {"tasks", numTasks(*graph)},
                         {"tasks_by_kind", tasksByKind(*graph)},
                         {"measured_makespan_s", run.makespan},
                         {"makespans_s", measurement.makespans},
                         {"predicted_makespan_s", nullptr},
                         {"per_device", std::move(perDevice)},
                         {"outputs", std::move(outputsJson)}};
  if (predicted) {
    root["predicted_makespan_s"] = *predicted;
    if (*predicted > 0)
      root["measured_over_predicted"] = run.makespan / *predicted;
  }
  if (maxRelError) {
    root["max_rel_error"] = jsonNumber(*maxRelError);
    root["tolerance"] = tolerance;
    root["ok"] = ok();
  }
  if (!trace.empty())
    root["trace"] = trace;
  return root.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
         "\n";
}

std::string RunReport::text() const {
  const RunResult &run = measurement.median;
  std::string out = "@" + function + " on " + std::to_string(devices) + " " +
                    backend + " device(s), seed " + std::to_string(seed) +
                    ": " + std::to_string(numTasks(*graph)) + " tasks (";
  bool first = true;
  for (const auto &[kind, count] : tasksByKind(*graph)) {
    out += (first ? "" : ", ") + kind + " " + std::to_string(count);
    first = false;
  }
  out += ")\n";
  out += "  measured makespan: " + formatNumber(run.makespan, 4) +
         " s (median of " + std::to_string(repeat) +
         " run(s) after a warm-up)\n";
  if (predicted) {
    out += "  predicted makespan: " + formatNumber(*predicted, 4) + " s";
    if (*predicted > 0)
      out += " (measured / predicted " +
             formatNumber(run.makespan / *predicted, 3) + ")";
    out += "\n";
  } else {
    out += "  predicted makespan: none (no doppler.makespan; run "
           "doppler-simulate)\n";
  }
  for (size_t d = 0; d < run.devices.size(); ++d) {
    const DeviceStats &stats = run.devices[d];
    out += "  device " + std::to_string(d) + ": utilization " +
           formatNumber(stats.utilization, 3) + ", " +
           std::to_string(stats.computeTasks) + " compute task(s), " +
           std::to_string(stats.copyTasks) + " transfer(s) in, peak " +
           std::to_string(stats.peakBytes) + " bytes\n";
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    out += "  " + describeOutput(i, outputs[i]);
    if (i < errors.size())
      out += " rel-error " + formatNumber(errors[i], 3);
    out += "\n";
  }
  if (maxRelError) {
    char tol[32];
    std::snprintf(tol, sizeof(tol), "%g", tolerance);
    out += "check against the interpreter: max rel-error " +
           formatNumber(*maxRelError, 3) + (ok() ? " <= " : " > ") +
           "tolerance " + tol + ": " + (ok() ? "ok" : "FAILED") + "\n";
  }
  if (!trace.empty())
    out += "  trace: " + trace + "\n";
  return out;
}

} // namespace doppler::runtime
