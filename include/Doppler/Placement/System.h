//===- System.h - Devices and links a placement targets ---------*- C++ -*-===//
//
// A description of the machine a graph is placed on: how many devices, how
// fast each one computes relative to the graph's costs, how much memory each
// holds, and the links between every ordered device pair. Devices may be
// grouped into nodes (machines) joined by a network of NICs: a node's
// cross-node transfers share its NICs (the simulator's network model,
// docs/SystemDescription.md). The reference semantics (METHOD section 2)
// use only the device count; the other fields feed the simulator's extended
// modes. MLIR-free; errors never throw.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_PLACEMENT_SYSTEM_H
#define DOPPLER_PLACEMENT_SYSTEM_H

#include "Doppler/Placement/Graph.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace doppler::placement {

/// A directed link between two devices.
struct Link {
  /// Bytes per cost unit of time. Infinite by default, meaning "no byte
  /// model": transfers then take the graph's edge cost.
  double bandwidth = std::numeric_limits<double>::infinity();
  /// Fixed time added to every transfer over this link (in the byte model).
  double latency = 0;
};

/// The network between nodes: every NIC carries one transfer at a time at
/// `bandwidth` (bytes per cost unit) after `latency` (cost units).
struct Network {
  double bandwidth = std::numeric_limits<double>::infinity();
  double latency = 0;
};

/// Immutable once built; cheap to copy for small device counts.
class System {
public:
  /// `numDevices` identical devices (speed 1, unlimited memory) joined all to
  /// all by identical default links. Precondition: numDevices >= 1 (use
  /// SystemBuilder to get an error instead).
  static System uniform(int32_t numDevices);

  int32_t numDevices() const { return numDevices_; }

  /// Relative compute speed: node v runs for c(v) / speed(d) on device d.
  double speed(DeviceId d) const { return speed_[d]; }
  const std::vector<double> &speeds() const { return speed_; }
  /// True when some device's speed differs from 1.
  bool hasNonUnitSpeeds() const;

  /// Memory capacity in bytes (infinity when unlimited).
  double memoryCapacity(DeviceId d) const { return memory_[d]; }
  const std::vector<double> &memoryCapacities() const { return memory_; }
  bool hasMemoryLimits() const;

  /// The hand-off on device `d`, in cost units: the time a node pays before
  /// it starts when the device sat idle waiting for it (it became ready by
  /// the end of its last input's producer on the same device, with nothing
  /// else queued there), beyond what a node queued when the device became
  /// free pays (SimulatorOptions::handOff). 0 by default.
  double handOff(DeviceId d) const { return handOff_[d]; }
  /// The output bytes of the node that ran before at which the hand-off on
  /// device `d` is paid in full: a node after a smaller one pays that
  /// share (0: in full after any node).
  double handOffBytes(DeviceId d) const { return handOffBytes_[d]; }
  /// True when some device's hand-off is not 0.
  bool hasHandOffs() const;

  /// The link from `from` to `to` (from != to). Between devices of
  /// different nodes: the network's figures (one NIC, uncontended).
  const Link &link(DeviceId from, DeviceId to) const {
    return links_[static_cast<size_t>(from) * numDevices_ + to];
  }

  /// Nodes: 1 unless SystemBuilder::setNodes grouped the devices.
  int32_t numNodes() const {
    return nics_.empty() ? 1 : static_cast<int32_t>(nics_.size());
  }
  /// True when the devices span two or more nodes (the simulator then
  /// models the network; see SimulatorOptions).
  bool hasNetwork() const { return numNodes() > 1; }
  /// The node of device `d` (0 with one node).
  int32_t nodeOf(DeviceId d) const { return nodeOf_.empty() ? 0 : nodeOf_[d]; }
  bool sameNode(DeviceId a, DeviceId b) const { return nodeOf(a) == nodeOf(b); }
  /// NICs of node `n`, shared by its devices' cross-node transfers.
  int32_t nics(int32_t n) const { return nics_.empty() ? 0 : nics_[n]; }
  /// All nodes' NICs, numbered node by node: node n's are
  /// [firstNic(n), firstNic(n) + nics(n)). 0 with one node.
  int32_t numNics() const { return firstNic(numNodes()); }
  int32_t firstNic(int32_t n) const {
    return firstNic_.empty() ? 0 : firstNic_[n];
  }
  const Network &network() const { return network_; }

private:
  friend class SystemBuilder;
  int32_t numDevices_ = 0;
  std::vector<int32_t> nodeOf_; // per device; empty: one node
  std::vector<int32_t> nics_;   // per node; empty: one node
  std::vector<int32_t> firstNic_; // per node + 1: prefix sums of nics_
  Network network_;
  std::vector<double> speed_;
  std::vector<double> memory_;
  std::vector<double> handOff_, handOffBytes_;
  std::vector<Link> links_; // numDevices_ x numDevices_, row = source
};

/// Collects a system description, then validates it.
class SystemBuilder {
public:
  explicit SystemBuilder(int32_t numDevices);

  /// Speed factor of one device, or of all devices at once.
  SystemBuilder &setSpeed(DeviceId d, double speed);
  SystemBuilder &setSpeeds(std::vector<double> speeds);
  /// Memory capacity in bytes of one device, or of all.
  SystemBuilder &setMemoryCapacity(DeviceId d, double bytes);
  SystemBuilder &setMemoryCapacities(std::vector<double> bytes);
  /// The hand-off of one device (cost units, >= 0; System::handOff) and
  /// the bytes at which it is paid in full (System::handOffBytes).
  SystemBuilder &setHandOff(DeviceId d, double time, double bytes = 0);
  /// The same link for every ordered pair of distinct devices.
  SystemBuilder &setUniformLink(Link link);
  /// The link from `from` to `to` only.
  SystemBuilder &setLink(DeviceId from, DeviceId to, Link link);
  /// Groups the devices into nodes: `nodeOf` (one entry per device, node
  /// ids 0..N-1, each used) and `nics` (N entries, each >= 1) joined by
  /// `network`. The links between devices of different nodes become the
  /// network's (bandwidth, latency) at build(), replacing any set before.
  SystemBuilder &setNodes(std::vector<int32_t> nodeOf, std::vector<int32_t> nics,
                          Network network);

  /// Validates and builds. Errors (one line, no trailing period), e.g.
  /// "device count 0 is less than 1", "expected 4 speeds, got 3",
  /// "device 2: speed 0 is not a positive finite number",
  /// "device 1: memory capacity -5 is negative or not a number",
  /// "device 0: hand-off -1 is negative or not finite",
  /// "device 0: hand-off bytes -1 is negative or not finite",
  /// "link 0 -> 3: bandwidth 0 is not positive",
  /// "link 1 -> 1: a device has no link to itself",
  /// "device 7 out of range [0, 4)", "expected 4 node ids, got 3",
  /// "device 2: node 5 out of range [0, 2)", "node 1 has no devices",
  /// "node 0: NIC count 0 out of range [1, 4096]",
  /// "network: bandwidth 0 is not positive".
  std::optional<System> build(std::string *error = nullptr) const;

private:
  /// Whether `d` is one of the devices; records the error if not.
  bool knownDevice(DeviceId d);
  int32_t numDevices_;
  std::vector<double> speed_;
  std::vector<double> memory_;
  std::vector<double> handOff_, handOffBytes_;
  std::vector<Link> links_;
  std::vector<int32_t> nodeOf_, nics_;
  Network network_;
  // The first problem found by a setter (reported by build()).
  std::string setterError_;
};

} // namespace doppler::placement

#endif // DOPPLER_PLACEMENT_SYSTEM_H
