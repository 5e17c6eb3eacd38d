//===- SystemDescription.cpp - Hardware for the cost model ----------------===//

#include "Doppler/Placement/SystemDescription.h"

#include "KernelCostsJson.h"
#include "SystemDescriptionInternal.h"

#include "Doppler/Support/ErrorString.h"
#include "Doppler/Support/Limits.h"
#include "Doppler/Support/ReadFile.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

namespace doppler::placement {
namespace {

using json = nlohmann::json;

DeviceDescription makeDevice(std::string name,
                             std::map<std::string, double> peakFlops,
                             double memoryBytes, double memoryBandwidth,
                             double launchOverhead) {
  DeviceDescription device;
  device.name = std::move(name);
  device.peakFlops = std::move(peakFlops);
  device.memoryBytes = memoryBytes;
  device.memoryBandwidth = memoryBandwidth;
  device.launchOverhead = launchOverhead;
  return device;
}

// Data-sheet figures (dense, no sparsity). f32 uses the non-tensor-core
// rate: PyTorch does not use TF32 for fp32 matmuls by default.
// NVIDIA H100 SXM5 80GB: FP64 34 TF, FP32 67 TF, TF32 494.7 TF,
// BF16/FP16 989.4 TF, FP8 1978.9 TF; HBM3 3.35 TB/s; NVLink 4 900 GB/s per
// GPU in both directions (450 GB/s each way).
DeviceDescription h100() {
  return makeDevice("H100-SXM5-80GB",
                    {{"f64", 34e12},
                     {"f32", 67e12},
                     {"tf32", 494.7e12},
                     {"bf16", 989.4e12},
                     {"f16", 989.4e12},
                     {"f8E4M3FN", 1978.9e12},
                     {"default", 67e12}},
                    80e9, 3.35e12, 5e-6);
}
// NVIDIA A100 SXM4 80GB: FP64 9.7 TF, FP32 19.5 TF, TF32 156 TF,
// BF16/FP16 312 TF; HBM2e 2.039 TB/s; NVLink 3 600 GB/s (300 GB/s each
// way). The 40GB part has the same compute and links but HBM2 at
// 1.555 TB/s.
DeviceDescription a100(const char *name, double memoryBytes,
                       double memoryBandwidth) {
  return makeDevice(name,
                    {{"f64", 9.7e12},
                     {"f32", 19.5e12},
                     {"tf32", 156e12},
                     {"bf16", 312e12},
                     {"f16", 312e12},
                     {"default", 19.5e12}},
                    memoryBytes, memoryBandwidth, 5e-6);
}
// Joins that GPUs evaluate on their special function units (SFU: 16
// results per clock per SM on compute capability 8.x and 9.x, CUDA C++
// Programming Guide, "Arithmetic Instructions"). exp, log, sqrt, rsqrt,
// reciprocal and div (rcp + mul) take one SFU operation; pow (lg2 + ex2),
// sigmoid, silu, tanh and gelu (ex2 + rcp) two. Elementwise kernels stay
// memory bound at these rates (an H100 streams at most ~1.7e12 bf16
// elements/s), so the entries rarely change GPU costs; they keep the cost
// model honest should a join ever outrun memory.
DeviceDescription withSfuJoins(DeviceDescription device, double sfuPerSecond) {
  for (JoinKind join : {JoinKind::Exp, JoinKind::Log, JoinKind::Sqrt,
                        JoinKind::Rsqrt, JoinKind::Reciprocal, JoinKind::Div})
    device.joinThroughput[static_cast<unsigned>(join)] = sfuPerSecond;
  for (JoinKind join : {JoinKind::Pow, JoinKind::Sigmoid, JoinKind::Silu,
                        JoinKind::Tanh, JoinKind::Gelu})
    device.joinThroughput[static_cast<unsigned>(join)] = sfuPerSecond / 2;
  return device;
}

// H100 SXM5: 132 SMs x 16 x 1.98 GHz; A100 SXM4: 108 SMs x 16 x 1.41 GHz.
DeviceDescription h100Sfu() { return withSfuJoins(h100(), 132 * 16 * 1.98e9); }
DeviceDescription a100Sfu() {
  return withSfuJoins(a100("A100-SXM4-80GB", 80e9, 2.039e12),
                      108 * 16 * 1.41e9);
}
DeviceDescription a100Sfu40() {
  return withSfuJoins(a100("A100-SXM4-40GB", 40e9, 1.555e12),
                      108 * 16 * 1.41e9);
}

// One core of a server CPU with AVX2 FMA at ~3 GHz: 2 FMA units x 8 f32
// lanes x 2 FLOP x 3e9 = 96 GFLOP/s f32 (half for f64); a share of a
// ~80 GB/s memory system. The runtime's CPU kernels evaluate joins with
// AVX2 span kernels (SLEEF for exp, log, pow and tanh; runtime/lib/
// CpuJoins.h): the throughputs are doppler-calibrate's on an AMD EPYC core
// (2026-11-24, after the vector joins landed), rounded down. Joins not
// listed run at memory speed. Memory: 4 GB of host RAM per core, a modest
// server's share (a preset cannot know the machine; doppler-calibrate
// writes this machine's available memory divided among the devices).
DeviceDescription cpuCore() {
  DeviceDescription device =
      makeDevice("cpu-core", {{"f64", 48e9}, {"f32", 96e9}, {"default", 96e9}},
                 4e9, 20e9, 2e-6);
  for (auto [join, perSecond] :
       std::initializer_list<std::pair<JoinKind, double>>{
           {JoinKind::Div, 7e9},
           {JoinKind::Pow, 1.4e8},
           {JoinKind::Exp, 1.4e9},
           {JoinKind::Log, 7.5e8},
           {JoinKind::Sqrt, 5e9},
           {JoinKind::Rsqrt, 2.9e9},
           {JoinKind::Reciprocal, 7e9},
           {JoinKind::Silu, 1.2e9},
           {JoinKind::Gelu, 9e8},
           {JoinKind::Tanh, 1.6e8},
           {JoinKind::Sigmoid, 1.2e9}})
    device.joinThroughput[static_cast<unsigned>(join)] = perSecond;
  return device;
}


struct Preset {
  const char *name;
  DeviceDescription (*device)();
  int32_t count; // devices per node
  LinkDescription link;
  HostDescription host;
  // Multi-node presets: `nodes` nodes of `count` devices, each with `nics`
  // NICs on `network`.
  int32_t nodes = 1;
  int32_t nics = 0;
  NetworkDescription network{};
};

// Host memory and links of the presets. H100 SXM: PCIe Gen5 x16 to the host
// (64 GB/s per direction, about 55 GB/s achieved by pinned cudaMemcpyAsync),
// 2 TB of host RAM (DGX H100). A100 SXM: PCIe Gen4 x16 (32 GB/s, about 25
// achieved), 1 TB (DGX A100). CPU devices: the host is the same RAM, a
// stash is a memcpy at the inter-device rate; 64 GB for stashes.
constexpr HostDescription kH100Host{2e12, {55e9, 10e-6}};
constexpr HostDescription kA100Host{1e12, {25e9, 10e-6}};
constexpr HostDescription kCpuHost{64e9, {10e9, 1e-6}};

// Between DGX H100 nodes: the compute fabric of 8 single-port ConnectX-7
// NICs per node at 400 Gb/s InfiniBand NDR each (NVIDIA DGX H100 data
// sheet, "Networking: 4x OSFP ports serving 8x single-port NVIDIA
// ConnectX-7 VPI, up to 400 Gb/s InfiniBand/Ethernet"), i.e. 50 GB/s per
// NIC each way, one NIC per GPU. Latency: not a data-sheet figure; NDR
// switches add ~130 ns a hop (Quantum-2 QM9700) and a GPU-to-GPU message
// between nodes over GPUDirect RDMA takes a few microseconds end to end
// (OSU osu_latency / nccl-tests figures on such clusters: 2-5 us): 3 us.
constexpr NetworkDescription kNdrInfiniBand{50e9, 3e-6};
// Between the two ranks of cpu2-2n on one host: Open MPI's shared-memory
// or TCP loopback transport, typically 3-10 GB/s and 0.5-20 us between two
// ranks (OSU osu_bw / osu_latency on a server); we take 5 GB/s (half the
// in-process memcpy rate of the cpu presets: MPI copies through its own
// buffers) and 5 us, one "NIC" per node, until doppler-calibrate measures
// the loopback network (issue 31).
constexpr NetworkDescription kLoopback{5e9, 5e-6};
const Preset kPresets[] = {
    {"h100x4", h100Sfu, 4, {450e9, 2e-6}, kH100Host},
    {"h100x8", h100Sfu, 8, {450e9, 2e-6}, kH100Host},
    {"a100x4", a100Sfu, 4, {300e9, 2e-6}, kA100Host},
    {"a100x8", a100Sfu, 8, {300e9, 2e-6}, kA100Host},
    {"a100-40x4", a100Sfu40, 4, {300e9, 2e-6}, kA100Host},
    {"a100-40x8", a100Sfu40, 8, {300e9, 2e-6}, kA100Host},
    // CPU "devices" exchange data through shared memory (memcpy speed).
    {"cpu4", cpuCore, 4, {10e9, 1e-6}, kCpuHost},
    {"cpu8", cpuCore, 8, {10e9, 1e-6}, kCpuHost},
    // Nodes of the presets above joined by a network (see kNdrInfiniBand,
    // kLoopback): NVLink 4 inside a DGX H100, 8 NICs per node between.
    {"h100x8-2n", h100Sfu, 8, {450e9, 2e-6}, kH100Host, 2, 8, kNdrInfiniBand},
    {"h100x8-4n", h100Sfu, 8, {450e9, 2e-6}, kH100Host, 4, 8, kNdrInfiniBand},
    {"h100x8-8n", h100Sfu, 8, {450e9, 2e-6}, kH100Host, 8, 8, kNdrInfiniBand},
    {"cpu2-2n", cpuCore, 2, {10e9, 1e-6}, kCpuHost, 2, 1, kLoopback},
};

std::optional<FieldError> fieldError(const std::string &field,
                                     const std::string &message) {
  return FieldError{field, message};
}

} // namespace

bool detail::positiveFinite(const json &value) {
  return value.is_number() && std::isfinite(value.get<double>()) &&
         value.get<double>() > 0;
}

bool detail::nonNegativeFinite(const json &value) {
  return value.is_number() && std::isfinite(value.get<double>()) &&
         value.get<double>() >= 0;
}

using detail::nonNegativeFinite;
using detail::positiveFinite;

std::optional<FieldError> detail::parseDevice(const json &entry,
                                      const std::string &where,
                                      DeviceDescription &device,
                                      int64_t &count) {
  const auto &fail = fieldError;
  if (!entry.is_object())
    return fail(where, "expected an object");
  for (auto it = entry.begin(); it != entry.end(); ++it) {
    static const char *const known[] = {"name",
                                        "count",
                                        "peak_flops",
                                        "memory_bytes",
                                        "memory_bandwidth",
                                        "launch_overhead",
                                        "hand_off",
                                        "hand_off_bytes",
                                        "join_throughput",
                                        "kernels"};
    if (std::find(std::begin(known), std::end(known), it.key()) ==
        std::end(known))
      return fail(where + "." + it.key(),
                  "unknown field (expected name, count, peak_flops, "
                  "memory_bytes, memory_bandwidth, launch_overhead, "
                  "hand_off, hand_off_bytes, join_throughput, kernels)");
  }
  device.name = entry.value("name", json("device")).is_string()
                    ? entry.value("name", std::string("device"))
                    : std::string();
  if (entry.contains("name") && !entry["name"].is_string())
    return fail(where + ".name", "expected a string");
  count = 1;
  if (entry.contains("count")) {
    if (!entry["count"].is_number_integer() ||
        entry["count"].get<int64_t>() < 1 ||
        entry["count"].get<int64_t>() > kMaxDevices)
      return fail(where + ".count", "expected an integer in [1, " +
                                        std::to_string(kMaxDevices) + "]");
    count = entry["count"].get<int64_t>();
  }
  if (!entry.contains("peak_flops") || !entry["peak_flops"].is_object() ||
      entry["peak_flops"].empty())
    return fail(where + ".peak_flops",
                "expected an object of FLOP/s by element type, e.g. "
                "{\"f32\": 6.7e13}");
  for (auto it = entry["peak_flops"].begin(); it != entry["peak_flops"].end();
       ++it) {
    if (!positiveFinite(it.value()))
      return fail(where + ".peak_flops." + it.key(),
                  "expected a positive number");
    device.peakFlops[it.key()] = it.value().get<double>();
  }
  for (auto [field, target] :
       {std::pair<const char *, double *>{"memory_bytes", &device.memoryBytes},
        {"memory_bandwidth", &device.memoryBandwidth}}) {
    if (!entry.contains(field) || !positiveFinite(entry[field]))
      return fail(where + "." + field, "expected a positive number");
    *target = entry[field].get<double>();
  }
  if (entry.contains("launch_overhead")) {
    if (!nonNegativeFinite(entry["launch_overhead"]))
      return fail(where + ".launch_overhead",
                  "expected a non-negative number of seconds");
    device.launchOverhead = entry["launch_overhead"].get<double>();
  }
  if (entry.contains("hand_off")) {
    if (!nonNegativeFinite(entry["hand_off"]) ||
        entry["hand_off"].get<double>() > 1)
      return fail(where + ".hand_off",
                  "expected a number of seconds in [0, 1]");
    device.handOff = entry["hand_off"].get<double>();
  }
  if (entry.contains("hand_off_bytes")) {
    if (!nonNegativeFinite(entry["hand_off_bytes"]))
      return fail(where + ".hand_off_bytes",
                  "expected a non-negative number of bytes");
    device.handOffBytes = entry["hand_off_bytes"].get<double>();
  }
  if (entry.contains("join_throughput")) {
    const json &throughputs = entry["join_throughput"];
    if (!throughputs.is_object())
      return fail(where + ".join_throughput",
                  "expected an object of applications per second by join "
                  "kind, e.g. {\"exp\": 2e8}");
    for (auto it = throughputs.begin(); it != throughputs.end(); ++it) {
      std::optional<JoinKind> join = parseJoinKind(it.key());
      if (!join) {
        std::string names;
        for (unsigned k = 0; k < kNumJoinKinds; ++k)
          names += (k ? ", " : "") +
                   std::string(joinKindName(static_cast<JoinKind>(k)));
        return fail(where + ".join_throughput." + it.key(),
                    "unknown join kind (known: " + names + ")");
      }
      if (!positiveFinite(it.value()))
        return fail(where + ".join_throughput." + it.key(),
                    "expected a positive number of applications per "
                    "second");
      device.joinThroughput[static_cast<unsigned>(*join)] =
          it.value().get<double>();
    }
  }
  if (entry.contains("kernels"))
    if (auto error =
            parseKernelCosts(entry["kernels"], where + ".kernels",
                             device.kernels))
      return fail(error->first, error->second);
  return std::nullopt;
}

std::optional<FieldError>
detail::parseLinks(const json &object, const std::string &where,
                   size_t numDevices, std::vector<LinkDescription> &links) {
  const auto &fail = fieldError;
  if (!object.is_object())
    return fail(where, "expected an object with bandwidth and latency");
  for (auto it = object.begin(); it != object.end(); ++it)
    if (it.key() != "bandwidth" && it.key() != "latency")
      return fail(where + "." + it.key(),
                  "unknown field (expected bandwidth, latency)");
  links.assign(numDevices * numDevices, LinkDescription{});
  for (const char *field : {"bandwidth", "latency"}) {
    bool isBandwidth = std::string(field) == "bandwidth";
    if (!object.contains(field)) {
      if (isBandwidth)
        return fail(where + "." + field, "missing");
      continue; // latency defaults to 0
    }
    const json &value = object[field];
    auto valid = [&](const json &v) {
      return isBandwidth ? positiveFinite(v) : nonNegativeFinite(v);
    };
    const char *expectation =
        isBandwidth ? "expected a positive number" : "expected a non-negative number";
    auto set = [&](size_t from, size_t to, double v) {
      LinkDescription &link = links[from * numDevices + to];
      (isBandwidth ? link.bandwidth : link.latency) = v;
    };
    if (value.is_number()) {
      if (!valid(value))
        return fail(where + "." + field, expectation);
      for (size_t from = 0; from < numDevices; ++from)
        for (size_t to = 0; to < numDevices; ++to)
          set(from, to, value.get<double>());
      continue;
    }
    if (!value.is_array() || value.size() != numDevices)
      return fail(where + "." + field,
                  "expected a number or a " + std::to_string(numDevices) +
                      " x " + std::to_string(numDevices) + " matrix");
    for (size_t from = 0; from < numDevices; ++from) {
      std::string row = where + "." + field + "[" +
                        std::to_string(from) + "]";
      if (!value[from].is_array() || value[from].size() != numDevices)
        return fail(row, "expected a row of " + std::to_string(numDevices) +
                             " numbers");
      for (size_t to = 0; to < numDevices; ++to) {
        if (from == to)
          continue; // a device's link to itself is never used
        if (!valid(value[from][to]))
          return fail(row + "[" + std::to_string(to) + "]", expectation);
        set(from, to, value[from][to].get<double>());
      }
    }
  }
  return std::nullopt;
}
std::optional<FieldError>
detail::parseHost(const json &root,
                  const std::vector<DeviceDescription> &devices,
                  const std::vector<LinkDescription> &links,
                  const std::vector<int32_t> &nodeOf, HostDescription &host) {
  const auto &fail = fieldError;
  host = HostDescription{};
  if (!root.contains("host")) {
    double bandwidth = std::numeric_limits<double>::infinity(), latency = 0;
    size_t n = devices.size();
    for (size_t from = 0; from < n; ++from) {
      bandwidth = std::min(bandwidth, devices[from].memoryBandwidth / 2);
      for (size_t to = 0; to < n; ++to)
        if (from != to && (nodeOf.empty() || nodeOf[from] == nodeOf[to])) {
          bandwidth = std::min(bandwidth, links[from * n + to].bandwidth);
          latency = std::max(latency, links[from * n + to].latency);
        }
    }
    host.link = LinkDescription{bandwidth, latency};
    return std::nullopt;
  }
  const json &object = root["host"];
  if (!object.is_object())
    return fail("host", "expected an object with memory_bytes, "
                        "link_bandwidth and link_latency");
  for (auto it = object.begin(); it != object.end(); ++it)
    if (it.key() != "memory_bytes" && it.key() != "link_bandwidth" &&
        it.key() != "link_latency")
      return fail("host." + it.key(), "unknown field (expected memory_bytes, "
                                      "link_bandwidth, link_latency)");
  if (!object.contains("link_bandwidth") ||
      !positiveFinite(object["link_bandwidth"]))
    return fail("host.link_bandwidth",
                "expected a positive number of bytes per second");
  host.link.bandwidth = object["link_bandwidth"].get<double>();
  if (object.contains("link_latency")) {
    if (!nonNegativeFinite(object["link_latency"]))
      return fail("host.link_latency",
                  "expected a non-negative number of seconds");
    host.link.latency = object["link_latency"].get<double>();
  }
  if (object.contains("memory_bytes")) {
    if (!nonNegativeFinite(object["memory_bytes"]))
      return fail("host.memory_bytes",
                  "expected a non-negative number of bytes (0: unlimited)");
    host.memoryBytes = object["memory_bytes"].get<double>();
  }
  return std::nullopt;
}

double DeviceDescription::peakFor(const std::string &elementType) const {
  auto it = peakFlops.find(elementType);
  if (it != peakFlops.end())
    return it->second;
  it = peakFlops.find("default");
  if (it != peakFlops.end())
    return it->second;
  double smallest = std::numeric_limits<double>::infinity();
  for (const auto &entry : peakFlops)
    smallest = std::min(smallest, entry.second);
  return smallest;
}

const std::vector<std::string> &SystemDescription::presetNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> result;
    for (const Preset &preset : kPresets)
      result.push_back(preset.name);
    return result;
  }();
  return names;
}

