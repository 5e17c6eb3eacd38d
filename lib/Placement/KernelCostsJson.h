//===- KernelCostsJson.h - A device's "kernels" table as JSON ---*- C++ -*-===//
//
// Private to lib/Placement: SystemDescription's device reader and writer.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_LIB_PLACEMENT_KERNELCOSTSJSON_H
#define DOPPLER_LIB_PLACEMENT_KERNELCOSTSJSON_H

#include "Doppler/Placement/KernelCosts.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <utility>

namespace doppler::placement {

/// Reads `object`, the "kernels" table at `where` ("devices[0].kernels"),
/// into `table`; on error, the field and the message.
std::optional<std::pair<std::string, std::string>>
parseKernelCosts(const nlohmann::json &object, const std::string &where,
                 KernelCostTable &table);

/// The table's given entries; an empty object when none is.
nlohmann::json kernelCostsJson(const KernelCostTable &table);

} // namespace doppler::placement

#endif // DOPPLER_LIB_PLACEMENT_KERNELCOSTSJSON_H
