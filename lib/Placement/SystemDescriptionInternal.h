//===- SystemDescriptionInternal.h - Shared JSON readers --------*- C++ -*-===//
//
// The readers SystemDescription.cpp (flat descriptions) and SystemNodes.cpp
// (descriptions with nodes) share. Private to lib/Placement.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_LIB_PLACEMENT_SYSTEMDESCRIPTIONINTERNAL_H
#define DOPPLER_LIB_PLACEMENT_SYSTEMDESCRIPTIONINTERNAL_H

#include "Doppler/Placement/SystemDescription.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace doppler::placement {

/// Where a system description is wrong ("devices[0].count") and how.
struct FieldError {
  std::string field;
  std::string message;
};

namespace detail {

bool positiveFinite(const nlohmann::json &value);
bool nonNegativeFinite(const nlohmann::json &value);

/// Reads `entry`, the device description at `where` ("devices[i]"), into
/// `device`, and how many of it there are into `count`.
std::optional<FieldError> parseDevice(const nlohmann::json &entry,
                                      const std::string &where,
                                      DeviceDescription &device,
                                      int64_t &count);

/// Reads the links object at `where` ("links", "nodes[1].links") into
/// `links` (numDevices x numDevices, row by sending device).
std::optional<FieldError> parseLinks(const nlohmann::json &object,
                                     const std::string &where,
                                     size_t numDevices,
                                     std::vector<LinkDescription> &links);

/// Reads the optional "host" object into `host`; without one, derives the
/// host link from the devices and the links between devices of one node
/// (`nodeOf`: per device, or empty for one node).
std::optional<FieldError> parseHost(const nlohmann::json &root,
                                    const std::vector<DeviceDescription> &devices,
                                    const std::vector<LinkDescription> &links,
                                    const std::vector<int32_t> &nodeOf,
                                    HostDescription &host);

/// One device as the JSON format writes it, named `name`.
nlohmann::json deviceJson(const DeviceDescription &device,
                          const std::string &name);

} // namespace detail

/// Nodes and networks (SystemNodes.cpp): what SystemDescription needs
/// beyond a flat list of devices.
struct SystemNodes {
  /// Reads "nodes" and "network" of `root` into `system`'s devices, links,
  /// nodes and network.
  static std::optional<FieldError> parse(const nlohmann::json &root,
                                         SystemDescription &system);
  /// Writes `system`'s devices as "nodes" and "network" into `root`.
  static void toJson(const SystemDescription &system, nlohmann::json &root);
  /// The nodes of `system`'s first `count` devices (see withDevices).
  static void keepFirstDevices(const SystemDescription &system, int32_t count,
                               SystemDescription &result);
  /// Per device, its node (empty for a flat system).
  static std::vector<int32_t> nodeIds(const SystemDescription &system);
  /// Groups `system`'s devices into `count` nodes ("node0", ...) of `perNode`
  /// devices each, prefixing the device names with the node's.
  static void makeNodes(SystemDescription &system, int32_t count,
                        int32_t perNode, int32_t nics,
                        NetworkDescription network);
};

} // namespace doppler::placement

#endif // DOPPLER_LIB_PLACEMENT_SYSTEMDESCRIPTIONINTERNAL_H