std::optional<SystemDescription>
SystemDescription::preset(const std::string &name, std::string *error) {
  for (const Preset &preset : kPresets) {
    if (name != preset.name)
      continue;
    SystemDescription system;
    system.name_ = preset.name;
    const int32_t count = preset.count * preset.nodes;
    system.devices_.assign(count, preset.device());
    // With nodes, devices are numbered within their node ("node1/h100:3")
    // as a parsed description names them (makeNodes adds the node).
    for (int32_t d = 0; d < count; ++d)
      system.devices_[d].name += ":" + std::to_string(d % preset.count);
    system.links_.assign(static_cast<size_t>(count) * count, preset.link);
    system.host_ = preset.host;
    if (preset.nodes > 1)
      SystemNodes::makeNodes(system, preset.nodes, preset.count, preset.nics,
                             preset.network);
    return system;
  }
  std::string known;
  for (const std::string &n : presetNames())
    known += (known.empty() ? "" : ", ") + n;
  setError(error, "unknown system preset '" + name + "' (known: " + known +
                      "; or give a path to a JSON file)");
  return std::nullopt;
}

std::optional<SystemDescription>
SystemDescription::parseJson(const std::string &text,
                             const std::string &sourceName,
                             std::string *error) {
  json root = json::parse(text, nullptr, /*allow_exceptions=*/false);
  auto fail = [&](const std::string &field, const std::string &message) {
    setError(error, sourceName + ": " + field + ": " + message);
    return std::nullopt;
  };
  if (root.is_discarded())
    return fail("(document)", "not valid JSON");
  if (!root.is_object())
    return fail("(document)", "expected an object with \"devices\"");
  for (auto it = root.begin(); it != root.end(); ++it)
    if (it.key() != "name" && it.key() != "devices" && it.key() != "links" &&
        it.key() != "host" && it.key() != "nodes" && it.key() != "network")
      return fail(it.key(), "unknown field (expected name, devices, links, "
                            "host; or name, nodes, network, host)");

  SystemDescription system;
  if (root.contains("name")) {
    if (!root["name"].is_string())
      return fail("name", "expected a string");
    system.name_ = root["name"].get<std::string>();
  } else {
    system.name_ = sourceName;
  }

  if (root.contains("nodes")) {
    for (const char *flat : {"devices", "links"})
      if (root.contains(flat))
        return fail(flat, "not allowed with nodes (each node lists its "
                          "devices and links)");
    if (std::optional<FieldError> problem = SystemNodes::parse(root, system))
      return fail(problem->field, problem->message);
    if (std::optional<FieldError> problem = detail::parseHost(
            root, system.devices_, system.links_, SystemNodes::nodeIds(system),
            system.host_))
      return fail(problem->field, problem->message);
    return system;
  }
  if (root.contains("network"))
    return fail("network", "only with nodes (a flat description is one "
                           "node)");
  if (!root.contains("devices") || !root["devices"].is_array() ||
      root["devices"].empty())
    return fail("devices", "expected a non-empty array of devices");
  const json &devices = root["devices"];
  for (size_t i = 0; i < devices.size(); ++i) {
    std::string where = "devices[" + std::to_string(i) + "]";
    const json &entry = devices[i];
    DeviceDescription device;
    int64_t count = 1;
    if (std::optional<FieldError> problem =
            detail::parseDevice(entry, where, device, count))
      return fail(problem->field, problem->message);
    // The links are a D x D table: the total, not only each entry, is
    // capped (4096 devices: 256 MiB of links).
    if (static_cast<int64_t>(system.devices_.size()) + count > kMaxDevices)
      return fail(where + ".count",
                  "the system would have more than " +
                      std::to_string(kMaxDevices) + " devices");
    for (int64_t c = 0; c < count; ++c) {
      system.devices_.push_back(device);
      if (count > 1)
        system.devices_.back().name += ":" + std::to_string(c);
    }
  }

  size_t numDevices = system.devices_.size();
  if (!root.contains("links"))
    return fail("links", "missing (give {\"bandwidth\": B, \"latency\": L} "
                         "for all-to-all links, or D x D matrices)");
  const json &links = root["links"];
  if (std::optional<FieldError> problem =
          detail::parseLinks(links, "links", numDevices, system.links_))
    return fail(problem->field, problem->message);
  if (std::optional<FieldError> problem = detail::parseHost(
          root, system.devices_, system.links_, {}, system.host_))
    return fail(problem->field, problem->message);
  return system;
}

