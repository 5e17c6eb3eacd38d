//===- OffloadInternal.h - What the offload planner's files share -*- C++ -*-===//
//
// Offload.cpp checks plans and rewrites and simulates graphs with their
// evictions and reloads; OffloadPlanner.cpp searches for a plan (candidate
// orders, evictions, the descent). These are the pieces both use.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_LIB_PLACEMENT_OFFLOADINTERNAL_H
#define DOPPLER_LIB_PLACEMENT_OFFLOADINTERNAL_H

#include "Doppler/Placement/Offload.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace doppler::placement::offload_detail {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

/// Whether `ids` is strictly ascending.
bool isAscending(const std::vector<NodeId> &ids);
/// Empty when the graph, system, assignment and options suit offload
/// planning; otherwise why not.
std::string checkOptions(const Graph &graph, const System &system,
                         ArrayView<DeviceId> assignment,
                         const OffloadOptions &options);
/// Empty when eviction `index` is valid (marking its node in `evicted`);
/// otherwise why not.
std::string checkEviction(const Graph &graph, ArrayView<DeviceId> assignment,
                          int32_t numDevices, const Eviction &eviction,
                          size_t index, std::vector<uint8_t> &evicted);
/// Device `d`'s resident bytes (0 when none are given).
double residentOf(const OffloadOptions &options, DeviceId d);
/// The system of the rewritten graph: the input devices (with `capacities`)
/// and the host H last, unlimited, joined to each device by its host link.
std::optional<System> offloadSystem(const System &system,
                                    const std::vector<double> &capacities,
                                    const OffloadOptions &options,
                                    std::string *error);
/// Each device's capacity less its resident bytes (at least 0): what the
/// enforcing simulation may fill.
std::vector<double> enforcedCapacities(const System &system,
                                       const OffloadOptions &options);
/// simulateOffloadPlan on an already rewritten graph; `limited` is
/// offloadSystem with enforcedCapacities.
OffloadSimulation simulateRewritten(OffloadGraph offload,
                                    const std::vector<double> &priority,
                                    const System &system,
                                    const System &limited,
                                    const OffloadOptions &options);
/// The planner's search (OffloadPlanner.cpp), on checked options.
OffloadPlan runOffloadPlanner(const Graph &graph, const System &system,
                              ArrayView<DeviceId> assignment,
                              const OffloadOptions &options);

} // namespace doppler::placement::offload_detail

#endif // DOPPLER_LIB_PLACEMENT_OFFLOADINTERNAL_H
