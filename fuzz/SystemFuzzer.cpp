//===- SystemFuzzer.cpp - Fuzz target: the system description reader -----===//
//
// doppler-fuzz-system: the input is a system description (the JSON format
// of docs/SystemDescription.md that --system takes). A description that
// parses must round-trip (toJson, then parseJson again, gives the same
// text), give its first device alone (withDevices(1)), convert to the
// simulator's view, and give costs that are numbers and not negative.
//
//===----------------------------------------------------------------------===//

#include "Doppler/Placement/System.h"
#include "Doppler/Placement/SystemDescription.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace doppler::placement;

namespace {

[[noreturn]] void fail(const std::string &message) {
  std::fprintf(stderr, "doppler-fuzz-system: %s\n", message.c_str());
  std::abort();
}

void checkCost(double cost, const char *what) {
  if (std::isnan(cost) || cost < 0)
    fail(std::string(what) + " cost " + std::to_string(cost));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  std::string error;
  std::optional<SystemDescription> system =
      SystemDescription::parseJson(text, "fuzz.json", &error);
  if (!system) {
    if (error.empty())
      fail("rejected without an error");
    return 0;
  }
  if (system->numDevices() < 1)
    fail("accepted a system without devices");

  std::string json = system->toJson();
  std::optional<SystemDescription> again =
      SystemDescription::parseJson(json, "fuzz.json (written)", &error);
  if (!again)
    fail("its own JSON does not read back: " + error + "\n" + json);
  if (again->toJson() != json)
    fail("toJson does not round-trip:\n" + json + "\n" + again->toJson());

  if (!system->withDevices(1, &error))
    fail("withDevices(1): " + error);
  System simulated = system->toSystem();
  (void)simulated;

  // Costs on the first few devices (a system may have thousands).
  int32_t devices = std::min<int32_t>(system->numDevices(), 4);
  for (int32_t d = 0; d < devices; ++d) {
    for (const char *type : {"f32", "f16", "bf16", "f64", "i8"}) {
      checkCost(system->computeCost(d, 1e9, 1e6, type), "compute");
      checkCost(system->computeCost(d, 0, 0, type), "compute");
    }
    for (int32_t to = 0; to < devices; ++to)
      if (to != d)
        checkCost(system->transferCost(d, to, 1e6), "transfer");
    checkCost(system->worstTransferCost(d, 1e6), "worst transfer");
  }
  return 0;
}
