//===- SystemNodes.cpp - Nodes and networks of system descriptions --------===//
//
// A description with nodes: each node a set of devices with its own links,
// nodes joined by a network of NICs (docs/SystemDescription.md). Parsing of
// "nodes" and "network", their JSON output, and what withDevices keeps.
//
//===----------------------------------------------------------------------===//

#include "SystemDescriptionInternal.h"

#include "Doppler/Support/Limits.h"

#include <algorithm>

namespace doppler::placement {
namespace {

using json = nlohmann::json;

std::optional<FieldError> fail(const std::string &field,
                               const std::string &message) {
  return FieldError{field, message};
}

/// One node entry: its devices (names not yet qualified), their links, its
/// NIC count and how many copies of it there are.
struct NodeEntry {
  std::string name = "node";
  int64_t count = 1;
  int32_t nics = 0;
  std::vector<DeviceDescription> devices;
  std::vector<LinkDescription> links; // devices x devices
};

/// Checks the node entry's field names and reads name, count and nics.
std::optional<FieldError> parseNodeHeader(const json &entry,
                                          const std::string &where,
                                          NodeEntry &node) {
  if (!entry.is_object())
    return fail(where, "expected an object with devices, links and nics");
  for (auto it = entry.begin(); it != entry.end(); ++it) {
    static const char *const known[] = {"name", "count", "devices", "links",
                                        "nics"};
    if (std::find(std::begin(known), std::end(known), it.key()) ==
        std::end(known))
      return fail(where + "." + it.key(),
                  "unknown field (expected name, count, devices, links, "
                  "nics)");
  }
  if (entry.contains("name")) {
    if (!entry["name"].is_string())
      return fail(where + ".name", "expected a string");
    node.name = entry["name"].get<std::string>();
  }
  if (entry.contains("count")) {
    const json &count = entry["count"];
    if (!count.is_number_integer() || count.get<int64_t>() < 1 ||
        count.get<int64_t>() > kMaxDevices)
      return fail(where + ".count", "expected an integer in [1, " +
                                        std::to_string(kMaxDevices) + "]");
    node.count = count.get<int64_t>();
  }
  const json *nics = entry.contains("nics") ? &entry["nics"] : nullptr;
  if (!nics || !nics->is_number_integer() || nics->get<int64_t>() < 1 ||
      nics->get<int64_t>() > kMaxDevices)
    return fail(where + ".nics", "expected a positive integer (at most " +
                                     std::to_string(kMaxDevices) + ")");
  node.nics = static_cast<int32_t>(nics->get<int64_t>());
  return std::nullopt;
}

/// Reads the node entry at `where` ("nodes[i]"); `total` is the number of
/// devices read so far (the whole system is capped at kMaxDevices).
std::optional<FieldError> parseNode(const json &entry, const std::string &where,
                                    int64_t total, NodeEntry &node) {
  if (std::optional<FieldError> problem = parseNodeHeader(entry, where, node))
    return problem;
  if (!entry.contains("devices") || !entry["devices"].is_array() ||
      entry["devices"].empty())
    return fail(where + ".devices", "expected a non-empty array of devices");
  const json &devices = entry["devices"];
  for (size_t i = 0; i < devices.size(); ++i) {
    std::string at = where + ".devices[" + std::to_string(i) + "]";
    DeviceDescription device;
    int64_t count = 1;
    if (std::optional<FieldError> problem =
            detail::parseDevice(devices[i], at, device, count))
      return problem;
    int64_t size = static_cast<int64_t>(node.devices.size()) + count;
    if (total + size * node.count > kMaxDevices)
      return fail(at + ".count", "the system would have more than " +
                                     std::to_string(kMaxDevices) + " devices");
    for (int64_t c = 0; c < count; ++c) {
      node.devices.push_back(device);
      if (count > 1)
        node.devices.back().name += ":" + std::to_string(c);
    }
  }
  if (!entry.contains("links")) {
    if (node.devices.size() > 1)
      return fail(where + ".links",
                  "missing (give {\"bandwidth\": B, \"latency\": L} for the "
                  "node's devices, or matrices of its size)");
    node.links.assign(1, LinkDescription{});
    return std::nullopt;
  }
  return detail::parseLinks(entry["links"], where + ".links",
                            node.devices.size(), node.links);
}

std::optional<FieldError> parseNetwork(const json &root,
                                       NetworkDescription &network) {
  if (!root.contains("network"))
    return fail("network", "missing (give {\"bandwidth\": B, \"latency\": "
                           "L}: bytes/s and seconds of one NIC)");
  const json &object = root["network"];
  if (!object.is_object())
    return fail("network", "expected an object with bandwidth and latency");
  for (auto it = object.begin(); it != object.end(); ++it)
    if (it.key() != "bandwidth" && it.key() != "latency")
      return fail("network." + it.key(),
                  "unknown field (expected bandwidth, latency)");
  if (!object.contains("bandwidth") ||
      !detail::positiveFinite(object["bandwidth"]))
    return fail("network.bandwidth",
                "expected a positive number of bytes per second per NIC");
  network.bandwidth = object["bandwidth"].get<double>();
  if (object.contains("latency")) {
    if (!detail::nonNegativeFinite(object["latency"]))
      return fail("network.latency",
                  "expected a non-negative number of seconds");
    network.latency = object["latency"].get<double>();
  }
  return std::nullopt;
}

} // namespace

std::optional<FieldError> SystemNodes::parse(const json &root,
                                             SystemDescription &system) {
  const json &nodes = root["nodes"];
  if (!nodes.is_array() || nodes.empty())
    return fail("nodes", "expected a non-empty array of nodes");
  NetworkDescription network;
  std::vector<NodeDescription> described;
  std::vector<NodeEntry> entries;
  int64_t total = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    NodeEntry entry;
    if (std::optional<FieldError> problem = parseNode(
            nodes[i], "nodes[" + std::to_string(i) + "]", total, entry))
      return problem;
    total += static_cast<int64_t>(entry.devices.size()) * entry.count;
    entries.push_back(std::move(entry));
  }
  if (std::optional<FieldError> problem = parseNetwork(root, network))
    return problem;