std::optional<SystemDescription>
SystemDescription::load(const std::string &presetOrPath, std::string *error) {
  for (const std::string &name : presetNames())
    if (name == presetOrPath)
      return preset(name, error);
  std::ifstream file(presetOrPath);
  if (!file) {
    std::string presetError;
    preset(presetOrPath, &presetError);
    setError(error, presetError + "; no file '" + presetOrPath + "' either");
    return std::nullopt;
  }
  file.close();
  std::optional<std::string> text = readFileCapped(presetOrPath, error);
  if (!text)
    return std::nullopt;
  return parseJson(*text, presetOrPath, error);
}

std::optional<SystemDescription>
SystemDescription::withDevices(int32_t count, std::string *error) const {
  if (count < 1 || count > numDevices()) {
    setError(error, "system '" + name_ + "' has " +
                        std::to_string(numDevices()) + " device(s); cannot use " +
                        std::to_string(count));
    return std::nullopt;
  }
  SystemDescription result;
  result.name_ = name_;
  result.devices_.assign(devices_.begin(), devices_.begin() + count);
  result.links_.resize(static_cast<size_t>(count) * count);
  for (int32_t from = 0; from < count; ++from)
    for (int32_t to = 0; to < count; ++to)
      result.links_[static_cast<size_t>(from) * count + to] = link(from, to);
  result.host_ = host_;
  if (hasNetwork())
    SystemNodes::keepFirstDevices(*this, count, result);
  return result;
}

