//===- System.cpp - Devices and links a placement targets -----------------===//

#include "Doppler/Placement/System.h"

#include "Doppler/Support/Limits.h"
#include "Doppler/Support/NumberFormat.h"

#include <algorithm>
#include <charconv>
#include <cmath>

using namespace doppler::placement;
using doppler::formatShortest;

namespace {

std::string deviceRange(int32_t numDevices) {
  return "[0, " + std::to_string(numDevices) + ")";
}

constexpr double kUnlimited = std::numeric_limits<double>::infinity();

} // namespace

System System::uniform(int32_t numDevices) {
  std::optional<System> system = SystemBuilder(numDevices).build();
  // A bad count is a caller bug here; degrade to one device rather than
  // leave an unusable object behind in builds without assertions.
  return system ? *system : *SystemBuilder(1).build();
}

bool System::hasNonUnitSpeeds() const {
  return std::any_of(speed_.begin(), speed_.end(),
                     [](double s) { return s != 1.0; });
}

bool System::hasMemoryLimits() const {
  return std::any_of(memory_.begin(), memory_.end(),
                     [](double m) { return m != kUnlimited; });
}

bool System::hasHandOffs() const {
  return std::any_of(handOff_.begin(), handOff_.end(),
                     [](double h) { return h != 0.0; });
}

SystemBuilder::SystemBuilder(int32_t numDevices) : numDevices_(numDevices) {
  if (numDevices_ < 1)
    return; // reported by build()
  speed_.assign(numDevices_, 1.0);
  memory_.assign(numDevices_, kUnlimited);
  handOff_.assign(numDevices_, 0.0);
  handOffBytes_.assign(numDevices_, 0.0);
  links_.assign(static_cast<size_t>(numDevices_) * numDevices_, Link{});
}

// Setters record the first problem and let build() report it, so calls can
// be chained without checking each one.
bool SystemBuilder::knownDevice(DeviceId d) {
  if (d >= 0 && d < numDevices_)
    return true;
  if (setterError_.empty())
    setterError_ = "device " + std::to_string(d) + " out of range " +
                   deviceRange(numDevices_);
  return false;
}

SystemBuilder &SystemBuilder::setSpeed(DeviceId d, double speed) {
  if (!knownDevice(d))
    return *this;
  speed_[d] = speed;
  return *this;
}

SystemBuilder &SystemBuilder::setSpeeds(std::vector<double> speeds) {
  if (static_cast<int64_t>(speeds.size()) != numDevices_) {
    if (setterError_.empty())
      setterError_ = "expected " + std::to_string(numDevices_) +
                     " speeds, got " + std::to_string(speeds.size());
    return *this;
  }
  speed_ = std::move(speeds);
  return *this;
}

SystemBuilder &SystemBuilder::setMemoryCapacity(DeviceId d, double bytes) {
  if (!knownDevice(d))
    return *this;
  memory_[d] = bytes;
  return *this;
}

SystemBuilder &SystemBuilder::setMemoryCapacities(std::vector<double> bytes) {
  if (static_cast<int64_t>(bytes.size()) != numDevices_) {
    if (setterError_.empty())
      setterError_ = "expected " + std::to_string(numDevices_) +
                     " memory capacities, got " + std::to_string(bytes.size());
    return *this;
  }
  memory_ = std::move(bytes);
  return *this;
}

SystemBuilder &SystemBuilder::setHandOff(DeviceId d, double time,
                                         double bytes) {
  if (!knownDevice(d))
    return *this;
  handOff_[d] = time;
  handOffBytes_[d] = bytes;
  return *this;
}

SystemBuilder &SystemBuilder::setUniformLink(Link link) {
  std::fill(links_.begin(), links_.end(), link);
  return *this;
}

SystemBuilder &SystemBuilder::setLink(DeviceId from, DeviceId to, Link link) {
  for (DeviceId d : {from, to})
    if (!knownDevice(d))
      return *this;
  if (from == to) {
    if (setterError_.empty())
      setterError_ = "link " + std::to_string(from) + " -> " +
                     std::to_string(to) + ": a device has no link to itself";
    return *this;
  }
  links_[static_cast<size_t>(from) * numDevices_ + to] = link;
  return *this;
}

SystemBuilder &SystemBuilder::setNodes(std::vector<int32_t> nodeOf,
                                       std::vector<int32_t> nics,
                                       Network network) {
  nodeOf_ = std::move(nodeOf);
  nics_ = std::move(nics);
  network_ = network;
  return *this;
}

