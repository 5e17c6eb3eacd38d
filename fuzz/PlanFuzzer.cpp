//===- PlanFuzzer.cpp - Fuzz target: the runtime plan reader --------------===//
//
// doppler-fuzz-plan: the input is a runtime plan (the JSON format of
// runtime/include/doppler/runtime/Plan.h that doppler-run-plan reads).
// Reading builds its task graph through the TaskGraph builders. A plan that
// reads must verify, read back from its own JSON to the same JSON, and, when
// small (at most 4 devices, 1 MiB of tensors and 1 ms of emulated waits), run on
// the CPU backend from seeded arguments as doppler-run-plan runs it.
//
//===----------------------------------------------------------------------===//

#include "doppler/runtime/CpuBackend.h"
#include "doppler/runtime/Executor.h"
#include "doppler/runtime/Plan.h"
#include "doppler/runtime/Types.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

using namespace doppler::runtime;

namespace {

constexpr int kMaxRunDevices = 4;
constexpr uint64_t kMaxRunBytes = uint64_t(1) << 20;
constexpr double kMaxRunWaitSeconds = 1e-3;

[[noreturn]] void fail(const std::string &message) {
  std::fprintf(stderr, "doppler-fuzz-plan: %s\n", message.c_str());
  std::abort();
}

/// One executor for every input (its worker threads are started once).
Executor &executor() {
  static Executor *instance = [] {
    CpuBackendOptions options;
    options.numDevices = kMaxRunDevices;
    options.cachedBytesPerDevice = kMaxRunBytes;
    options.pinComputeWorkers = false;
    Result<std::unique_ptr<Backend>> backend = createCpuBackend(options);
    if (!backend)
      fail("cannot create the CPU backend: " + backend.message());
    ExecutorOptions executorOptions;
    executorOptions.idleSpinMicroseconds = 0;
    return new Executor(std::move(*backend), executorOptions);
  }();
  return *instance;
}

/// Small enough to run in a millisecond or so: few bytes, and tasks that
/// wait (delays, transfers of a fixed duration) wait 1 ms at most together.
bool worthRunning(const Plan &plan) {
  if (plan.graph.numDevicesUsed() > kMaxRunDevices)
    return false;
  uint64_t bytes = 0;
  double waits = 0;
  for (ValueId id = 0; id < plan.graph.size(); ++id) {
    const Task &task = plan.graph.task(id);
    if ((task.kind == TaskKind::Delay || task.kind == TaskKind::Transfer) &&
        task.seconds > 0 && (waits += task.seconds) > kMaxRunWaitSeconds)
      return false;
    uint64_t size = plan.graph.byteSize(id);
    if (size > kMaxRunBytes || (bytes += size) > kMaxRunBytes)
      return false;
  }
  for (const PlanArgument &argument : plan.arguments) {
    uint64_t size = byteSize(argument.shape, argument.type);
    if (size > kMaxRunBytes || (bytes += size) > kMaxRunBytes)
      return false;
  }
  return true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  Result<Plan> plan = planFromJson(text, "fuzz.json");
  if (!plan) {
    if (plan.message().empty())
      fail("rejected without an error");
    return 0;
  }
  if (Status status = plan->verify(); !status)
    fail("a plan that reads does not verify: " + status.message());

  std::string json = planToJson(*plan);
  Result<Plan> again = planFromJson(json, "fuzz.json (written)");
  if (!again)
    fail("its own JSON does not read back: " + again.message() + "\n" + json);
  if (planToJson(*again) != json)
    fail("planToJson does not round-trip:\n" + json);

  if (!worthRunning(*plan))
    return 0;
  Result<HostArguments> arguments = makeSeededArguments(plan->arguments, 1);
  if (!arguments)
    return 0;
  Result<RunResult> run =
      executor().run(plan->graph, bindArguments(*plan, *arguments));
  if (!run)
    return 0;
  Result<std::vector<HostTensor>> results = collectResults(*plan, *run);
  if (!results)
    fail("a run that succeeded has no results: " + results.message());
  for (size_t i = 0; i < results->size(); ++i)
    (void)describeOutput(i, (*results)[i]);
  return 0;
}