double SystemDescription::computeCost(DeviceId d, double flops,
                                      double bytesMoved,
                                      const std::string &elementType) const {
  const DeviceDescription &device = devices_[d];
  double seconds = std::max(flops / device.peakFor(elementType),
                            bytesMoved / device.memoryBandwidth) +
                   device.launchOverhead;
  return seconds * kCostUnitsPerSecond;
}

double SystemDescription::computeCost(DeviceId d, double flops,
                                      double bytesMoved,
                                      const std::string &elementType,
                                      KernelKind kind,
                                      double gemmSize) const {
  const DeviceDescription &device = devices_[d];
  double seconds = std::max(flops / device.flopsFor(kind, elementType,
                                                    gemmSize),
                            bytesMoved / device.bandwidthFor(kind, gemmSize)) +
                   device.overheadFor(kind);
  return seconds * kCostUnitsPerSecond;
}

double SystemDescription::computeCost(DeviceId d, double flops,
                                      double bytesMoved,
                                      const std::string &elementType,
                                      JoinKind join,
                                      double joinApplications) const {
  return computeCost(d, flops, bytesMoved, elementType,
                     std::vector<JoinKind>{join}, joinApplications);
}

double SystemDescription::computeCost(DeviceId d, double flops,
                                      double bytesMoved,
                                      const std::string &elementType,
                                      const std::vector<JoinKind> &joins,
                                      double points,
                                      std::optional<KernelKind> kind) const {
  const DeviceDescription &device = devices_[d];
  // The listed joins' own FLOPs give way to their measured rates; the rest
  // (unlisted joins, an aggregation) still run at peak. Memory traffic
  // overlaps both.
  double listedFlops = 0, listedSeconds = 0;
  bool anyListed = false;
  if (points > 0)
    for (JoinKind join : joins) {
      double throughput = device.throughputOf(join);
      if (throughput <= 0)
        continue;
      anyListed = true;
      listedFlops += points * joinFlops(join);
      listedSeconds += points / throughput;
    }
  if (!anyListed)
    return kind ? computeCost(d, flops, bytesMoved, elementType, *kind)
                : computeCost(d, flops, bytesMoved, elementType);
  double otherFlops = std::max(0.0, flops - listedFlops);
  double seconds = std::max(otherFlops / device.peakFor(elementType) +
                                listedSeconds,
                            bytesMoved / device.memoryBandwidth) +
                   device.overheadFor(kind);
  return seconds * kCostUnitsPerSecond;
}

