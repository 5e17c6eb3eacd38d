//===- KernelCosts.cpp - Per-kind task costs of a device ------------------===//

#include "Doppler/Placement/KernelCosts.h"

#include "KernelCostsJson.h"

#include <cmath>

namespace doppler::placement {
namespace {

constexpr std::array<std::string_view, kNumKernelKinds> kNames = {
    "contraction", "fused", "copy", "conv", "depthwise", "pool",
    "elementwise"};

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

double GemmGrid::rateAt(double mSide, double nSide, double kSide) const {
  // Per axis: the two neighbouring points and the weight of the upper one,
  // in log space, the coordinate clamped to the axis.
  struct Bracket {
    size_t low = 0, high = 0;
    double weight = 0;
  };
  auto bracket = [](const std::vector<double> &axis, double x) {
    Bracket b;
    if (axis.size() < 2 || x <= axis.front())
      return b;
    if (x >= axis.back()) {
      b.low = b.high = axis.size() - 1;
      return b;
    }
    while (b.low + 2 < axis.size() && axis[b.low + 1] <= x)
      ++b.low;
    b.high = b.low + 1;
    b.weight = std::log(x / axis[b.low]) / std::log(axis[b.high] / axis[b.low]);
    return b;
  };
  const Bracket bm = bracket(m, mSide), bn = bracket(n, nSide),
                bk = bracket(k, kSide);
  double logRate = 0;
  int corners = 0;
  double only = 0;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      for (int l = 0; l < 2; ++l) {
        const double w = (i ? bm.weight : 1 - bm.weight) *
                         (j ? bn.weight : 1 - bn.weight) *
                         (l ? bk.weight : 1 - bk.weight);
        if (w == 0)
          continue;
        const size_t at =
            ((i ? bm.high : bm.low) * n.size() + (j ? bn.high : bn.low)) *
                k.size() +
            (l ? bk.high : bk.low);
        logRate += w * std::log(flops[at]);
        ++corners;
        only = flops[at];
      }
  // On a point of the grid, its figure as given (no rounding through log).
  return corners == 1 ? only : std::exp(logRate);
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
/// joins' and the memory's), copies and elementwise einsums their overhead
/// and row time; matrix-vector products are contractions and convolutions.
bool kindReads(KernelKind kind, const KernelField &f) {
  const std::string name = f.name;
  if (name == "overhead")
    return true;
  const bool walks = kind == KernelKind::Copy ||
                     kind == KernelKind::Elementwise;
  if (name == "row_time")
    return kind == KernelKind::Fused || walks;
  if (name == "gather_time")
    return kind == KernelKind::Fused;
  if (kind == KernelKind::Fused || walks)
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
  return kind == KernelKind::Conv || kind == KernelKind::Contraction
             ? names + ", grid"
             : names;
}

/// Reads a kind's "grid" (GemmGrid) at `where`; on error, field and message.
std::optional<std::pair<std::string, std::string>>
parseGemmGrid(const nlohmann::json &object, const std::string &where,
              GemmGrid &grid) {
  using Error = std::pair<std::string, std::string>;
  if (!object.is_object())
    return Error{where, "expected an object with m, n, k (GEMM sides) and "
                        "flops (FLOP/s at each point)"};
  auto numbers = [](const nlohmann::json &list, double low, double high,
                    std::vector<double> &out) {
    if (!list.is_array() || list.empty())
      return false;
    for (const nlohmann::json &value : list) {
      double x = value.is_number() ? value.get<double>() : std::nan("");
      if (!(x >= low && x <= high))
        return false;
      out.push_back(x);
    }
    return true;
  };
  for (auto it = object.begin(); it != object.end(); ++it)
    if (it.key() != "m" && it.key() != "n" && it.key() != "k" &&
        it.key() != "flops")
      return Error{where + "." + it.key(),
                   "unknown field (expected m, n, k, flops)"};
  std::vector<double> *axes[] = {&grid.m, &grid.n, &grid.k};
  const char *names[] = {"m", "n", "k"};
  size_t points = 1;
  for (int a = 0; a < 3; ++a) {
    const std::string field = where + "." + names[a];
    if (!object.contains(names[a]) ||
        !numbers(object[names[a]], 1, 1e9, *axes[a]))
      return Error{field, "expected a list of GEMM sides in [1, 1e9]"};
    for (size_t i = 1; i < axes[a]->size(); ++i)
      if (!((*axes[a])[i] > (*axes[a])[i - 1]))
        return Error{field, "expected increasing sides"};
    points *= axes[a]->size();
  }
  if (!object.contains("flops") ||
      !numbers(object["flops"], 1, 1e21, grid.flops) ||
      grid.flops.size() != points)
    return Error{where + ".flops",
                 "expected " + std::to_string(points) +
                     " numbers of FLOP/s in [1, 1e21] (m by n by k)"};
  return std::nullopt;
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
                          "gemv_bandwidth, gather_time, row_time and/or grid"};
    KernelCost cost;
    for (auto e = entry.begin(); e != entry.end(); ++e) {
      const std::string name = field + "." + e.key();
      if (e.key() == "grid") {
        if (*kind != KernelKind::Conv && *kind != KernelKind::Contraction)
          return Error{name, "not read for " + std::string(it.key()) +
                                 " tasks (" + fieldsOf(*kind) + " are)"};
        if (auto error = parseGemmGrid(e.value(), name, cost.grid))
          return error;
        continue;
      }
      const KernelField *spec = fieldNamed(e.key());
      if (!spec)
        return Error{name, "unknown field (expected overhead, flops, "
                           "half_size, gemv_bandwidth, gather_time, "
                           "row_time, grid)"};
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
    if (!cost.grid.empty())
      entry["grid"] = {{"m", cost.grid.m},
                       {"n", cost.grid.n},
                       {"k", cost.grid.k},
                       {"flops", cost.grid.flops}};
    object[std::string(kernelKindName(static_cast<KernelKind>(k)))] = entry;
  }
  return object;
}

} // namespace doppler::placement
