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
                          "task), flops (FLOP/s), half_size and/or "
                          "gemv_bandwidth"};
    KernelCost cost;
    for (auto e = entry.begin(); e != entry.end(); ++e) {
      if (e.key() == "overhead") {
        if (!number(e.value()) || e.value().get<double>() < 0)
          return Error{field + ".overhead",
                       "expected a non-negative number of seconds"};
        cost.overhead = e.value().get<double>();
      } else if (e.key() == "flops") {
        if (!number(e.value()) || e.value().get<double>() <= 0)
          return Error{field + ".flops", "expected a positive number of "
                                         "FLOP/s"};
        cost.flops = e.value().get<double>();
      } else if (e.key() == "half_size") {
        if (!number(e.value()) || e.value().get<double>() < 0)
          return Error{field + ".half_size",
                       "expected a non-negative number (a GEMM side)"};
        cost.halfSize = e.value().get<double>();
      } else if (e.key() == "gemv_bandwidth") {
        if (!number(e.value()) || e.value().get<double>() <= 0)
          return Error{field + ".gemv_bandwidth",
                       "expected a positive number of bytes per second"};
        cost.gemvBandwidth = e.value().get<double>();
      } else {
        return Error{field + "." + e.key(),
                     "unknown field (expected overhead, flops, half_size, "
                     "gemv_bandwidth)"};
      }
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
    object[std::string(kernelKindName(static_cast<KernelKind>(k)))] = entry;
  }
  return object;
}

} // namespace doppler::placement