double SystemDescription::transferCost(DeviceId from, DeviceId to,
                                       double bytes) const {
  const LinkDescription &l = link(from, to);
  return (l.latency + bytes / l.bandwidth) * kCostUnitsPerSecond;
}

double SystemDescription::hostTransferCost(DeviceId d, double bytes) const {
  const LinkDescription &l = hostLink(d);
  return (l.latency + bytes / l.bandwidth) * kCostUnitsPerSecond;
}

double SystemDescription::worstTransferCost(DeviceId from,
                                            double bytes) const {
  double worst = 0;
  if (hasNetwork()) {
    const NodeDescription &node = nodes_[nodeOf(from)];
    if (node.numDevices > 1) {
      for (DeviceId to = node.firstDevice,
                    last = node.firstDevice + node.numDevices;
           to < last; ++to)
        if (to != from)
          worst = std::max(worst, transferCost(from, to, bytes));
      return worst;
    }
  }
  for (DeviceId to = 0; to < numDevices(); ++to)
    if (to != from)
      worst = std::max(worst, transferCost(from, to, bytes));
  return worst;
}

std::optional<System>
SystemDescription::handOffSystem(int32_t numDevices) const {
  SystemBuilder builder(numDevices);
  bool any = false;
  for (DeviceId d = 0; d < numDevices; ++d) {
    const DeviceDescription &device = devices_[d % this->numDevices()];
    builder.setHandOff(d, device.handOff * kCostUnitsPerSecond,
                       device.handOffBytes);
    any |= device.handOff > 0;
  }
  if (!any)
    return std::nullopt;
  return builder.build();
}

