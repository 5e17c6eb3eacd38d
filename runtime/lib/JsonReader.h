//===- JsonReader.h - Typed reading of the runtime's JSON files -*- C++ -*-===//
//
// Internal to the runtime: what reading a plan (PlanJson.cpp) and an outputs
// file (HostTensors.cpp) share.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_RUNTIME_LIB_JSONREADER_H
#define DOPPLER_RUNTIME_LIB_JSONREADER_H

#include "doppler/runtime/Plan.h"

#include "Doppler/Support/CheckedSize.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace doppler::runtime::detail {

using nlohmann::json;

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
    if (value.is_number_unsigned() &&
        value.get<uint64_t>() > uint64_t(INT64_MAX))
      return fail(where, value.dump() + " is out of range (above 2^63 - 1)");
    return value.get<int64_t>();
  }

  /// The "format" and "version" fields that open a Doppler file: the
  /// string `format` and the integer `version`; `what` names the kind of
  /// file in errors. Fields of another JSON type are errors, not throws.
  Status formatAndVersion(const json &root, const std::string &what,
                          const char *format, int64_t version) const {
    auto formatIt = root.find("format");
    if (formatIt == root.end() || !formatIt->is_string() ||
        *formatIt != format)
      return Status::failure(source_ + ": not a Doppler " + what +
                             " (\"format\" must be \"" + format + "\")");
    auto versionIt = root.find("version");
    if (versionIt == root.end() || !versionIt->is_number_integer())
      return fail("version", "missing or not an integer");
    if (versionIt->get<int64_t>() != version)
      return Status::failure(source_ + ": unsupported " + what + " version " +
                             versionIt->dump() + " (this reader reads version " +
                             std::to_string(version) + ")");
    return Status();
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
      Result<int64_t> element =
          integer(value[i], where + "[" + std::to_string(i) + "]");
      if (!element)
        return element.status();
      result.push_back(*element);
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
                             "' (expected f32, f64, f16, i32 or i64)");
    return *parsed;
  }

  /// The required "type" and "shape" fields of `object` (at `where`).
  Status typeAndShape(const json &object, const std::string &where,
                      ElementType &typeOut, Shape &shapeOut) const {
    Result<const json *> typeField = field(object, where, "type");
    if (!typeField)
      return typeField.status();
    Result<ElementType> parsedType = type(**typeField, where + ".type");
    if (!parsedType)
      return parsedType.status();
    Result<const json *> shapeField = field(object, where, "shape");
    if (!shapeField)
      return shapeField.status();
    Result<Shape> parsedShape = shape(**shapeField, where + ".shape");
    if (!parsedShape)
      return parsedShape.status();
    std::string problem =
        checkedSizeProblem(*parsedShape, elementSize(*parsedType));
    if (!problem.empty())
      return fail(where, tensorTypeString(*parsedType, *parsedShape) + " " +
                             problem);
    typeOut = *parsedType;
    shapeOut = *parsedShape;
    return Status();
  }

  const std::string &source() const { return source_; }

private:
  std::string source_;
};

/// Parses `text`; a syntax error names `source`, the line and the column.
Result<json> parseJson(const std::string &text, const std::string &source);

/// The whole file at `path`.
Result<std::string> readFile(const std::string &path);

} // namespace doppler::runtime::detail

#endif // DOPPLER_RUNTIME_LIB_JSONREADER_H
