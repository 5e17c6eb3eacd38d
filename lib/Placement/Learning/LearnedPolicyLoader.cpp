//===- LearnedPolicyLoader.cpp - dlopen the learning library on demand ----===//
//
// No LibTorch here: this file is all a tool links to place with the learned
// policy. See LearnedPolicy.h for where the library is looked for.
//
//===----------------------------------------------------------------------===//

#include "Doppler/Placement/Learning/LearnedPolicy.h"
#include "Doppler/Placement/Learning/LearnedMoves.h"

#include "EntryTable.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>

using namespace doppler::placement;

namespace {

constexpr const char *kLibraryName = "libDopplerLearning.so";

struct LoadedLibrary {
  std::string path;
  const DopplerLearningEntryTable *table = nullptr;
  std::string error;
};

std::string directoryOf(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

std::string realPath(const char *path) {
  char buffer[PATH_MAX];
  return ::realpath(path, buffer) ? std::string(buffer) : std::string();
}

void addBesides(const std::string &binary, std::vector<std::string> &out) {
  if (binary.empty())
    return;
  std::string dir = directoryOf(binary);
  out.push_back(dir + "/../lib/" + kLibraryName);
  out.push_back(dir + "/" + kLibraryName);
}

/// Where to look, in order (LearnedPolicy.h).
std::vector<std::string> candidatePaths() {
  std::vector<std::string> paths;
  if (const char *forced = std::getenv("DOPPLER_LEARNING_LIBRARY");
      forced && *forced) {
    paths.push_back(forced);
    return paths;
  }
  // The binary or plugin holding this loader.
  Dl_info info;
  if (::dladdr(reinterpret_cast<void *>(&candidatePaths), &info) &&
      info.dli_fname && *info.dli_fname)
    addBesides(realPath(info.dli_fname), paths);
  addBesides(realPath("/proc/self/exe"), paths);
  paths.push_back(kLibraryName);
  // Drop repeats (the loader usually sits in the executable itself).
  std::vector<std::string> unique, keys;
  for (const std::string &p : paths) {
    std::string key = realPath(p.c_str());
    if (key.empty())
      key = p;
    if (std::find(keys.begin(), keys.end(), key) != keys.end())
      continue;
    keys.push_back(key);
    unique.push_back(p);
  }
  return unique;
}

LoadedLibrary loadLibrary() {
  LoadedLibrary loaded;
  std::string tried;
  for (const std::string &path : candidatePaths()) {
    if (!tried.empty())
      tried += "; ";
    if (path.find('/') != std::string::npos && ::access(path.c_str(), F_OK)) {
      tried += path + ": not found";
      continue;
    }
    void *handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char *reason = ::dlerror();
      tried += path + ": " + (reason ? reason : "dlopen failed");
      continue;
    }
    // The library stays loaded for the life of the process (LibTorch does
    // not support being unloaded).
    auto entry = reinterpret_cast<DopplerLearningEntryFunction>(
        ::dlsym(handle, DOPPLER_LEARNING_ENTRY_SYMBOL));
    const DopplerLearningEntryTable *table = entry ? entry() : nullptr;
    if (!table) {
      tried += path + ": no " + DOPPLER_LEARNING_ENTRY_SYMBOL;
      continue;
    }
    if (table->abiVersion != DOPPLER_LEARNING_ABI_VERSION ||
        table->graphObjectSize != sizeof(Graph)) {
      tried += path + ": built from different Doppler sources (ABI " +
               std::to_string(table->abiVersion) + ", expected " +
               std::to_string(DOPPLER_LEARNING_ABI_VERSION) + ")";
      continue;
    }
    loaded.path = path;
    loaded.table = table;
    return loaded;
  }
  loaded.error = std::string("learned policy unavailable: cannot load ") +
                 kLibraryName + " (tried " + tried +
                 "); set DOPPLER_LEARNING_LIBRARY to its path";
  return loaded;
}

const LoadedLibrary &library() {
  static const LoadedLibrary loaded = loadLibrary(); // once, thread safe
  return loaded;
}

} // namespace

std::optional<std::vector<DeviceId>> doppler::placement::placeWithLearnedPolicy(
    const Graph &graph, int32_t numDevices, const LearnedPolicyOptions &options,
    std::string *error) noexcept {
  if (numDevices < 1) {
    if (error)
      *error = "the device count must be at least 1, got " +
               std::to_string(numDevices);
    return std::nullopt;
  }
  if (options.samples < 0) {
    if (error)
      *error = "the sample count must not be negative";
    return std::nullopt;
  }
  if (!(options.samplingSeconds >= 0) || std::isinf(options.samplingSeconds)) {
    if (error)
      *error = "the sampling time must be finite and not negative";
    return std::nullopt;
  }
  if (!options.memoryCapacities.empty() &&
      options.memoryCapacities.size() != static_cast<size_t>(numDevices)) {
    if (error)
      *error = "expected " + std::to_string(numDevices) +
               " memory capacities, got " +
               std::to_string(options.memoryCapacities.size());
    return std::nullopt;
  }
  const LoadedLibrary &loaded = library();
  if (!loaded.table) {
    if (error)
      *error = loaded.error;
    return std::nullopt;
  }
  std::vector<DeviceId> assignment(graph.numNodes());
  char message[2048] = {0};
  if (!loaded.table->place(&graph, numDevices, options.modelPath.c_str(),
                           options.samples, options.seed,
                           options.samplingSeconds,
                           options.memoryCapacities.empty()
                               ? nullptr
                               : options.memoryCapacities.data(),
                           assignment.data(),
                           message, sizeof(message))) {
    if (error)
      *error = message;
    return std::nullopt;
  }
  return assignment;
}

bool doppler::placement::isLearnedPolicyAvailable(std::string *error) noexcept {
  const LoadedLibrary &loaded = library();
  if (!loaded.table && error)
    *error = loaded.error;
  return loaded.table != nullptr;
}

std::string doppler::placement::learnedPolicyLibraryPath() noexcept {
  return library().path;
}

const std::vector<std::string> &doppler::placement::placementPolicyNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all{std::string(kLearnedPolicyName),
                                 std::string(kLearnedMovesPolicyName)};
    const std::vector<std::string> &heuristics = heuristicPolicyNames();
    all.insert(all.end(), heuristics.begin(), heuristics.end());
    return all;
  }();
  return names;
}

std::optional<std::vector<DeviceId>> doppler::placement::placeWithNamedPolicy(
    std::string_view name, const Graph &graph, int32_t numDevices,
    const PolicyOptions &heuristic, const LearnedPolicyOptions &learned,
    std::string *error) {
  if (name == kLearnedPolicyName) {
    LearnedPolicyOptions options = learned;
    options.seed = heuristic.seed;
    return placeWithLearnedPolicy(graph, numDevices, options, error);
  }
  if (name == kLearnedMovesPolicyName)
    return placeWithLearnedMovesPolicy(graph, numDevices, heuristic, learned,
                                       error);
  const std::vector<std::string> &heuristics = heuristicPolicyNames();
  if (std::find(heuristics.begin(), heuristics.end(), name) ==
      heuristics.end()) {
    if (error) {
      *error = "unknown policy '" + std::string(name) + "' (known: ";
      const std::vector<std::string> &all = placementPolicyNames();
      for (size_t i = 0; i < all.size(); ++i)
        *error += (i ? ", " : "") + all[i];
      *error += ")";
    }
    return std::nullopt;
  }
  return placeWithPolicy(name, graph, numDevices, heuristic, error);
}