System SystemDescription::toSystem() const {
  SystemBuilder builder(numDevices());
  double reference = devices_[0].peakFor("f32");
  for (DeviceId d = 0; d < numDevices(); ++d) {
    builder.setSpeed(d, devices_[d].peakFor("f32") / reference);
    builder.setMemoryCapacity(d, devices_[d].memoryBytes);
    builder.setHandOff(d, devices_[d].handOff * kCostUnitsPerSecond,
                       devices_[d].handOffBytes);
    for (DeviceId to = 0; to < numDevices(); ++to)
      if (to != d)
        builder.setLink(d, to,
                        Link{link(d, to).bandwidth / kCostUnitsPerSecond,
                             link(d, to).latency * kCostUnitsPerSecond});
  }
  if (hasNetwork()) {
    std::vector<int32_t> nics;
    for (const NodeDescription &node : nodes_)
      nics.push_back(node.nics);
    builder.setNodes(SystemNodes::nodeIds(*this), std::move(nics),
                     Network{network_.bandwidth / kCostUnitsPerSecond,
                             network_.latency * kCostUnitsPerSecond});
  }
  // Every field was validated when this description was built.
  return *builder.build();
}

json detail::deviceJson(const DeviceDescription &device,
                        const std::string &name) {
  json entry;
  entry["name"] = name;
  entry["peak_flops"] = device.peakFlops;
  entry["memory_bytes"] = device.memoryBytes;
  entry["memory_bandwidth"] = device.memoryBandwidth;
  entry["launch_overhead"] = device.launchOverhead;
  if (device.handOff > 0)
    entry["hand_off"] = device.handOff;
  if (device.handOffBytes > 0)
    entry["hand_off_bytes"] = device.handOffBytes;
  json throughputs = json::object();
  for (unsigned k = 0; k < kNumJoinKinds; ++k)
    if (device.joinThroughput[k] > 0)
      throughputs[std::string(joinKindName(static_cast<JoinKind>(k)))] =
          device.joinThroughput[k];
  if (!throughputs.empty())
    entry["join_throughput"] = throughputs;
  json kernels = kernelCostsJson(device.kernels);
  if (!kernels.empty())
    entry["kernels"] = kernels;
  return entry;
}