  const size_t numDevices = static_cast<size_t>(total);
  system.devices_.clear();
  system.links_.assign(numDevices * numDevices, LinkDescription{});
  for (const NodeEntry &entry : entries) {
    for (int64_t copy = 0; copy < entry.count; ++copy) {
      NodeDescription node;
      node.name = entry.name;
      if (entry.count > 1)
        node.name += ":" + std::to_string(copy);
      node.firstDevice = static_cast<DeviceId>(system.devices_.size());
      node.numDevices = static_cast<int32_t>(entry.devices.size());
      node.nics = entry.nics;
      const size_t first = node.firstDevice, size = entry.devices.size();
      for (const DeviceDescription &device : entry.devices) {
        system.devices_.push_back(device);
        system.devices_.back().name = node.name + "/" + device.name;
      }
      for (size_t from = 0; from < size; ++from)
        for (size_t to = 0; to < size; ++to)
          system.links_[(first + from) * numDevices + first + to] =
              entry.links[from * size + to];
      described.push_back(std::move(node));
    }
  }
  system.setNodes(std::move(described), network);
  return std::nullopt;
}

void SystemNodes::toJson(const SystemDescription &system, json &root) {
  json nodes = json::array();
  for (const NodeDescription &node : system.nodes()) {
    json devices = json::array();
    json bandwidth = json::array(), latency = json::array();
    for (int32_t i = 0; i < node.numDevices; ++i) {
      const DeviceDescription &device = system.device(node.firstDevice + i);
      // Names are written as the node's entry holds them.
      std::string name = device.name;
      if (name.rfind(node.name + "/", 0) == 0)
        name = name.substr(node.name.size() + 1);
      devices.push_back(detail::deviceJson(device, name));
      json bandwidthRow = json::array(), latencyRow = json::array();
      for (int32_t j = 0; j < node.numDevices; ++j) {
        const LinkDescription &link =
            system.link(node.firstDevice + i, node.firstDevice + j);
        bandwidthRow.push_back(i == j ? 0.0 : link.bandwidth);
        latencyRow.push_back(i == j ? 0.0 : link.latency);
      }
      bandwidth.push_back(bandwidthRow);
      latency.push_back(latencyRow);
    }
    nodes.push_back({{"name", node.name},
                     {"nics", node.nics},
                     {"devices", devices},
                     {"links", {{"bandwidth", bandwidth}, {"latency", latency}}}});
  }
  root["nodes"] = nodes;
  root["network"] = {{"bandwidth", system.network().bandwidth},
                     {"latency", system.network().latency}};
}

void SystemNodes::keepFirstDevices(const SystemDescription &system,
                                   int32_t count, SystemDescription &result) {
  std::vector<NodeDescription> kept;
  for (const NodeDescription &node : system.nodes()) {
    if (node.firstDevice >= count)
      break;
    kept.push_back(node);
    kept.back().numDevices =
        std::min(node.numDevices, count - node.firstDevice);
  }
  // result's links are already the original's (network links included).
  result.setNodes(std::move(kept), system.network());
}

std::vector<int32_t> SystemNodes::nodeIds(const SystemDescription &system) {
  std::vector<int32_t> ids;
  if (system.nodes().empty())
    return ids;
  ids.resize(system.numDevices());
  for (int32_t n = 0; n < system.numNodes(); ++n) {
    const NodeDescription &node = system.nodes()[n];
    std::fill(ids.begin() + node.firstDevice,
              ids.begin() + node.firstDevice + node.numDevices, n);
  }
  return ids;
}

void SystemNodes::makeNodes(SystemDescription &system, int32_t count,
                            int32_t perNode, int32_t nics,
                            NetworkDescription network) {
  std::vector<NodeDescription> nodes;
  for (int32_t n = 0; n < count; ++n) {
    nodes.push_back({"node" + std::to_string(n), n * perNode, perNode, nics});
    for (int32_t d = n * perNode; d < (n + 1) * perNode; ++d)
      system.devices_[d].name = nodes.back().name + "/" + system.devices_[d].name;
  }
  system.setNodes(std::move(nodes), network);
}

void SystemDescription::setNodes(std::vector<NodeDescription> nodes,
                                 NetworkDescription network) {
  // One node is a flat system: nothing to remember.
  if (nodes.size() <= 1) {
    nodes_.clear();
    network_ = {};
    return;
  }
  nodes_ = std::move(nodes);
  network_ = network;
  const std::vector<int32_t> ids = SystemNodes::nodeIds(*this);
  const size_t n = devices_.size();
  for (size_t from = 0; from < n; ++from)
    for (size_t to = 0; to < n; ++to)
      if (ids[from] != ids[to])
        links_[from * n + to] = {network_.bandwidth, network_.latency};
}

int32_t SystemDescription::nodeOf(DeviceId d) const {
  for (int32_t n = 0; n < static_cast<int32_t>(nodes_.size()); ++n)
    if (d < nodes_[n].firstDevice + nodes_[n].numDevices)
      return n;
  return 0;
}

} // namespace doppler::placement
