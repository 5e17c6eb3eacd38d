//===- HostTensors.cpp - Seeded arguments, checksums and output files ----===//

#include "JsonReader.h"
#include "TensorFile.h"

#include "Doppler/Support/CheckedSize.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>

namespace doppler::runtime {

using detail::json;
using detail::Reader;

namespace {

constexpr const char *kOutputsFormat = "doppler-outputs";
constexpr int kOutputsVersion = 1;

} // namespace

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

int64_t seededIndexBound(const TaskGraph &graph) {
  int64_t bound = 0;
  for (ValueId id = 0; id < graph.size(); ++id) {
    const Task &task = graph.task(id);
    if (task.kind != TaskKind::Gather)
      continue;
    int64_t extent = graph.task(task.inputs[0]).shape[task.axis];
    bound = bound == 0 ? extent : std::min(bound, extent);
  }
  return std::max<int64_t>(bound, 1);
}

Result<HostArguments> makeSeededArguments(const Plan &plan, uint64_t seed) {
  return makeSeededArguments(plan.arguments, seed,
                             seededIndexBound(plan.graph));
}

Result<HostArguments>
makeSeededArguments(const std::vector<PlanArgument> &arguments, uint64_t seed,
                    int64_t indexBound) {
  // Must match mlir::doppler::makeRandomInputs (lib/Interpreter): one
  // generator for all arguments, in order; 53 bits -> [0, 1) -> [-1, 1).
  std::mt19937_64 generator(seed);
  HostArguments result;
  for (const PlanArgument &arg : arguments) {
    std::optional<int64_t> size =
        checkedByteSize(arg.shape, elementSize(arg.type));
    if (!size)
      return Status::failure("argument of type " +
                             tensorTypeString(arg.type, arg.shape) + " " +
                             checkedSizeProblem(arg.shape, elementSize(arg.type)));
    int64_t count = numElements(arg.shape);
    // LLVM tools (doppler-run) install a new-handler that aborts instead of
    // throwing std::bad_alloc, so a size the host cannot hold is first
    // probed with malloc, which reports failure as null.
    auto cannotAllocate = [&] {
      return Status::failure("cannot allocate " + std::to_string(*size) +
                             " bytes on the host for an argument of type " +
                             tensorTypeString(arg.type, arg.shape));
    };
    void *probe = std::malloc(static_cast<size_t>(*size));
    if (!probe && *size > 0)
      return cannotAllocate();
    std::free(probe);
    std::vector<unsigned char> bytes;
    try {
      bytes.resize(static_cast<size_t>(*size));
    } catch (const std::bad_alloc &) {
      return cannotAllocate();
    }
    for (int64_t i = 0; i < count; ++i) {
      double unit = static_cast<double>(generator() >> 11) * 0x1.0p-53;
      double value = 2.0 * unit - 1.0;
      auto index = static_cast<int64_t>(unit * static_cast<double>(indexBound));
      switch (arg.type) {
      case ElementType::I32: {
        auto narrow = static_cast<int32_t>(index);
        std::memcpy(bytes.data() + i * sizeof(int32_t), &narrow,
                    sizeof(int32_t));
        break;
      }
      case ElementType::I64:
        std::memcpy(bytes.data() + i * sizeof(int64_t), &index,
                    sizeof(int64_t));
        break;
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
  case ElementType::I32: {
    int32_t value;
    std::memcpy(&value, tensor.bytes.data() + i * sizeof(int32_t),
                sizeof(value));
    return value;
  }
  case ElementType::I64: {
    int64_t value;
    std::memcpy(&value, tensor.bytes.data() + i * sizeof(int64_t),
                sizeof(value));
    return static_cast<double>(value);
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
  if (detail::wantsBinaryTensorFile(path))
    return detail::writeBinaryTensors(outputs, path);
  json list = json::array();
  for (const HostTensor &tensor : outputs) {
    json data = json::array();
    int64_t count = numElements(tensor.shape);
    for (int64_t i = 0; i < count && tensor.type == ElementType::I64; ++i) {
      int64_t value; // exact, beyond 2^53 too
      std::memcpy(&value, tensor.bytes.data() + i * sizeof(value),
                  sizeof(value));
      data.push_back(value);
    }
    for (int64_t i = 0; i < count && tensor.type == ElementType::I32; ++i)
      data.push_back(static_cast<int64_t>(elementAt(tensor, i)));
    for (int64_t i = 0; i < count && !isIntegerType(tensor.type); ++i) {
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
  Result<std::string> text = detail::readFile(path);
  if (!text)
    return text.status();
  if (detail::isBinaryTensorFile(*text))
    return detail::parseBinaryTensors(*text, path);
  // A binary tensor file of another version, or a corrupted magic: not
  // "not valid JSON".
  if (text->rfind("DPLRTNS", 0) == 0)
    return Status::failure(path + ": a binary tensor file this reader does "
                                  "not read (magic '" +
                           text->substr(0, 8) +
                           "'; this reader reads 'DPLRTNS1')");
  try {
    Result<json> root = detail::parseJson(*text, path);
    if (!root)
      return root.status();
    Reader reader(path);
    if (Status status = reader.formatAndVersion(*root, "outputs file",
                                                kOutputsFormat,
                                                kOutputsVersion);
        !status)
      return status;
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
      if (Status status =
              reader.typeAndShape(entry, where, tensor.type, tensor.shape);
          !status)
        return status;
      Result<const json *> data = reader.field(entry, where, "data");
      if (!data)
        return data.status();
      int64_t count = numElements(tensor.shape);
      if (!(*data)->is_array() ||
          static_cast<int64_t>((*data)->size()) != count)
        return reader.fail(where + ".data",
                           "expected " + std::to_string(count) + " numbers");
      tensor.bytes.resize(byteSize(tensor.shape, tensor.type));
      for (int64_t k = 0; k < count; ++k) {
        const json &item = (**data)[k];
        unsigned char *dst = tensor.bytes.data();
        if (isIntegerType(tensor.type)) {
          // Integers are read exactly (an i64 beyond 2^53 included); one
          // past 2^63 - 1 is an error, not wrapped to a negative.
          Result<int64_t> checked =
              reader.integer(item, where + ".data[" + std::to_string(k) + "]");
          if (!checked)
            return checked.status();
          int64_t wide = *checked;
          if (tensor.type == ElementType::I64) {
            std::memcpy(dst + k * sizeof(int64_t), &wide, sizeof(wide));
            continue;
          }
          if (wide < INT32_MIN || wide > INT32_MAX)
            return reader.fail(where + ".data[" + std::to_string(k) + "]",
                               "integer " + std::to_string(wide) +
                                   " does not fit in i32");
          auto narrow = static_cast<int32_t>(wide);
          std::memcpy(dst + k * sizeof(int32_t), &narrow, sizeof(narrow));
          continue;
        }
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
        if (tensor.type == ElementType::F32) {
          float f = static_cast<float>(value);
          std::memcpy(dst + k * sizeof(float), &f, sizeof(f));
        } else if (tensor.type == ElementType::F64) {
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

} // namespace doppler::runtime