std::string SystemDescription::toJson() const {
  json root;
  root["name"] = name_;
  if (!nodes_.empty()) {
    SystemNodes::toJson(*this, root);
    root["host"] = {{"memory_bytes", host_.memoryBytes},
                    {"link_bandwidth", host_.link.bandwidth},
                    {"link_latency", host_.link.latency}};
    return root.dump(2);
  }
  json devices = json::array();
  for (const DeviceDescription &device : devices_)
    devices.push_back(detail::deviceJson(device, device.name));
  root["devices"] = devices;
  json bandwidth = json::array(), latency = json::array();
  for (DeviceId from = 0; from < numDevices(); ++from) {
    json bandwidthRow = json::array(), latencyRow = json::array();
    for (DeviceId to = 0; to < numDevices(); ++to) {
      bandwidthRow.push_back(from == to ? 0.0 : link(from, to).bandwidth);
      latencyRow.push_back(from == to ? 0.0 : link(from, to).latency);
    }
    bandwidth.push_back(bandwidthRow);
    latency.push_back(latencyRow);
  }
  root["links"] = {{"bandwidth", bandwidth}, {"latency", latency}};
  root["host"] = {{"memory_bytes", host_.memoryBytes},
                  {"link_bandwidth", host_.link.bandwidth},
                  {"link_latency", host_.link.latency}};
  return root.dump(2);
}

} // namespace doppler::placement
