//===- KernelCosts.cpp - Per-kind task costs of a device ------------------===//

#include "Doppler/Placement/KernelCosts.h"

#include "KernelCostsJson.h"

#include <cmath>

namespace doppler::placement {
namespace {

constexpr std::array<std::string_view, kNumKernelKinds> kNames = {
    "contraction", "fused", "copy", "conv", "depthwise", "pool"};

} // namespace

std::string_view kernelKindName(KernelKind kind) {
  return kNames[static_cast<unsigned>(kind)];
}

std::optional<KernelKind> parseKernelKind(std::string_view name) {
  for (unsigned k = 0; k < kNumKernelKinds; ++k)
    if (kNames[k] == name)
      return static_cast<KernelKind>(k);
  return std::nullopt;
}

std::string kernelKindNames() {
  std::string names;
  for (std::string_view name : kNames)
    names += (names.empty() ? "" : ", ") + std::string(name);
  return names;
}

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

namespace {

/// One figure of a kind's entry: its name, where it goes, its bounds.
struct KernelField {
  const char *name;
  double KernelCost::*member;
  double low, high;
  const char *expected;
};

constexpr KernelField kFields[] = {
    {"overhead", &KernelCost::overhead, 0, 1,
     "a number of seconds per task in [0, 1]"},
    {"flops", &KernelCost::flops, 1, 1e21,
     "a number of FLOP/s in [1, 1e21]"},
    {"half_size", &KernelCost::halfSize, 0, 1e9,
     "a GEMM side or positions per channel in [0, 1e9]"},
    {"gemv_bandwidth", &KernelCost::gemvBandwidth, 1, 1e16,
     "a number of bytes per second in [1, 1e16]"},
    {"gather_time", &KernelCost::gatherTime, 0, 1,
     "a number of seconds per gathered element in [0, 1]"},
    {"row_time", &KernelCost::rowTime, 0, 1,
     "a number of seconds per row in [0, 1]"},
};

const KernelField *fieldNamed(const std::string &name) {
  for (const KernelField &f : kFields)
    if (name == f.name)
      return &f;
  return nullptr;
}

/// Whether the cost model reads `f` for tasks of `kind`: fused tasks their
/// overhead and their walk's gather and row times (their rates are the
/// joins' and the memory's), copies only their overhead; matrix-vector
/// products are contractions and convolutions.
bool kindReads(KernelKind kind, const KernelField &f) {
  const std::string name = f.name;
  if (name == "overhead")
    return true;
  if (name == "gather_time" || name == "row_time")
    return kind == KernelKind::Fused;
  if (kind == KernelKind::Fused || kind == KernelKind::Copy)
    return false;
  if (name == "gemv_bandwidth")
    return kind == KernelKind::Contraction || kind == KernelKind::Conv;
  return true;
}

std::string fieldsOf(KernelKind kind) {
  std::string names;
  for (const KernelField &f : kFields)
    if (kindReads(kind, f))
      names += (names.empty() ? "" : ", ") + std::string(f.name);
  return names;
}

} // namespace

std::optional<std::pair<std::string, std::string>>
parseKernelCosts(const nlohmann::json &object, const std::string &where,
                 KernelCostTable &table) {
  using Error = std::pair<std::string, std::string>;
  if (!object.is_object())
    return Error{where, "expected an object of task costs by kind, e.g. "
                        "{\"conv\": {\"overhead\": 1.8e-6, \"flops\": 5e10}}"};
  auto number = [](const nlohmann::json &value) {
    return value.is_number() && std::isfinite(value.get<double>());
  };
  for (auto it = object.begin(); it != object.end(); ++it) {
    const std::string field = where + "." + it.key();
    std::optional<KernelKind> kind = parseKernelKind(it.key());
    if (!kind)
      return Error{field, "unknown kind (known: " + kernelKindNames() + ")"};
    const nlohmann::json &entry = it.value();
    if (!entry.is_object())
      return Error{field, "expected an object with overhead (seconds per "
                          "task), flops (FLOP/s), half_size, "
                          "gemv_bandwidth, gather_time and/or row_time"};
    KernelCost cost;
    for (auto e = entry.begin(); e != entry.end(); ++e) {
      const std::string name = field + "." + e.key();
      const KernelField *spec = fieldNamed(e.key());
      if (!spec)
        return Error{name, "unknown field (expected overhead, flops, "
                           "half_size, gemv_bandwidth, gather_time, "
                           "row_time)"};
      if (!kindReads(*kind, *spec))
        return Error{name, "not read for " + std::string(it.key()) +
                               " tasks (" + fieldsOf(*kind) + " are)"};
      const double value = number(e.value()) ? e.value().get<double>()
                                             : std::nan("");
      // Bounds: a figure past them would price a task at infinity (or
      // nothing), which no later check can pin on this field.
      if (!(value >= spec->low && value <= spec->high))
        return Error{name, std::string("expected ") + spec->expected};
      cost.*(spec->member) = value;
    }
    table[static_cast<unsigned>(*kind)] = cost;
  }
  return std::nullopt;
}

nlohmann::json kernelCostsJson(const KernelCostTable &table) {
  nlohmann::json object = nlohmann::json::object();
  for (unsigned k = 0; k < kNumKernelKinds; ++k) {
    const KernelCost &cost = table[k];
    if (cost.empty())
      continue;
    nlohmann::json entry = nlohmann::json::object();
    if (cost.hasOverhead())
      entry["overhead"] = cost.overhead;
    if (cost.hasFlops())
      entry["flops"] = cost.flops;
    if (cost.halfSize > 0)
      entry["half_size"] = cost.halfSize;
    if (cost.gemvBandwidth > 0)
      entry["gemv_bandwidth"] = cost.gemvBandwidth;
    if (cost.gatherTime > 0)
      entry["gather_time"] = cost.gatherTime;
    if (cost.rowTime > 0)
      entry["row_time"] = cost.rowTime;
    object[std::string(kernelKindName(static_cast<KernelKind>(k)))] = entry;
  }
  return object;
}

} // namespace doppler::placement