namespace {

/// The node grouping's first problem ("" when valid).
std::string nodeProblem(int32_t numDevices, const std::vector<int32_t> &nodeOf,
                        const std::vector<int32_t> &nics,
                        const Network &network) {
  if (static_cast<int64_t>(nodeOf.size()) != numDevices)
    return "expected " + std::to_string(numDevices) + " node ids, got " +
           std::to_string(nodeOf.size());
  const int32_t numNodes = static_cast<int32_t>(nics.size());
  std::vector<char> used(nics.size(), 0);
  for (DeviceId d = 0; d < numDevices; ++d) {
    if (nodeOf[d] < 0 || nodeOf[d] >= numNodes)
      return "device " + std::to_string(d) + ": node " +
             std::to_string(nodeOf[d]) + " out of range " +
             deviceRange(numNodes);
    used[nodeOf[d]] = 1;
  }
  for (int32_t n = 0; n < numNodes; ++n) {
    if (!used[n])
      return "node " + std::to_string(n) + " has no devices";
    if (nics[n] < 1 || nics[n] > doppler::kMaxDevices)
      return "node " + std::to_string(n) + ": NIC count " +
             std::to_string(nics[n]) + " out of range [1, " +
             std::to_string(doppler::kMaxDevices) + "]";
  }
  if (!(network.bandwidth > 0))
    return "network: bandwidth " + formatShortest(network.bandwidth) +
           " is not positive";
  if (!std::isfinite(network.latency) || network.latency < 0)
    return "network: latency " + formatShortest(network.latency) +
           " is negative or not finite";
  return {};
}

} // namespace

std::optional<System> SystemBuilder::build(std::string *error) const {
  auto fail = [&](std::string message) -> std::optional<System> {
    if (error)
      *error = std::move(message);
    return std::nullopt;
  };
  if (numDevices_ < 1)
    return fail("device count " + std::to_string(numDevices_) +
                " is less than 1");
  if (!setterError_.empty())
    return fail(setterError_);
  // Nodes are optional: without setNodes (or with one node) nothing below
  // changes, so flat systems stay exactly as they were.
  const bool grouped = !nodeOf_.empty() || !nics_.empty();
  if (grouped) {
    std::string problem = nodeProblem(numDevices_, nodeOf_, nics_, network_);
    if (!problem.empty())
      return fail(problem);
  }
  for (DeviceId d = 0; d < numDevices_; ++d) {
    // `!(x > 0)` also rejects NaN.
    if (!(speed_[d] > 0) || !std::isfinite(speed_[d]))
      return fail("device " + std::to_string(d) + ": speed " +
                  formatShortest(speed_[d]) +
                  " is not a positive finite number");
    if (std::isnan(memory_[d]) || memory_[d] < 0)
      return fail("device " + std::to_string(d) + ": memory capacity " +
                  formatShortest(memory_[d]) + " is negative or not a number");
    if (!std::isfinite(handOff_[d]) || handOff_[d] < 0)
      return fail("device " + std::to_string(d) + ": hand-off " +
                  formatShortest(handOff_[d]) + " is negative or not finite");
    if (!std::isfinite(handOffBytes_[d]) || handOffBytes_[d] < 0)
      return fail("device " + std::to_string(d) + ": hand-off bytes " +
                  formatShortest(handOffBytes_[d]) +
                  " is negative or not finite");
  }
  for (DeviceId from = 0; from < numDevices_; ++from) {
    for (DeviceId to = 0; to < numDevices_; ++to) {
      if (from == to)
        continue;
      const Link &link = links_[static_cast<size_t>(from) * numDevices_ + to];
      // (The message is built only on failure: D^2 strings took seconds at
      // D = 4096.)
      auto where = [&] {
        return "link " + std::to_string(from) + " -> " + std::to_string(to) +
               ": ";
      };
      if (!(link.bandwidth > 0))
        return fail(where() + "bandwidth " + formatShortest(link.bandwidth) +
                    " is not positive");
      if (!std::isfinite(link.latency) || link.latency < 0)
        return fail(where() + "latency " + formatShortest(link.latency) +
                    " is negative or not finite");
    }
  }
  System system;
  system.numDevices_ = numDevices_;
  system.speed_ = speed_;
  system.memory_ = memory_;
  system.handOff_ = handOff_;
  system.handOffBytes_ = handOffBytes_;
  system.links_ = links_;
  if (grouped && nics_.size() > 1) {
    system.nodeOf_ = nodeOf_;
    system.nics_ = nics_;
    system.network_ = network_;
    system.firstNic_.assign(nics_.size() + 1, 0);
    for (size_t n = 0; n < nics_.size(); ++n)
      system.firstNic_[n + 1] = system.firstNic_[n] + nics_[n];
    for (DeviceId from = 0; from < numDevices_; ++from)
      for (DeviceId to = 0; to < numDevices_; ++to)
        if (nodeOf_[from] != nodeOf_[to])
          system.links_[static_cast<size_t>(from) * numDevices_ + to] =
              Link{network_.bandwidth, network_.latency};
  }
  return system;
}
