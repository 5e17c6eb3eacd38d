//===- SystemDescription.h - Hardware for the cost model --------*- C++ -*-===//
//
// What the cost model needs to know about a machine: per device its peak
// FLOP/s per element type, optional throughputs of expensive joins (exp,
// silu, ...), memory size and bandwidth and kernel launch overhead; per
// ordered device pair a link bandwidth and latency; optionally nodes
// (machines, each a set of devices with its links) joined by a network of
// NICs (per-NIC bandwidth and latency, NICs per node). Comes from
// a built-in preset (figures from the vendors' data sheets) or a JSON file.
// MLIR-free; errors never throw.
//
// Cost units: the cost model expresses every time in microseconds, so
// costs, simulated start/end times and makespans of MLIR-costed graphs read
// as microseconds.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_PLACEMENT_SYSTEMDESCRIPTION_H
#define DOPPLER_PLACEMENT_SYSTEMDESCRIPTION_H

#include "Doppler/Placement/KernelCosts.h"
#include "Doppler/Placement/System.h"
#include "Doppler/Support/EinsumSpec.h"

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace doppler::placement {

/// Microseconds per second: cost units of the cost model.
constexpr double kCostUnitsPerSecond = 1e6;

struct DeviceDescription {
  std::string name;
  /// Peak FLOP/s by element type name ("f64", "f32", "f16", "bf16", ...);
  /// "default" applies to types not listed. At least one entry.
  std::map<std::string, double> peakFlops;
  double memoryBytes = 0;
  /// Bytes per second between the device and its memory.
  double memoryBandwidth = 0;
  /// Fixed time per kernel, in seconds.
  double launchOverhead = 0;
  /// Seconds a task pays before it starts when the device sat idle waiting
  /// for it (its last input came from a task on the same device), beyond
  /// the overheads, which are a task's that was already queued when the
  /// device became free (System::handOff; 0: every task pays the same).
  double handOff = 0;
  /// Output bytes of the task before at which handOff is paid in full; a
  /// task after a smaller one pays that share (0: in full after any).
  double handOffBytes = 0;
  /// Applications per second of each join's scalar function (index =
  /// JoinKind), 0 where not given. A roofline counts exp or silu as a few
  /// FLOPs, but a CPU evaluates them 10x or more slower than its GEMM peak
  /// suggests; a listed join is charged applications / throughput instead.
  std::array<double, kNumJoinKinds> joinThroughput{};

  /// Peak FLOP/s for `elementType`, falling back to "default", then to the
  /// smallest listed figure.
  double peakFor(const std::string &elementType) const;
  /// Per kind of task, its fixed time and its kernel's FLOP rate where
  /// measured (KernelCosts.h); kinds not given keep launchOverhead and the
  /// peak.
  KernelCostTable kernels{};

  /// The join's throughput, or 0 when the device does not list it.
  double throughputOf(JoinKind join) const {
    return joinThroughput[static_cast<unsigned>(join)];
  }
  /// Seconds of fixed time per task of `kind` (launchOverhead when the
  /// table does not give it; that too without a kind).
  double overheadFor(std::optional<KernelKind> kind) const {
    if (kind && kernels[static_cast<unsigned>(*kind)].hasOverhead())
      return kernels[static_cast<unsigned>(*kind)].overhead;
    return launchOverhead;
  }
  /// FLOP/s of `kind`'s kernel for `elementType` (the peak when the table
  /// does not give it), for a task whose size (KernelCost::halfSize) is
  /// `gemmSize` (0: unknown).
  double flopsFor(std::optional<KernelKind> kind,
                  const std::string &elementType, double gemmSize = 0) const {
    if (!kind)
      return peakFor(elementType);
    const KernelCost &cost = kernels[static_cast<unsigned>(*kind)];
    return cost.rateAt(cost.hasFlops() ? cost.flops : peakFor(elementType),
                       gemmSize);
  }
  /// Bytes per second a task of `kind` streams at: the kind's
  /// gemv_bandwidth for a matrix-vector product (a contraction or
  /// convolution of size 0; KernelCost::gemvBandwidth), else
  /// memoryBandwidth.
  double bandwidthFor(std::optional<KernelKind> kind, double gemmSize) const {
    if (kind && gemmSize <= 0 &&
        (*kind == KernelKind::Contraction || *kind == KernelKind::Conv)) {
      const KernelCost &cost = kernels[static_cast<unsigned>(*kind)];
      if (cost.gemvBandwidth > 0)
        return cost.gemvBandwidth;
    }
    return memoryBandwidth;
  }
};

struct LinkDescription {
  /// Bytes per second.
  double bandwidth = 0;
  /// Seconds.
  double latency = 0;
};

/// Host memory: where offloaded tensors wait (issue 17's evictions and
/// reloads), and the link each device has to it.
struct HostDescription {
  /// Bytes of host memory for offloaded tensors; 0 means unlimited.
  double memoryBytes = 0;
  /// Device <-> host link, both directions (e.g. PCIe for a GPU).
  LinkDescription link;
};

/// The network between nodes.
struct NetworkDescription {
  /// Bytes per second of one NIC, each way.
  double bandwidth = 0;
  /// Seconds: the fixed time of a message between nodes.
  double latency = 0;
};

/// A node (one machine): devices [firstDevice, firstDevice + numDevices).
struct NodeDescription {
  std::string name;
  DeviceId firstDevice = 0;
  int32_t numDevices = 0;
  /// NICs, shared by the node's devices for their cross-node transfers.
  int32_t nics = 1;
};

class SystemDescription {
public:
  /// Names of the built-in presets: h100x4, h100x8, a100x4, cpu4 ...,
  /// and the multi-node h100x8-2n, h100x8-4n, cpu2-2n.
  static const std::vector<std::string> &presetNames();
  /// A built-in preset by name. Error: "unknown system preset 'x' (known:
  /// ...)".
  static std::optional<SystemDescription> preset(const std::string &name,
                                                 std::string *error = nullptr);
  /// Parses the JSON format (docs/SystemDescription.md): flat ("devices",
  /// "links": one node) or with nodes ("nodes", "network"). Errors name the
  /// field: "system.json: devices[1].memory_bandwidth: expected a positive
  /// number", "system.json: nodes[1].nics: expected a positive integer (at
  /// most 4096)".
  static std::optional<SystemDescription>
  parseJson(const std::string &text, const std::string &sourceName,
            std::string *error = nullptr);
  /// A preset name, or else a path to a JSON file.
  static std::optional<SystemDescription>
  load(const std::string &presetOrPath, std::string *error = nullptr);

  /// The same system with its first `count` devices (links kept). With
  /// nodes, each kept device stays in its node; nodes left without devices
  /// are dropped (so count <= the first node's size gives a one-node
  /// system), NIC counts and the network are kept. Fails if count is out of
  /// [1, numDevices()].
  std::optional<SystemDescription> withDevices(int32_t count,
                                               std::string *error) const;

  const std::string &name() const { return name_; }
  int32_t numDevices() const { return static_cast<int32_t>(devices_.size()); }
  const DeviceDescription &device(DeviceId d) const { return devices_[d]; }
  /// Between devices of different nodes: the network's per-NIC bandwidth
  /// and latency.
  const LinkDescription &link(DeviceId from, DeviceId to) const {
    return links_[static_cast<size_t>(from) * devices_.size() + to];
  }

  /// Nodes: 1 for a flat description.
  int32_t numNodes() const {
    return nodes_.empty() ? 1 : static_cast<int32_t>(nodes_.size());
  }
  /// True with two or more nodes.
  bool hasNetwork() const { return nodes_.size() > 1; }
  /// The nodes (empty for a flat description, which is one node).
  const std::vector<NodeDescription> &nodes() const { return nodes_; }
  /// The node of device `d` (0 for a flat description).
  int32_t nodeOf(DeviceId d) const;
  /// The network between nodes (zeros for a flat description).
  const NetworkDescription &network() const { return network_; }
  /// Host memory and the devices' link to it. From the JSON's "host" object
  /// or the preset; when a JSON file has none: unlimited host memory and,
  /// for the link, the slowest of the device links and half the smallest
  /// device memory bandwidth (a copy reads and writes), with the largest
  /// link latency (docs/SystemDescription.md).
  const HostDescription &host() const { return host_; }
  /// The link between device `d` and host memory.
  const LinkDescription &hostLink(DeviceId d) const {
    (void)d;
    return host_.link;
  }
  /// Bytes of host memory for offloaded tensors (0: unlimited).
  double hostMemoryBytes() const { return host_.memoryBytes; }
  /// Time to move `bytes` between device `d` and the host, in cost units.
  double hostTransferCost(DeviceId d, double bytes) const;

  /// Roofline time of a kernel on `d`, in cost units: max(flops / peak,
  /// bytes / memory bandwidth) + launch overhead.
  double computeCost(DeviceId d, double flops, double bytesMoved,
                     const std::string &elementType) const;
  /// The same for a task of `kind`: the device's figures for that kind
  /// (DeviceDescription::kernels) replace the peak and the launch overhead
  /// where given; `gemmSize` is the task's size (KernelCost::halfSize: a
  /// GEMM's smaller output side, or a depthwise convolution's or a pool's
  /// output positions per channel; 0: unknown).
  double computeCost(DeviceId d, double flops, double bytesMoved,
                     const std::string &elementType, KernelKind kind,
                     double gemmSize = 0) const;
  /// The same for a kernel that applies `join` `joinApplications` times,
  /// `flops` including joinFlops(join) for each application (as
  /// estimateEinsumWork counts them). Where the device lists a throughput
  /// for the join, those FLOPs are replaced by joinApplications / throughput
  /// seconds; otherwise this equals the overload above.
  double computeCost(DeviceId d, double flops, double bytesMoved,
                     const std::string &elementType, JoinKind join,
                     double joinApplications) const;
  /// The same for a fused elementwise kernel that applies every join of
  /// `joins` (one entry per step, repeats counted) once at each of `points`
  /// points, `flops` including joinFlops of every step per point (as
  /// estimateFusedWork counts them). Each listed join costs points /
  /// throughput seconds, the others' FLOPs run at peak; the sum overlaps
  /// with the memory time of `bytesMoved`. One join equals the overload
  /// above.
  double computeCost(DeviceId d, double flops, double bytesMoved,
                     const std::string &elementType,
                     const std::vector<JoinKind> &joins, double points,
                     std::optional<KernelKind> kind = std::nullopt) const;
  /// Time to move `bytes` from `from` to `to`, in cost units: latency +
  /// bytes / bandwidth. (The slowest link when from == to is meaningless;
  /// callers use it for "to any other device": see averageTransferCost.)
  double transferCost(DeviceId from, DeviceId to, double bytes) const;
  /// Transfer cost over the slowest link leaving `from` (the cost a
  /// placement must assume before it knows the destination). With nodes:
  /// the slowest link to another device of `from`'s node (the network
  /// only when that node has no other device), since the simulator prices
  /// each cross-node transfer itself from its bytes; flat: all links.
  double worstTransferCost(DeviceId from, double bytes) const;

  /// The simulator's view: speeds relative to device 0 (by f32 peak),
  /// memory capacities, links in bytes per cost unit, nodes and network.
  System toSystem() const;
  /// `numDevices` devices with this description's hand-offs (device d
  /// beyond the description: d mod N's) and nothing else, for the
  /// simulator's hand-off mode (SimulatorOptions::handOff); nullopt when no
  /// device has a hand-off (the reference schedule then applies).
  std::optional<System> handOffSystem(int32_t numDevices) const;
  /// Serialises to the JSON format (round-trips through parseJson).
  std::string toJson() const;

private:
  friend struct SystemNodes; // SystemNodes.cpp: parsing and presets of nodes
  /// Groups the devices into `nodes` (consecutive, covering every device)
  /// joined by `network`, and sets every cross-node link to the network's.
  void setNodes(std::vector<NodeDescription> nodes, NetworkDescription network);

  std::string name_;
  std::vector<DeviceDescription> devices_;
  std::vector<LinkDescription> links_; // D x D, row = source; diagonal unused
  HostDescription host_;
  std::vector<NodeDescription> nodes_; // empty: flat (one node)
  NetworkDescription network_;
};

} // namespace doppler::placement

#endif // DOPPLER_PLACEMENT_SYSTEMDESCRIPTION_H
